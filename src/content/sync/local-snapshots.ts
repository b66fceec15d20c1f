// Snapshots on this node's disk (reference 1.5.4): the packaged ones shipped with the product
// (`<kind>.zip` and `manifest.json`), and per consumer the "stable" one, the last archive that
// was loaded in full, kept so that a failed remote load can fall back to known-good content.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { strToU8, zipSync } from 'fflate'
import { basename, dirname, join } from 'node:path'
import { t, type Static } from 'elysia'
import { Value } from '@sinclair/typebox/value'
import type { ConsumerDef } from './consumers'
import { SAMPLE_IOCS, SAMPLE_MANIFEST, SAMPLE_RULESET } from './sample/content'

export const ManifestEntry = t.Object({
  name: t.String(),
  context: t.String(),
  type: t.Optional(t.String()),
  resource: t.String(),
  is_public: t.Optional(t.Boolean()),
  remote_offset: t.Optional(t.Integer({ minimum: 0 })),
})
export type ManifestEntry = Static<typeof ManifestEntry>

/** Names of in-progress downloads (see `download`). */
const DOWNLOAD = /^\.[a-z]+\.download-\d+-\d+\.zip$/

/** The packaged sample's archive of a consumer, built from the sample content (undefined: none). */
function sampleArchive(kind: ConsumerDef['kind']): Uint8Array | undefined {
  const lines = kind === 'ruleset' ? SAMPLE_RULESET : kind === 'iocs' ? SAMPLE_IOCS : undefined
  if (!lines) return undefined
  return zipSync({ [`${kind}.json`]: strToU8(lines.map((l) => JSON.stringify(l)).join('\n') + '\n') })
}

export class LocalSnapshots {
  /**
   * `samples`: a consumer that never loaded anything and has no packaged snapshot of its own gets
   * the sample content shipped with svc-ext as its packaged snapshot (the spec's packaged-snapshot
   * fallback), so a fresh install without a CTI API has working content. Once any load succeeded
   * the consumer has a stable snapshot and the sample is never offered again.
   */
  constructor(
    readonly dir: string,
    private readonly samples = false,
  ) {}

  private sampleApplies(def: ConsumerDef): boolean {
    return (
      this.samples &&
      !existsSync(this.path(def.snapshotFile)) &&
      !existsSync(this.path(`${def.kind}.stable.zip`)) &&
      !!sampleArchive(def.kind)
    )
  }

  private path(name: string): string {
    return join(this.dir, name)
  }

  packaged(def: ConsumerDef): string | undefined {
    const p = this.path(def.snapshotFile)
    if (this.sampleApplies(def)) {
      mkdirSync(this.dir, { recursive: true })
      writeFileSync(`${p}.tmp-${process.pid}`, sampleArchive(def.kind)!)
      renameSync(`${p}.tmp-${process.pid}`, p)
    }
    return existsSync(p) ? p : undefined
  }

  stable(def: ConsumerDef): string | undefined {
    const p = this.path(`${def.kind}.stable.zip`)
    return existsSync(p) ? p : undefined
  }

  /** The manifest entry of a consumer's packaged snapshot; undefined when absent or malformed. */
  manifest(def: ConsumerDef): ManifestEntry | undefined {
    if (this.sampleApplies(def)) return SAMPLE_MANIFEST[def.snapshotFile as keyof typeof SAMPLE_MANIFEST]
    try {
      const all = JSON.parse(readFileSync(this.path('manifest.json'), 'utf8')) as Record<string, unknown>
      const entry = all?.[def.snapshotFile]
      return Value.Check(ManifestEntry, entry) ? entry : undefined
    } catch {
      return undefined
    }
  }

  /** Where a remote snapshot is downloaded to before it is loaded. */
  download(def: ConsumerDef): string {
    mkdirSync(this.dir, { recursive: true })
    return this.path(`.${def.kind}.download-${process.pid}-${Date.now()}.zip`)
  }

  /** A downloaded archive being loaded, kept until its load ends so an interrupted load can go on. */
  loading(def: ConsumerDef): string | undefined {
    const p = this.path(`${def.kind}.loading.zip`)
    return existsSync(p) ? p : undefined
  }

  /** Moves a finished download to the loading name; returns that path. */
  keepLoading(def: ConsumerDef, downloaded: string): string {
    const p = this.path(`${def.kind}.loading.zip`)
    renameSync(downloaded, p)
    return p
  }

  /** An archive loaded in full becomes the stable one (atomic rename; the previous one is replaced). */
  promote(def: ConsumerDef, file: string): void {
    const target = this.path(`${def.kind}.stable.zip`)
    if (file === target) return
    mkdirSync(this.dir, { recursive: true })
    // A packaged archive is consumed by its promotion (upstream moves it too).
    renameSync(file, target)
  }

  deletePackaged(def: ConsumerDef): void {
    rmSync(this.path(def.snapshotFile), { force: true })
  }

  discard(file: string): void {
    rmSync(file, { force: true })
  }

  /**
   * Removes what a killed process left behind: partial snapshot downloads here and partial
   * exports next to `exportPath`. Run once at start-up, before any pass of this process.
   */
  sweep(exportPath?: string): string[] {
    const removed: string[] = []
    const clean = (dir: string, match: (name: string) => boolean) => {
      let names: string[]
      try {
        names = readdirSync(dir)
      } catch {
        return // no directory yet: nothing was left
      }
      for (const name of names.filter(match)) {
        rmSync(join(dir, name), { force: true })
        removed.push(join(dir, name))
      }
    }
    clean(this.dir, (n) => DOWNLOAD.test(n))
    if (exportPath) {
      const prefix = `${basename(exportPath)}.tmp-`
      clean(dirname(exportPath), (n) => n.startsWith(prefix))
    }
    return removed
  }
}

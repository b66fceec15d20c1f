// Content in and out of air-gapped nodes (issue 15 item 9). `export` writes the standard space
// (and optionally the IoCs and vulnerabilities) as one snapshot ZIP in the CTI snapshot format:
// root-level NDJSON entries of change-shaped lines, one entry per content type, plus the consumers'
// identities in `meta/manifest.json` (a sub-directory, which snapshot loaders ignore). `import`
// checks such a ZIP and installs it as the packaged snapshot of every consumer it holds content
// for, with its manifest entry, and sets those consumers back to offset 0: the next sync pass
// (at start, or `POST /_plugins/_content_manager/update`) loads it exactly as it loads any snapshot,
// into staging indices swapped in whole, so readers never see an empty or half-loaded set.
// Everything streams: pages by `_seq_no` out, a streamed ZIP on disk; memory does not grow with the
// content.
import { copyFileSync, createWriteStream, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Unzip, UnzipInflate, Zip, ZipDeflate } from 'fflate'
import type { Store } from '../../store/port'
import { CONTENT_ALIASES, type ContentKind } from '../../setup/indices'
import { isObject } from '../repository'
import { CONSUMER_KINDS, CONSUMERS, type ConsumerKind } from './consumers'
import { IOC_SUMMARY_ID } from './ioc-post-sync'
import type { ManifestEntry } from './local-snapshots'
import { ConsumerStates } from './state'

/** Payload `type` of each content kind in a snapshot line (reference 1.5.2). */
const TYPE_OF: Record<ContentKind, string> = {
  filters: 'filter',
  decoders: 'decoder',
  rules: 'rule',
  kvdbs: 'kvdb',
  integrations: 'integration',
  policies: 'policy',
  enrichments: 'ioc',
  vulnerabilities: 'vulnerability',
}
const PAGE = 1000
const MANIFEST_ENTRY = 'meta/manifest.json'

export interface ExportOptions {
  iocs?: boolean
  vulnerabilities?: boolean
}

export interface ExportResult {
  file: string
  documents: Partial<Record<ContentKind, number>>
}

/** Pages of one index in `_seq_no` order (linear on every backend), without totals. */
async function* pages(
  store: Store,
  index: string,
  query: Record<string, unknown>,
): AsyncGenerator<Array<{ _id: string; _source?: Record<string, unknown> }>> {
  let after: unknown[] | undefined
  for (;;) {
    const r = await store.search({
      index,
      expand_wildcards: 'all',
      body: {
        query,
        sort: [{ _seq_no: { order: 'asc' } }],
        track_total_hits: false,
        size: PAGE,
        ...(after ? { search_after: after } : {}),
      },
    })
    const hits = r.hits.hits
    if (hits.length > 0) yield hits
    if (hits.length < PAGE) return
    after = hits[hits.length - 1].sort
  }
}

/** One snapshot line for a stored document (the CVE feed's payload is the document itself). */
function line(kind: ContentKind, id: string, source: Record<string, unknown>): string | undefined {
  const document = source.document
  if (!isObject(document) && !Array.isArray(document)) return undefined
  const offset = typeof source.offset === 'number' ? source.offset : 0
  const payload =
    kind === 'vulnerabilities'
      ? document
      : { type: TYPE_OF[kind], document, ...(kind === 'enrichments' ? {} : { space: { name: 'standard' } }) }
  return JSON.stringify({ resource: id, offset, payload })
}

export async function exportSnapshot(store: Store, out: string, opts: ExportOptions = {}): Promise<ExportResult> {
  const consumers: ConsumerKind[] = [
    'ruleset',
    ...(opts.iocs ? (['iocs'] as const) : []),
    ...(opts.vulnerabilities ? (['vulnerabilities'] as const) : []),
  ]
  const tmp = `${out}.tmp-${process.pid}`
  const file = createWriteStream(tmp)
  let failure: Error | undefined
  const zip = new Zip((err, chunk, final) => {
    if (err) failure = err
    else if (!file.write(chunk) && !final) zipBackpressure = new Promise((res) => file.once('drain', res))
    if (final) file.end()
  })
  let zipBackpressure: Promise<unknown> | undefined
  const closed = new Promise<void>((res, rej) => file.once('close', res).once('error', rej))
  const documents: ExportResult['documents'] = {}
  const states = new ConsumerStates(store)
  const manifest: Record<string, ManifestEntry & { remote_offset: number }> = {}
  try {
    for (const consumer of consumers) {
      const def = CONSUMERS[consumer]
      const state = await states.read(def)
      if (state) {
        manifest[def.snapshotFile] = {
          name: state.name,
          context: state.context,
          type: state.type,
          resource: state.resource,
          is_public: state.is_public,
          remote_offset: state.local_offset,
        }
      }
      for (const kind of def.indices) {
        const entry = new ZipDeflate(`${TYPE_OF[kind]}.json`, { level: 6 })
        zip.add(entry)
        const query =
          consumer === 'ruleset' ? { term: { 'space.name': 'standard' } } : { bool: { must_not: [{ ids: { values: [IOC_SUMMARY_ID] } }] } }
        let n = 0
        for await (const hits of pages(store, CONTENT_ALIASES[kind], query)) {
          let text = ''
          for (const h of hits) {
            const l = line(kind, h._id, h._source ?? {})
            if (l) {
              text += l + '\n'
              n++
            }
          }
          entry.push(new TextEncoder().encode(text))
          if (failure) throw failure
          if (zipBackpressure) await zipBackpressure.then(() => (zipBackpressure = undefined))
        }
        entry.push(new Uint8Array(0), true)
        documents[kind] = n
      }
    }
    const meta = new ZipDeflate(MANIFEST_ENTRY)
    zip.add(meta)
    meta.push(new TextEncoder().encode(JSON.stringify(manifest, null, 2)), true)
    zip.end()
    await closed
    if (failure) throw failure
    renameSync(tmp, out)
    return { file: out, documents }
  } catch (e) {
    file.destroy()
    rmSync(tmp, { force: true })
    throw e
  }
}

export interface ImportResult {
  /** Consumers whose packaged snapshot is now this archive. */
  consumers: ConsumerKind[]
  lines: number
}

export class ImportError extends Error {
  override name = 'ImportError'
}

/** Reads the archive once (streamed): which consumers it feeds, and its manifest. */
async function inspect(file: string): Promise<{ kinds: Set<ConsumerKind>; lines: number; manifest: Record<string, unknown> }> {
  const kinds = new Set<ConsumerKind>()
  const consumerOfType = new Map<string, ConsumerKind>()
  for (const c of CONSUMER_KINDS) for (const k of CONSUMERS[c].indices) consumerOfType.set(TYPE_OF[k], c)
  let lines = 0
  let manifestText = ''
  let failure: Error | undefined
  let entries = 0
  const unzip = new Unzip((entry) => {
    entries++
    const rootJson = !entry.name.includes('/') && entry.name.toLowerCase().endsWith('.json')
    if (!rootJson && entry.name !== MANIFEST_ENTRY) return
    const decoder = new TextDecoder()
    let rest = ''
    entry.ondata = (err, chunk, final) => {
      if (err) return void (failure = err)
      const text = rest + decoder.decode(chunk, { stream: !final })
      if (entry.name === MANIFEST_ENTRY) return void (manifestText += text.slice(rest.length))
      const parts = text.split('\n')
      rest = final ? '' : (parts.pop() ?? '')
      for (const p of parts) {
        if (p.trim() === '') continue
        lines++
        try {
          const record = JSON.parse(p) as Record<string, unknown>
          const payload = record.payload
          const type = isObject(payload) && typeof payload.type === 'string' ? payload.type : 'vulnerability'
          const consumer = consumerOfType.get(type)
          if (consumer) kinds.add(consumer)
        } catch {
          // counted and skipped by the loader, as in any snapshot
        }
      }
    }
    entry.start()
  })
  unzip.register(UnzipInflate)
  const reader = Bun.file(file).stream().getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    for (let at = 0; at < value.byteLength; at += 32 * 1024) unzip.push(value.subarray(at, at + 32 * 1024))
    if (failure) throw new ImportError(`${file} is not a readable snapshot: ${failure.message}`)
  }
  try {
    unzip.push(new Uint8Array(0), true)
  } catch (e) {
    throw new ImportError(`${file} is not a readable snapshot: ${(e as Error).message}`)
  }
  if (entries === 0) throw new ImportError(`${file} is not a readable snapshot: it holds no ZIP entries`)
  let manifest: Record<string, unknown> = {}
  try {
    if (manifestText) manifest = JSON.parse(manifestText) as Record<string, unknown>
  } catch {
    // identities then come from the node's own consumer documents
  }
  return { kinds, lines, manifest }
}

export async function importSnapshot(store: Store, file: string, snapshotsDir: string): Promise<ImportResult> {
  let info: Awaited<ReturnType<typeof inspect>>
  try {
    info = await inspect(file)
  } catch (e) {
    throw e instanceof ImportError ? e : new ImportError(`${file} is not a readable snapshot: ${(e as Error).message}`)
  }
  if (info.kinds.size === 0) throw new ImportError(`${file} holds no content any consumer takes`)
  mkdirSync(snapshotsDir, { recursive: true })
  const manifestPath = join(snapshotsDir, 'manifest.json')
  let manifest: Record<string, unknown> = {}
  try {
    manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>
  } catch {
    // none yet
  }
  const states = new ConsumerStates(store)
  const consumers = CONSUMER_KINDS.filter((c) => info.kinds.has(c))
  for (const consumer of consumers) {
    const def = CONSUMERS[consumer]
    const target = join(snapshotsDir, def.snapshotFile)
    copyFileSync(file, `${target}.tmp-${process.pid}`)
    renameSync(`${target}.tmp-${process.pid}`, target)
    const state = await states.read(def)
    const fromArchive = info.manifest[def.snapshotFile]
    manifest[def.snapshotFile] = isObject(fromArchive)
      ? fromArchive
      : {
          name: state?.name || `offline-${consumer}`,
          context: state?.context || 'offline',
          type: def.type,
          resource: state?.resource ?? '',
          is_public: true,
        }
    // Offset 0 makes the next pass re-initialise from this packaged snapshot (through staging).
    if (state) await states.write({ ...state, local_offset: 0, status: 'running' })
  }
  writeFileSync(`${manifestPath}.tmp-${process.pid}`, JSON.stringify(manifest, null, 2))
  renameSync(`${manifestPath}.tmp-${process.pid}`, manifestPath)
  return { consumers, lines: info.lines }
}

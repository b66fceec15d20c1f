/**
 * Snapshot and restore of the embedded store with OpenSearch's snapshot API semantics. A snapshot
 * is a consistent copy of the whole store file taken while writes go on (copyStore); it records
 * which indices it was asked for, and a restore brings back those (or a subset, optionally
 * renamed) into the running node through the Store port, so every restored document goes through
 * the same write path, mappings and limits as any other.
 */
import { mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { OpenSearchHttpError } from '../http/errors'
import type { Logger } from '../http/log'
import { isSystemIndex } from '../setup/indices/names'
import { copyStore, openSnapshot, snapshotDocuments, snapshotIndices, type SnapshotIndex } from '../store/embedded/snapshot'
import { OPENSEARCH_VERSION_ID } from '../store/embedded'
import { IndexNotFound } from '../store/errors'
import type { Store } from '../store/port'
import { COMPATIBLE_OPENSEARCH_VERSION } from './cluster'
import { badRequest } from './context'
import { globMatcher } from './names'
import {
  invalidSnapshotName,
  snapshotMissing,
  type SnapshotInfo,
  type SnapshotRepositories,
  validateSnapshotName,
} from './snapshot-repository'

export interface SnapshotDeps {
  store: Store
  /** The live store file (embedded mode). */
  storeFile: string
  repositories: SnapshotRepositories
  log: Logger
  now: () => number
}

export interface CreateSnapshotBody {
  indices?: string | string[]
  ignore_unavailable?: boolean
  include_global_state?: boolean
  partial?: boolean
  metadata?: Record<string, unknown>
}

export interface RestoreBody {
  indices?: string | string[]
  ignore_unavailable?: boolean
  include_aliases?: boolean
  rename_pattern?: string
  rename_replacement?: string
}

export interface RestorePlan {
  info: SnapshotInfo
  /** Snapshot index -> name it is restored as. */
  targets: Array<{ source: SnapshotIndex; target: string }>
}

const STORE_FILE = 'store.db'
/** Documents per bulk request of a restore: bounded memory whatever the index size. */
const RESTORE_BATCH = 500

const names = (v: string | string[] | undefined): string[] | undefined =>
  v === undefined ? undefined : (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter(Boolean)

export class SnapshotService {
  /** Snapshots being taken by this node, by `repo:snap`. */
  private readonly running = new Map<string, Promise<SnapshotInfo>>()

  constructor(private readonly deps: SnapshotDeps) {}

  /** Starts a snapshot; resolves with its info when it is complete (the route decides whether to wait). */
  async start(repo: string, snap: string, body: CreateSnapshotBody = {}): Promise<{ done: Promise<SnapshotInfo> }> {
    const { repositories, store, now } = this.deps
    repositories.get(repo)
    validateSnapshotName(repo, snap)
    if (this.running.has(`${repo}:${snap}`) || repositories.readInfo(repo, snap)) {
      throw invalidSnapshotName(repo, snap, 'snapshot with the same name already exists')
    }
    const wanted = names(body.indices)
    const indices = await store.resolve(wanted && wanted.length > 0 && !(wanted.length === 1 && wanted[0] === '_all') ? wanted : '*', {
      expand_wildcards: 'all',
      ignore_unavailable: body.ignore_unavailable === true,
    })
    const started = now()
    const info: SnapshotInfo = {
      snapshot: snap,
      uuid: crypto.randomUUID().replace(/-/g, '').slice(0, 22),
      version_id: Number(OPENSEARCH_VERSION_ID),
      version: COMPATIBLE_OPENSEARCH_VERSION,
      indices: indices.sort(),
      data_streams: [],
      include_global_state: body.include_global_state === true,
      state: 'IN_PROGRESS',
      start_time: new Date(started).toISOString(),
      start_time_in_millis: started,
      failures: [],
      shards: { total: 0, failed: 0, successful: 0 },
      ...(body.metadata ? { metadata: body.metadata } : {}),
    }
    const dir = repositories.snapshotDir(repo, snap)
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    repositories.writeInfo(repo, info)
    const key = `${repo}:${snap}`
    const done = (async () => {
      try {
        await copyStore(this.deps.storeFile, join(dir, STORE_FILE))
        const ended = now()
        Object.assign(info, {
          state: 'SUCCESS',
          end_time: new Date(ended).toISOString(),
          end_time_in_millis: ended,
          duration_in_millis: ended - started,
          shards: { total: indices.length, failed: 0, successful: indices.length },
          size_in_bytes: statSync(join(dir, STORE_FILE)).size,
        })
      } catch (e) {
        const ended = now()
        this.deps.log.error('snapshot failed', { repository: repo, snapshot: snap, error: e })
        Object.assign(info, {
          state: 'FAILED',
          end_time: new Date(ended).toISOString(),
          end_time_in_millis: ended,
          duration_in_millis: ended - started,
          failures: [{ reason: e instanceof Error ? e.message : String(e) }],
          shards: { total: indices.length, failed: indices.length, successful: 0 },
        })
      } finally {
        this.running.delete(key)
      }
      repositories.writeInfo(repo, info)
      this.deps.log.info('snapshot finished', { repository: repo, snapshot: snap, state: info.state, millis: info.duration_in_millis })
      return info
    })()
    this.running.set(key, done)
    return { done }
  }

  /** A snapshot left IN_PROGRESS by a process that is gone failed. */
  private current(repo: string, info: SnapshotInfo): SnapshotInfo {
    if (info.state === 'IN_PROGRESS' && !this.running.has(`${repo}:${info.snapshot}`)) {
      return { ...info, state: 'FAILED', failures: [{ reason: 'the node stopped while the snapshot was taken' }] }
    }
    return info
  }

  info(repo: string, snap: string): SnapshotInfo {
    this.deps.repositories.get(repo)
    const info = this.deps.repositories.readInfo(repo, snap)
    if (!info) throw snapshotMissing(repo, snap)
    return this.current(repo, info)
  }

  /** `_all`, `*`, names and `*` patterns, as GET _snapshot/<repo>/<names> takes them. */
  list(repo: string, expression = '_all', ignoreUnavailable = false): SnapshotInfo[] {
    const all = this.deps.repositories.listInfos(repo).map((i) => this.current(repo, i))
    const wanted = expression.split(',').filter(Boolean)
    if (wanted.length === 0 || wanted.includes('_all')) return all
    const out: SnapshotInfo[] = []
    for (const w of wanted) {
      const match = globMatcher(w)
      const hits = all.filter((i) => match(i.snapshot) && !out.includes(i))
      if (hits.length === 0 && !w.includes('*') && !ignoreUnavailable) throw snapshotMissing(repo, w)
      out.push(...hits)
    }
    return out
  }

  delete(repo: string, snap: string): void {
    this.info(repo, snap)
    if (this.running.has(`${repo}:${snap}`)) {
      throw new OpenSearchHttpError(
        400,
        'concurrent_snapshot_execution_exception',
        `[${repo}:${snap}] cannot delete a snapshot while it is being taken`,
      )
    }
    this.deps.repositories.removeSnapshot(repo, snap)
  }

  /** Which snapshot indices a restore brings back, under which names; checks what OpenSearch checks first. */
  async plan(repo: string, snap: string, body: RestoreBody = {}): Promise<RestorePlan> {
    const info = this.info(repo, snap)
    if (info.state !== 'SUCCESS') {
      throw new OpenSearchHttpError(
        400,
        'snapshot_restore_exception',
        `[${repo}:${snap}/${info.uuid}] unsupported snapshot state [${info.state}]`,
      )
    }
    const db = openSnapshot(join(this.deps.repositories.snapshotDir(repo, snap), STORE_FILE))
    let available: SnapshotIndex[]
    try {
      available = snapshotIndices(db).filter((i) => info.indices.includes(i.name))
    } finally {
      db.close()
    }
    const wanted = names(body.indices)
    let chosen: SnapshotIndex[]
    if (!wanted || wanted.length === 0 || wanted.includes('_all')) {
      // "Everything" leaves out the system indices, which only an explicit request may name.
      chosen = available.filter((i) => !isSystemIndex(i.name))
    } else {
      chosen = []
      for (const w of wanted) {
        const exclude = w.startsWith('-')
        const match = globMatcher(exclude ? w.slice(1) : w)
        if (exclude) {
          chosen = chosen.filter((i) => !match(i.name))
          continue
        }
        const hits = available.filter((i) => match(i.name) && !chosen.includes(i) && (!w.includes('*') || !isSystemIndex(i.name)))
        if (hits.length === 0 && !w.includes('*') && body.ignore_unavailable !== true) throw new IndexNotFound(w)
        chosen.push(...hits)
      }
    }
    let rename: (name: string) => string = (n) => n
    if (body.rename_pattern !== undefined) {
      let re: RegExp
      try {
        re = new RegExp(String(body.rename_pattern), 'g')
      } catch (e) {
        throw badRequest(`Invalid rename_pattern [${body.rename_pattern}]: ${(e as Error).message}`)
      }
      const replacement = String(body.rename_replacement ?? '')
      rename = (n) => n.replace(re, replacement)
    }
    const targets = chosen.map((source) => ({ source, target: rename(source.name) }))
    const seen = new Map<string, string>()
    for (const { source, target } of targets) {
      const other = seen.get(target)
      if (other !== undefined) {
        throw new OpenSearchHttpError(
          400,
          'snapshot_restore_exception',
          `[${repo}:${snap}/${info.uuid}] indices [${other}] and [${source.name}] are renamed into the same index [${target}]`,
        )
      }
      seen.set(target, source.name)
    }
    for (const { target } of targets) {
      const existing = (await this.deps.store.stats({ index: target, expand_wildcards: 'all', ignore_unavailable: true })).find(
        (s) => s.index === target,
      )
      if (existing && existing.status === 'open') {
        throw new OpenSearchHttpError(
          400,
          'snapshot_restore_exception',
          `[${repo}:${snap}/${info.uuid}] cannot restore index [${target}] because an open index with same name already exists in the cluster. ` +
            'Either close or delete the existing index or restore the index under a different name by providing a rename pattern and replacement name',
        )
      }
    }
    return { info, targets }
  }

  /** Restores a plan into the running node: each index created from the snapshot's settings and mappings, then its documents. */
  async restore(repo: string, snap: string, plan: RestorePlan, body: RestoreBody = {}) {
    const { store } = this.deps
    const db = openSnapshot(join(this.deps.repositories.snapshotDir(repo, snap), STORE_FILE))
    try {
      for (const { source, target } of plan.targets) {
        // A closed index of the same name is replaced, as OpenSearch restores over closed indices.
        await store.deleteIndex({ index: target, ignore_unavailable: true, expand_wildcards: 'all' }).catch((e) => {
          if (!(e instanceof IndexNotFound)) throw e
        })
        const settings = Object.fromEntries(Object.entries(source.settings).filter(([k]) => k.startsWith('index.')))
        await store.createIndex({
          index: target,
          body: {
            settings,
            mappings: source.mappings,
            ...(body.include_aliases === false ? {} : { aliases: source.aliases }),
          },
        })
        for (const batch of snapshotDocuments(db, source, RESTORE_BATCH)) {
          const lines = batch.flatMap((d) => [{ index: { _index: target, _id: d.id } }, d.source])
          const r = await store.bulk({ body: lines })
          if (r.errors) {
            const first = r.items.map((i) => Object.values(i)[0]?.error).find(Boolean)
            throw new OpenSearchHttpError(
              400,
              'snapshot_restore_exception',
              `[${repo}:${snap}] restoring [${target}] failed: ${first?.reason ?? 'bulk error'}`,
            )
          }
        }
        if (source.closed) await store.closeIndex({ index: target })
      }
      await store.refresh({ index: plan.targets.map((t) => t.target), ignore_unavailable: true, expand_wildcards: 'all' })
    } finally {
      db.close()
    }
    const n = plan.targets.length
    return { snapshot: snap, indices: plan.targets.map((t) => t.target), shards: { total: n, failed: 0, successful: n } }
  }
}

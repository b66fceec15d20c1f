/**
 * OpenSearch's snapshot API over the embedded store (platform mode forwards these paths to the
 * platform): repositories (`PUT|GET|DELETE /_snapshot/<repo>`), snapshots (`PUT|GET|DELETE
 * /_snapshot/<repo>/<snap>`, `_status`, `_restore`), `_cat/snapshots` and `_cat/repositories`,
 * under the platform's `cluster:admin/repository/*` and `cluster:admin/snapshot/*` actions. A
 * restore also needs unfiltered read rights on the indices it restores and create and write
 * rights on every index it creates.
 */
import { OpenSearchHttpError } from '../http/errors'
import { INDEX_ACTIONS, OPERATIONS_ACTIONS as A } from '../security/actions'
import { renderCat, type Column } from './cat-table'
import type { IndexApiDeps, RequestContext } from './context'
import { IndexRouter } from './router'
import { repoRoots, type SnapshotInfo, SnapshotRepositories } from './snapshot-repository'
import { type CreateSnapshotBody, type RestoreBody, SnapshotService } from './snapshot-service'

export interface SnapshotRouteDeps {
  repositories: SnapshotRepositories
  snapshots: SnapshotService
}

/** The repositories (`path.repo`, registrations in the data directory) and the service over the store file. */
export function snapshotDeps(deps: IndexApiDeps & { dataDir: string }, storeFile: string): SnapshotRouteDeps {
  const repositories = new SnapshotRepositories(
    deps.dataDir,
    repoRoots(deps.node.values.get('path.repo') as readonly string[], deps.node.configDir),
  )
  return { repositories, snapshots: new SnapshotService({ store: deps.store, storeFile, repositories, log: deps.log, now: deps.now }) }
}

function repositoriesBody(s: SnapshotRouteDeps, expression: string | undefined) {
  const all = s.repositories.all()
  if (!expression || expression === '_all' || expression === '*') return all
  const out: Record<string, unknown> = {}
  for (const name of expression.split(',')) out[name] = s.repositories.get(name)
  return out
}

function statusOf(repo: string, info: SnapshotInfo) {
  const n = info.indices.length
  const done = info.state === 'SUCCESS' ? n : 0
  const failed = info.state === 'FAILED' ? n : 0
  const shards = { initializing: 0, started: info.state === 'IN_PROGRESS' ? n : 0, finalizing: 0, done, failed, total: n }
  const size = info.size_in_bytes ?? 0
  const stats = {
    incremental: { file_count: done > 0 ? 1 : 0, size_in_bytes: size },
    total: { file_count: done > 0 ? 1 : 0, size_in_bytes: size },
    start_time_in_millis: info.start_time_in_millis,
    time_in_millis: info.duration_in_millis ?? 0,
  }
  return {
    snapshot: info.snapshot,
    repository: repo,
    uuid: info.uuid,
    state: info.state === 'IN_PROGRESS' ? 'STARTED' : info.state,
    include_global_state: info.include_global_state,
    shards_stats: shards,
    stats,
    indices: Object.fromEntries(
      info.indices.map((i) => [
        i,
        {
          shards_stats: { ...shards, started: shards.started > 0 ? 1 : 0, done: done > 0 ? 1 : 0, failed: failed > 0 ? 1 : 0, total: 1 },
          stats,
          shards: {},
        },
      ]),
    ),
  }
}

const SNAPSHOT_COLUMNS: Column[] = [
  { name: 'id', aliases: ['snapshot'], default: true },
  { name: 'status', aliases: ['s'], default: true },
  { name: 'start_epoch', aliases: ['ste', 'startEpoch'], default: true },
  { name: 'start_time', aliases: ['sti', 'startTime'], default: true },
  { name: 'end_epoch', aliases: ['ete', 'endEpoch'], default: true },
  { name: 'end_time', aliases: ['eti', 'endTime'], default: true },
  { name: 'duration', aliases: ['dur'], default: true },
  { name: 'indices', aliases: ['i'], default: true },
  { name: 'successful_shards', aliases: ['ss'], default: true },
  { name: 'failed_shards', aliases: ['fs'], default: true },
  { name: 'total_shards', aliases: ['ts'], default: true },
  { name: 'reason', aliases: ['r'] },
]
const REPOSITORY_COLUMNS: Column[] = [
  { name: 'id', aliases: ['repoId'], default: true },
  { name: 'type', aliases: ['t'], default: true },
]

const hhmmss = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString().slice(11, 19))

const repo = (ctx: RequestContext) => ctx.part('repo') ?? ''
const snap = (ctx: RequestContext) => ctx.part('snap') ?? ''

export function snapshotRoutes(deps: IndexApiDeps, s: SnapshotRouteDeps) {
  const r = new IndexRouter(deps, 'snapshot-api')

  r.on(['PUT', 'POST'], '/_snapshot/:repo', async (ctx) => {
    await ctx.authorizeCluster(A.repositoryPut)
    s.repositories.put(repo(ctx), await ctx.json())
    return { acknowledged: true }
  })
  r.on('GET', ['/_snapshot', '/_snapshot/:repo'], async (ctx) => {
    await ctx.authorizeCluster(A.repositoryGet)
    return repositoriesBody(s, ctx.part('repo'))
  })
  r.on('DELETE', '/_snapshot/:repo', async (ctx) => {
    await ctx.authorizeCluster(A.repositoryDelete)
    s.repositories.delete(repo(ctx))
    return { acknowledged: true }
  })

  r.on(['PUT', 'POST'], '/_snapshot/:repo/:snap', async (ctx) => {
    await ctx.authorizeCluster(A.snapshotCreate)
    const body = ((await ctx.json()) ?? {}) as CreateSnapshotBody
    const { done } = await s.snapshots.start(repo(ctx), snap(ctx), body)
    if (!ctx.flag('wait_for_completion', false)) {
      void done
      return { accepted: true }
    }
    return { snapshot: await done }
  })
  r.on('GET', '/_snapshot/:repo/:snap', async (ctx) => {
    await ctx.authorizeCluster(A.snapshotGet)
    s.repositories.get(repo(ctx))
    return { snapshots: s.snapshots.list(repo(ctx), snap(ctx), ctx.flag('ignore_unavailable', false)) }
  })
  r.on('GET', '/_snapshot/:repo/:snap/_status', async (ctx) => {
    await ctx.authorizeCluster(A.snapshotStatus)
    return {
      snapshots: snap(ctx)
        .split(',')
        .map((name) => statusOf(repo(ctx), s.snapshots.info(repo(ctx), name))),
    }
  })
  r.on('DELETE', '/_snapshot/:repo/:snap', async (ctx) => {
    await ctx.authorizeCluster(A.snapshotDelete)
    s.snapshots.delete(repo(ctx), snap(ctx))
    return { acknowledged: true }
  })
  r.on('POST', '/_snapshot/:repo/:snap/_restore', (ctx) => restoreSnapshot(deps, s, ctx))

  r.on('GET', ['/_cat/snapshots', '/_cat/snapshots/:repo'], (ctx) => catSnapshots(s, ctx))
  r.on('GET', '/_cat/repositories', async (ctx) => {
    await ctx.authorizeCluster(A.repositoryGet)
    const rows = Object.entries(s.repositories.all()).map(([id, def]) => ({ id, type: def.type }))
    return renderCat(ctx, REPOSITORY_COLUMNS, rows)
  })
  return r.app
}

/**
 * The same gate as any other read and write: a restore reads the snapshot's indices (so the
 * caller must be allowed to read them, system-index rule included, and without a DLS filter,
 * which a restored copy would escape) and creates and writes every restored name.
 */
async function restoreSnapshot(deps: IndexApiDeps, s: SnapshotRouteDeps, ctx: RequestContext) {
  await ctx.authorizeCluster(A.snapshotRestore)
  const body = ((await ctx.json()) ?? {}) as RestoreBody
  const plan = await s.snapshots.plan(repo(ctx), snap(ctx), body)
  const sources = plan.targets.map((t) => t.source.name)
  const targets = plan.targets.map((t) => t.target)
  deps.security.authorizeIndices(ctx.caller, INDEX_ACTIONS.search, sources)
  const filtered = sources.find((i) => deps.security.documentFilter(ctx.caller, i) !== undefined)
  if (filtered !== undefined) {
    throw new OpenSearchHttpError(
      403,
      'security_exception',
      `no permissions to restore [${filtered}] for user [${ctx.caller.name}]: its reads are restricted by document-level security`,
    )
  }
  deps.security.authorizeIndices(ctx.caller, INDEX_ACTIONS.createIndex, targets)
  deps.security.authorizeIndices(ctx.caller, INDEX_ACTIONS.index, targets)
  const run = s.snapshots.restore(repo(ctx), snap(ctx), plan, body)
  if (!ctx.flag('wait_for_completion', false)) {
    run.catch((e) => deps.log.error('restore failed', { repository: repo(ctx), snapshot: snap(ctx), error: e }))
    return { accepted: true }
  }
  return { snapshot: await run }
}

async function catSnapshots(s: SnapshotRouteDeps, ctx: RequestContext) {
  await ctx.authorizeCluster(A.snapshotGet)
  const name = ctx.part('repo') ?? ctx.str('repository')
  const repos = name ? name.split(',') : Object.keys(s.repositories.all())
  const rows = repos.flatMap((rp) => {
    s.repositories.get(rp)
    return s.snapshots.list(rp).map((i) => ({
      id: i.snapshot,
      status: i.state,
      start_epoch: Math.floor(i.start_time_in_millis / 1000),
      start_time: hhmmss(i.start_time_in_millis),
      end_epoch: i.end_time_in_millis === undefined ? undefined : Math.floor(i.end_time_in_millis / 1000),
      end_time: hhmmss(i.end_time_in_millis),
      duration: i.duration_in_millis === undefined ? undefined : `${(i.duration_in_millis / 1000).toFixed(1)}s`,
      indices: i.indices.length,
      successful_shards: i.shards.successful,
      failed_shards: i.shards.failed,
      total_shards: i.shards.total,
      reason: i.failures[0]?.reason,
    }))
  })
  return renderCat(ctx, SNAPSHOT_COLUMNS, rows)
}

/**
 * Points in time: a `_seq_no` watermark per index (see PitMeta), the older row versions kept for
 * them in `pit_history`, and their create, delete, list and expiry.
 */
import { IllegalArgument, SearchContextMissing, StoreError } from '../errors'
import type { CreatePitParams, CreatePitResponse, DeletePitResponse, PitInfo, ShardsInfo } from '../port'
import { parseTimeValue } from '../settings'
import type { IndexMeta } from './catalog'
import type { PitMeta, StoreCore } from './core'
import type { DocRow } from './documents'
import { randomId } from './ids'
import { ridRange } from './rids'
import type { Row } from './search'
import type { SearchLimits } from './search-limits'
import { paged, ROW_COLS } from './search-rows'

const SHARDS_ONE: ShardsInfo = { total: 1, successful: 1, skipped: 0, failed: 0 }

/** Before a row is replaced or deleted: keep the version an open PIT still sees. */
export function keepForPits(core: StoreCore, meta: IndexMeta, existing: DocRow, gone = meta.seq + 1): void {
  if (core.pits.size === 0) return
  let needed = false
  for (const p of core.pits.values())
    for (const t of p.targets) if (t.ix === meta.ix && t.uuid === meta.uuid && t.seq >= existing.seq) needed = true
  if (!needed) return
  core.db
    .query('INSERT OR IGNORE INTO pit_history (rid, gone, id, seq, ver, src) SELECT rid, ?, id, seq, ver, src FROM docs WHERE rid = ?')
    .run(gone, existing.rid)
}

/** What a PIT sees of one index: rows at or before its watermark, and kept older versions. */
export function pitRows(core: StoreCore, t: PitMeta['targets'][number]): Iterable<Row> {
  // An index deleted (or replaced under the same name) since: nothing left to see.
  if (core.cat.byIx.get(t.ix)?.uuid !== t.uuid) return []
  const [lo, hi] = ridRange(t.ix)
  return paged(
    core,
    (after) => {
      const from = Math.max(lo, (after ?? lo - 1) + 1)
      return {
        sql:
          `SELECT ${ROW_COLS} FROM docs WHERE rid BETWEEN ? AND ? AND seq <= ? ` +
          `UNION ALL SELECT ${ROW_COLS} FROM pit_history WHERE rid BETWEEN ? AND ? AND seq <= ? AND gone > ? ORDER BY rid`,
        params: [from, hi, t.seq, from, hi, t.seq, t.seq],
      }
    },
    (r) => r.rid,
  )
}

/** `keep_alive` within `point_in_time.max_keep_alive`, with OpenSearch's error. */
export function pitKeepAlive(value: string, limits: SearchLimits): number {
  const ms = parseTimeValue(value, 'keep_alive')
  if (ms > limits.maxPitKeepAliveMs)
    throw new IllegalArgument(
      `Keep alive for request (${value}) is too large. It must be less than (${formatTime(limits.maxPitKeepAliveMs)}). This limit can be set by changing the [point_in_time.max_keep_alive] cluster level setting.`,
    )
  return ms
}

function expirePits(core: StoreCore): void {
  const now = core.now()
  let removed = false
  for (const [id, p] of core.pits)
    if (p.expires <= now) {
      core.pits.delete(id)
      removed = true
    }
  if (removed) pruneHistory(core)
}

/** Drop the kept versions no open PIT can see any more. */
function pruneHistory(core: StoreCore): void {
  if (core.pits.size === 0) {
    core.db.run('DELETE FROM pit_history')
    return
  }
  const windows = [...core.pits.values()].flatMap((p) =>
    p.targets.map((t) => {
      const [lo, hi] = ridRange(t.ix)
      return { lo, hi, seq: t.seq }
    }),
  )
  core.db
    .query(
      `DELETE FROM pit_history WHERE NOT EXISTS (SELECT 1 FROM json_each(?) w WHERE pit_history.rid BETWEEN w.value ->> 'lo' AND w.value ->> 'hi' AND pit_history.seq <= w.value ->> 'seq' AND pit_history.gone > w.value ->> 'seq')`,
    )
    .run(JSON.stringify(windows))
}

export function openPit(core: StoreCore, id: string): PitMeta {
  expirePits(core)
  const p = core.pits.get(id)
  if (!p) throw new SearchContextMissing(id)
  return p
}

export async function createPit(core: StoreCore, params: CreatePitParams): Promise<CreatePitResponse> {
  core.assertOpen()
  expirePits(core)
  const limits = core.limits()
  const keepAlive = pitKeepAlive(params.keep_alive ?? '', limits)
  if (core.pits.size >= limits.maxOpenPitContext)
    throw new StoreError(
      'rejected_execution_exception',
      429,
      `Trying to create too many Point In Time contexts. Must be less than or equal to: [${limits.maxOpenPitContext}]. This limit can be set by changing the [search.max_open_pit_context] setting.`,
    )
  const names = [...core.resolveTargets(params.index, { ...params, forbidClosed: true }).keys()]
  const id = randomId(48)
  const created = core.now()
  const pit: PitMeta = {
    id,
    created,
    keepAlive,
    expires: created + keepAlive,
    targets: names.map((n) => {
      const m = core.indexMeta(n)
      return { ix: m.ix, uuid: m.uuid, name: n, specs: new Map(m.specs), seq: m.seq }
    }),
  }
  core.pits.set(id, pit)
  return { pit_id: id, _shards: { ...SHARDS_ONE, total: names.length, successful: names.length }, creation_time: created }
}

export async function deletePit(core: StoreCore, params: { body: { pit_id: string | string[] } }): Promise<DeletePitResponse> {
  core.assertOpen()
  expirePits(core)
  const ids = Array.isArray(params.body?.pit_id) ? params.body.pit_id : [params.body?.pit_id]
  const pits = ids.map((id) => ({ pit_id: String(id), successful: typeof id === 'string' && core.pits.delete(id) }))
  if (pits.every((p) => !p.successful)) throw new SearchContextMissing(ids.join(','))
  pruneHistory(core)
  return { pits }
}

export async function deleteAllPits(core: StoreCore): Promise<DeletePitResponse> {
  core.assertOpen()
  const pits = [...core.pits.keys()].map((pit_id) => ({ pit_id, successful: true }))
  core.pits.clear()
  pruneHistory(core)
  return { pits }
}

export async function getAllPits(core: StoreCore): Promise<{ pits: PitInfo[] }> {
  core.assertOpen()
  expirePits(core)
  return {
    pits: [...core.pits.values()].map((p) => ({
      pit_id: p.id,
      creation_time: p.created,
      keep_alive: p.keepAlive,
      indices: p.targets.map((t) => t.name),
    })),
  }
}

/** Milliseconds as OpenSearch prints a TimeValue (`24h`, `5m`, `1.5s`). */
function formatTime(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms >= size) return `${Number((ms / size).toFixed(1))}${unit}`
  return `${ms}ms`
}

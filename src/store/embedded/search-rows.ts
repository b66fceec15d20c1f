/**
 * How searches read rows: the SQL of a query's candidate rows (by rid or by `_seq_no`), read page
 * by page, large sources read and parsed lazily, and columns of single-valued fields for
 * aggregations.
 */
import { isObject } from '../query/doc'
import { scopedSpecs } from '../query/nested'
import { storedName } from '../query/field-spec'
import type { Column, ColumnLayout, Columns, Ordinals } from './aggs-columnar'
import type { IndexMeta } from './catalog'
import type { StoreCore } from './core'
import {
  type Bind,
  conjunctionParts,
  type ConjunctionParts,
  complementOf,
  disjointComplement,
  fieldBounds,
  matchesAll,
  type Plan,
  type PlanProbe,
  planQuery,
  RANGE_SQL,
  type RangeOp,
} from './plan'
import { ridRange } from './rids'
import { indexedKind } from './mapping'
import { singleMatch, type Stats } from '../query/score'
import { fieldLengths, topByPostings } from './text-index'
import type { Row } from './search'

/** Rows read per statement: no SQLite cursor stays open while a search yields the event loop. */
const PAGE = 256
/**
 * Sources longer than this (bytes) are not read with their page: each is read when the search
 * reaches its row, so that a page holding a 4 MiB transcript does not keep it alive in every
 * concurrent search while they take turns. Measured with `octet_length`, which SQLite answers from
 * the row's header: `length` counts characters, reading the whole source (an integration listing
 * 10,000 rules, 400 KB, on every read of its row).
 */
const INLINE_SOURCE = 65_536
/** Characters of large sources kept parsed (see withSources). */
const BIG_SOURCE_CACHE = 32 * 1024 * 1024
export const ROW_COLS = `rid, id, seq, ver, CASE WHEN octet_length(src) > ${INLINE_SOURCE} THEN NULL ELSE src END AS src`

export function planOf(core: StoreCore, meta: IndexMeta, query: unknown): Plan | null {
  if (core.scanOnly) return null
  core.textVisible()
  const last = core.lastPlan
  if (last && last.meta === meta && last.query === query) return last.plan
  const plan = planQuery(query, meta, core.now(), probeOf(core, meta))
  core.lastPlan = { meta, query, plan }
  return plan
}

/** What the planner may ask of an index's data (see PlanProbe). */
function probeOf(core: StoreCore, meta: IndexMeta): PlanProbe {
  return {
    // Kept until the index's next write: a dashboard repeating a search plans it without counting
    // again. Counts only choose between equivalent plans: a stale one could cost time, never change an answer.
    count: (sql, params, cap) => {
      return core.caches.counts.remember(
        meta,
        `${cap} ${sql} ${JSON.stringify(params)}`,
        () => (core.db.query(`SELECT count(*) AS n FROM (${sql} LIMIT ${Math.floor(cap)})`).get(...params) as { n: number }).n,
      )
    },
    // Writes refuse a data stream document without one timestamp (doc-write.ts's checkDataStream).
    singleValued: (field) => {
      const f = meta.fieldIds.get(field)
      const stream = meta.dataStream === undefined ? undefined : core.cat.streams.get(meta.dataStream)
      return f !== undefined && stream?.tsField === field && !meta.multiValued.has(f)
    },
  }
}

export function rowsSql(
  core: StoreCore,
  meta: IndexMeta,
  query: unknown,
  limit?: number,
  afterRid?: number,
): { sql: string; params: Array<string | number> } {
  const cols = ROW_COLS
  const plan = planOf(core, meta, query)
  const tail = limit === undefined ? '' : ` LIMIT ${Math.max(0, Math.floor(limit))}`
  const [lo, hi] = ridRange(meta.ix)
  const matches = plan && limit !== undefined && afterRid === undefined ? matchesOf(core, meta, plan) : undefined
  if (matches) {
    const page = Array.from(matches.subarray(0, Math.max(0, Math.floor(limit!))))
    return { sql: `SELECT ${cols} FROM docs WHERE rid IN (SELECT value FROM json_each(?)) ORDER BY rid`, params: [JSON.stringify(page)] }
  }
  if (plan && limit !== undefined && afterRid === undefined) {
    // The first rids alone: a term's postings are in rid order, so a page stops after `limit` of
    // them instead of listing every match first.
    return {
      sql: `SELECT ${cols} FROM docs WHERE rid IN (SELECT DISTINCT rid FROM (${plan.sql}) ORDER BY rid${tail}) ORDER BY rid`,
      params: plan.params,
    }
  }
  if (plan) {
    // fv field ids belong to one index, so the candidate rids need no further ix filter.
    const after = afterRid === undefined ? '' : ' AND rid > ?'
    return {
      sql: `SELECT ${cols} FROM docs WHERE rid IN (${plan.sql})${after} ORDER BY rid${tail}`,
      params: afterRid === undefined ? plan.params : [...plan.params, afterRid],
    }
  }
  return {
    sql: `SELECT ${cols} FROM docs WHERE rid BETWEEN ? AND ? ORDER BY rid${tail}`,
    params: [Math.max(lo, (afterRid ?? lo - 1) + 1), hi],
  }
}

/** Candidate rows in `_seq_no` order after a seq_no: a range of the `docs_seq` index. */
export function seqSql(
  core: StoreCore,
  meta: IndexMeta,
  query: unknown,
  order: 1 | -1,
  after?: number,
): { sql: string; params: Array<string | number> } {
  const plan = planOf(core, meta, query)
  let sql = `SELECT ${ROW_COLS} FROM docs WHERE ix = ?`
  const params: Array<string | number> = [meta.ix]
  if (after !== undefined && Number.isFinite(after)) {
    sql += order === 1 ? ' AND seq > ?' : ' AND seq < ?'
    params.push(after)
  }
  if (plan) {
    sql += ` AND rid IN (${plan.sql})`
    params.push(...plan.params)
  }
  return { sql: `${sql} ORDER BY seq ${order === 1 ? 'ASC' : 'DESC'}`, params }
}

/** Candidate rids read per statement of plannedRows. */
const RID_BATCH = 16_384

/**
 * Every candidate row of a plan in rid order: its rids in large batches, then their rows page by
 * page by rid. Paging `rid IN (plan)` itself would evaluate the plan again for every page of 256
 * rows, a cost quadratic in the matches of a common term.
 */
export function* plannedRows(core: StoreCore, plan: Plan): Generator<Row> {
  const ridsAfter = core.db.query(`SELECT rid FROM (${plan.sql}) WHERE rid > ? ORDER BY rid LIMIT ${RID_BATCH}`)
  for (let after = -1; ;) {
    const rids = (ridsAfter.values(...plan.params, after) as number[][]).map((r) => r[0])
    for (let at = 0; at < rids.length; at += PAGE) {
      const page = rids.slice(at, at + PAGE)
      const rows = core.db
        .query(`SELECT ${ROW_COLS} FROM docs WHERE rid IN (SELECT value FROM json_each(?)) ORDER BY rid`)
        .all(JSON.stringify(page)) as Row[]
      yield* withSources(core, rows)
    }
    if (rids.length < RID_BATCH) return
    after = rids[rids.length - 1]
  }
}

/**
 * Candidate rows in the order of one keyword, numeric or date field (its fv range read forwards
 * or backwards), each with the value that places it, strictly beyond `after` in that order. A
 * document with several values comes once, at its first value in that order: its smallest when
 * ascending, its largest when descending, which is the sort's default mode. Documents without a
 * value are not read. Undefined when the field or query cannot be read so. The caller checks
 * every row against the query: the walk may pass rows that do not match (see `broad`).
 */
export function sortedRows(
  core: StoreCore,
  meta: IndexMeta,
  query: unknown,
  sorted: string,
  order: 1 | -1,
  after: string | number | undefined,
  window: number,
): Iterable<{ row: Row; value: string | number }> | undefined {
  if (core.scanOnly) return undefined
  const field = storedName(meta.specs, sorted)
  // Root documents, whose order this is, hold no field of nested documents.
  const spec = scopedSpecs(meta.specs, '').get(field)
  const kind = spec ? indexedKind(spec) : undefined
  if (kind !== 'keyword' && kind !== 'number' && kind !== 'date') return undefined
  const f = meta.fieldIds.get(field)
  if (f === undefined) return []
  const all = matchesAll(query)
  let plan = all ? null : planOf(core, meta, query)
  if (!all && !plan) return undefined
  const multi = meta.multiValued.has(f)
  // The query's own bounds on the field (a time range, sorted by time) are where the walk starts
  // and stops, unless a document's place (its largest value, descending) may lie outside them;
  // when they are the whole query, or the query matches so many documents that the first rows of
  // the walk are matches, its rows are not read for every page.
  const bounds = all || multi ? { ops: [], only: all } : fieldBounds(query, meta, core.now(), field)
  if (plan && bounds.only) plan = null
  // A broad plan set aside is taken up again if the walk passes many more rows than its matches'
  // share promised (its matches lie far down the order): the walk never reads the whole index
  // where the plan's rids would have served.
  const broadRows = plan ? (plan.spansIndex ? PAGE + 16 * Math.max(1, window) : broad(core, meta, plan, window)) : undefined
  const setAside = broadRows === undefined ? undefined : plan
  if (broadRows !== undefined) plan = null
  // A conjunction's matches, when few enough to be kept (matchesOf), are looked up as the walk
  // passes index rows: SQLite would gather its rids again for every page.
  const members = plan ? matchesOf(core, meta, plan) : undefined
  if (members) plan = null
  // Pills beside a time filter (conjunctionParts), when their plan was set aside, pick the matching
  // positions from columns: the walk reads documents only for matches.
  const layout = setAside ? layoutOf(core, meta) : undefined
  const parts = layout && conjunctionParts(query, meta, core.now())
  const picked = parts && parts.kept.length + parts.dropped.length > 0 ? pick(core, meta, layout, parts) : undefined
  const matching = picked && layout ? new Uint8Array(layout.count) : undefined
  if (matching && picked) for (let k = 0; k < picked.length; k++) matching[picked[k]] = 1
  // A document's place is its first value in this order: one beyond `after` may hide a first one before it.
  if (multi && after !== undefined) return undefined
  return (function* () {
    const dir = order === 1 ? 'ASC' : 'DESC'
    const cmp = order === 1 ? '>' : '<'
    const seen = multi ? new Set<number>() : undefined
    let cursor: [string | number, number] | undefined
    let walked = 0
    for (;;) {
      if (setAside && walked > broadRows!) plan = setAside
      // The field's index rows first; documents are read only for the rows kept.
      let sql = 'SELECT rid, v FROM fv WHERE f = ?'
      const params: Array<string | number> = [f]
      if (after !== undefined) {
        sql += ` AND v ${cmp} ?`
        params.push(after)
      }
      for (const [op, v] of bounds.ops) {
        sql += ` AND v ${RANGE_SQL[op]} ?`
        params.push(v)
      }
      if (cursor) {
        sql += ` AND (v, rid) ${cmp} (?, ?)`
        params.push(...cursor)
      }
      if (plan) {
        sql += ` AND rid IN (${plan.sql})`
        params.push(...plan.params)
      }
      const size = members ? 8 * PAGE : PAGE
      sql += ` ORDER BY v ${dir}, rid ${dir} LIMIT ${size}`
      const keys = core.db.query(sql).values(...params) as Array<[number, string | number]>
      walked += keys.length
      const kept: Array<[number, string | number]> = []
      for (const key of keys) {
        if (members && !holds(members, key[0])) continue
        if (matching && layout && matching[positionOf(layout, key[0])] === 0) continue
        if (seen) {
          if (seen.has(key[0])) continue
          seen.add(key[0])
        }
        kept.push(key)
      }
      const rows = new Map<number, Row>()
      for (const row of withSources(core, core.db.query(BY_RIDS).all(JSON.stringify(kept.map((k) => k[0]))) as Row[]))
        rows.set(row.rid, row)
      for (const [rid, value] of kept) {
        const row = rows.get(rid)
        if (row) yield { row, value }
      }
      if (keys.length < size) return
      const [rid, value] = keys[keys.length - 1]
      cursor = [value, rid]
    }
  })()
}

/** Rows by rid (a JSON array of them). */
const BY_RIDS = `SELECT ${ROW_COLS} FROM docs WHERE rid IN (SELECT value FROM json_each(?))`

/** Whether an ascending list of rids holds one. */
function holds(rids: Float64Array, rid: number): boolean {
  let lo = 0
  let hi = rids.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (rids[mid] === rid) return true
    if (rids[mid] < rid) lo = mid + 1
    else hi = mid - 1
  }
  return false
}

/**
 * Whether a plan matches so many documents that walking a field's index and testing each row
 * (about `window × docs / matches` rows read, each a document parsed) costs less than reading
 * the plan's rids (`matches` rows, SQLite materialising them for every page of the walk). A
 * document costs some ten index rows, so the plan is broad past sqrt(10 × window × docs)
 * matches, counted no further. Broad: the rows a walk may read before the plan is taken up
 * again, eight times what that share promises; otherwise undefined.
 */
function broad(core: StoreCore, meta: IndexMeta, plan: Plan, window: number): number | undefined {
  const past = Math.ceil(Math.sqrt(10 * Math.max(1, window) * meta.docCount))
  if (probeOf(core, meta).count(plan.sql, plan.params, past + 1) <= past) return undefined
  return PAGE + Math.ceil((8 * Math.max(1, window) * meta.docCount) / past)
}

/** How many of the query's matches hold a value of the field, from the field's index. */
export function valuedCount(core: StoreCore, meta: IndexMeta, query: unknown, field: string): number | undefined {
  if (core.scanOnly) return undefined
  const f = meta.fieldIds.get(storedName(meta.specs, field))
  if (f === undefined) return 0
  const all = matchesAll(query)
  const plan = all ? null : planOf(core, meta, query)
  if (!all && !plan?.exact) return undefined
  const n = meta.multiValued.has(f) ? 'count(DISTINCT rid)' : 'count(*)'
  const sql = `SELECT ${n} AS n FROM fv WHERE f = ?${plan ? ` AND rid IN (${plan.sql})` : ''}`
  const params = [f, ...(plan ? plan.params : [])]
  // Kept until the index's next write: a page past the last value of an index (search_after on
  // several indices) asks it of every index on every page, and counting a field's rows over 200k
  // documents took 4 ms each time.
  return core.caches.counts.remember(
    meta,
    `valued ${sql} ${JSON.stringify(params)}`,
    () => (core.db.query(sql).get(...params) as { n: number }).n,
  )
}

/**
 * Rows page by page (`PAGE` per statement, keyed on the ordering column), so that a search can
 * yield the event loop between rows without a SQLite cursor left open under concurrent writes.
 */
export function* paged(
  core: StoreCore,
  sqlAfter: (after: number | undefined) => { sql: string; params: Array<string | number> },
  key: (r: Row) => number,
) {
  let after: number | undefined
  for (;;) {
    const { sql, params } = sqlAfter(after)
    const page = withSources(core, core.db.query(`${sql} LIMIT ${PAGE}`).all(...params) as Row[])
    yield* page
    if (page.length < PAGE) return
    after = key(page[page.length - 1])
  }
}

/**
 * Large sources (left out of the page, see INLINE_SOURCE) are read when the row is used, and
 * parsed once per version for every search that needs them at about the same time (a bounded
 * cache): 100 concurrent searches over a 4 MiB transcript do not hold 100 parsed copies.
 */
export function withSources(core: StoreCore, rows: Row[]): Row[] {
  for (const row of rows) {
    if (row.src !== null) continue
    const { rid, seq } = row
    const read = () =>
      (
        core.db
          .query('SELECT src FROM docs WHERE rid = ? AND seq = ? UNION ALL SELECT src FROM pit_history WHERE rid = ? AND seq = ? LIMIT 1')
          .get(rid, seq, rid, seq) as { src: string } | null
      )?.src ?? '{}'
    Object.defineProperty(row, 'src', { get: read })
    row.parsed = () => {
      // One version per document: a document rewritten often (an integration whose rule list grows
      // by one id per rule created) otherwise filled the budget with its old versions, 2,407 of
      // them 53 MiB of parsed lists nobody reads again.
      const hit = core.bigSources.get(rid)
      if (hit?.seq === seq) {
        core.bigSources.delete(rid)
        core.bigSources.set(rid, hit) // most recently used last
        return hit.source
      }
      const text = read()
      const source = JSON.parse(text) as Record<string, unknown>
      keepParsed(core, rid, seq, source, text.length)
      return source
    }
  }
  return rows
}

/** Whether a source of `chars` characters is surely left out of a page (more bytes than characters), read and parsed when used (withSources). */
export const bigSource = (chars: number) => chars > INLINE_SOURCE

/**
 * Keeps the parsed source of row `rid` at `seq` (replacing its other version) for the searches
 * that read it next; also called by a write that already holds its source as an object
 * (doc-write.ts), so the next read neither reads nor parses the text just written.
 */
export function keepParsed(core: StoreCore, rid: number, seq: number, source: Record<string, unknown>, size: number): void {
  const hit = core.bigSources.get(rid)
  if (hit) {
    core.bigSources.delete(rid)
    core.bigSourceChars -= hit.size
  }
  core.bigSources.set(rid, { seq, source, size })
  core.bigSourceChars += size
  for (const [r, v] of core.bigSources) {
    if (core.bigSourceChars <= BIG_SOURCE_CACHE || r === rid) break
    core.bigSources.delete(r)
    core.bigSourceChars -= v.size
  }
}

/** Forgets the kept source of row `rid` at `seq` (a write taken back). */
export function forgetParsed(core: StoreCore, rid: number, seq: number): void {
  const hit = core.bigSources.get(rid)
  if (hit?.seq !== seq) return
  core.bigSources.delete(rid)
  core.bigSourceChars -= hit.size
}

/**
 * Columns of single-valued fields over every document of an index, read from the field-value
 * index (one range per field) and kept until the index's next write (doc values that a
 * dashboard's repeated aggregations read again); undefined as soon as a document has two values
 * of one field.
 */
export function columns(
  core: StoreCore,
  meta: IndexMeta,
  fields: Array<{ field: string; path: string; boolean: boolean }>,
  query?: unknown,
): Columns | undefined {
  if (core.scanOnly) return undefined
  const plan = query === undefined ? undefined : planOf(core, meta, query)
  if (plan === null || (plan && !plan.exact)) return undefined
  const layout = layoutOf(core, meta)
  // A time filter and its pills select from the range field's column and the pills' rows: the
  // plan's rids in rid order merged and sorted every match (a negated pill beside a broad time
  // filter read every document's row).
  const parts = plan ? conjunctionParts(query, meta, core.now()) : undefined
  const picked = parts && pick(core, meta, layout, parts)
  // Few matches are cheaper to read as documents than whole columns.
  const few = (n: number) => n < Math.min(MIN_SELECTED, meta.docCount / 8)
  if (plan && few(picked ? picked.length : (exactCount(core, meta, query, MIN_SELECTED) ?? 0))) return undefined
  const byPath = new Map<string, unknown[]>()
  const ordinals = new Map<string, Ordinals>()
  for (const { field, path, boolean } of fields) {
    const column = columnOf(core, meta, layout, field, boolean)
    if (!column) return undefined
    byPath.set(path, column.values)
    if (column.ordinals) ordinals.set(path, column.ordinals)
  }
  const { count, position, lo } = layout
  if (!plan) return { count, byPath, ordinals }
  if (picked) return { count, byPath, ordinals, selected: picked }
  const rids = core.db.query(`SELECT rid FROM (${plan.sql}) GROUP BY rid ORDER BY rid`).values(...plan.params) as number[][]
  const selected = new Int32Array(rids.length)
  rids.forEach(([rid], i) => (selected[i] = position ? position[rid - lo] : rid - lo))
  return { count, byPath, ordinals, selected }
}

/**
 * The positions of a conjunction's matches, ascending: within every range (its field's column),
 * in the rows of every required lookup and in none of an excluded one's. Undefined when a range's
 * field has a document with two values (no column).
 */
function pick(core: StoreCore, meta: IndexMeta, layout: ColumnLayout, parts: ConjunctionParts): Int32Array | undefined {
  // A search counts, pages and aggregates the same conjunction: picked once until the next write.
  const key = JSON.stringify([parts.ranges, ...[parts.kept, parts.dropped].map((plans) => plans.map((p) => [p.sql, p.params]))])
  const picked = core.caches.picks.remember(
    meta,
    key,
    () => pickNow(core, meta, layout, parts) ?? null,
    (p) => p?.length ?? 1,
  )
  return picked ?? undefined
}

function pickNow(core: StoreCore, meta: IndexMeta, layout: ColumnLayout, parts: ConjunctionParts): Int32Array | undefined {
  const { count } = layout
  // How many of the required sets each position is in; excluded ones are marked.
  const met = new Uint16Array(count)
  const excluded = new Uint8Array(count)
  for (const { field, ops } of parts.ranges) {
    const column = columnOf(core, meta, layout, field, false)
    if (!column) return undefined
    const inside = within(column, ops)
    // A time filter alone: its positions are the answer.
    if (parts.ranges.length === 1 && parts.kept.length === 0 && parts.dropped.length === 0) return inside
    for (let k = 0; k < inside.length; k++) met[inside[k]]++
  }
  const each = (plan: Plan, f: (i: number) => void) => {
    // A pill on a single-valued field reads its column (kept until the next write), not its rows.
    const column = plan.equals && columnOf(core, meta, layout, plan.equals.field, false)
    if (column && plan.equals) return eachEqual(column, plan.equals.values, f)
    const seen = new Uint8Array(count)
    for (const [rid] of core.db.query(plan.sql).values(...plan.params) as number[][]) {
      const i = positionOf(layout, rid)
      if (i < 0 || i >= count || seen[i] === 1) continue
      seen[i] = 1
      f(i)
    }
  }
  for (const plan of parts.kept) each(plan, (i) => met[i]++)
  for (const plan of parts.dropped) each(plan, (i) => (excluded[i] = 1))
  const need = parts.ranges.length + parts.kept.length
  let n = 0
  for (let i = 0; i < count; i++) if (met[i] === need && excluded[i] === 0) n++
  const out = new Int32Array(n)
  for (let i = 0, k = 0; k < n; i++) if (met[i] === need && excluded[i] === 0) out[k++] = i
  return out
}

/** Calls `f` with each position of a column holding one of the values. */
function eachEqual(column: Column, values: Bind[], f: (i: number) => void): void {
  const { ordinals } = column
  if (ordinals) {
    const wanted = new Set(values.map((v) => ordinals.dict.indexOf(v)).filter((o) => o >= 0))
    for (let i = 0; i < ordinals.ords.length; i++) if (wanted.has(ordinals.ords[i])) f(i)
    return
  }
  const wanted = new Set<unknown>(values)
  for (let i = 0; i < column.values.length; i++) if (wanted.has(column.values[i])) f(i)
}

/** Where a document's values sit in the columns of a layout (-1: not in it). */
function positionOf({ position, lo }: ColumnLayout, rid: number): number {
  if (!position) return rid - lo
  return rid - lo < position.length ? position[rid - lo] : -1
}

/**
 * One field's column, kept until the index's next write; documents added since it was read
 * have their values appended (the layout is then dense). Null when a document has two values.
 */
function columnOf(core: StoreCore, meta: IndexMeta, layout: ColumnLayout, named: string, boolean: boolean): Column | null {
  const field = storedName(meta.specs, named)
  const key = `${boolean ? 'b' : 'v'}:${field}`
  let column = core.caches.columns.get(meta, key)
  if (column && column.nextRid !== layout.nextRid) {
    const extended = extendColumn(core, meta, column, layout, field, boolean)
    column = extended === undefined ? undefined : core.caches.columns.set(meta, key, extended, layout.count)
  }
  if (column === undefined) column = core.caches.columns.set(meta, key, readColumn(core, meta, layout, field, boolean), layout.count)
  return column
}

/** The positions of a numeric column whose values are within the bounds (numbers, as a numeric or date range's are), ascending. */
function within(column: Column, ops: Array<[RangeOp, Bind]>): Int32Array {
  let lo = -Infinity
  let hi = Infinity
  let loOpen = false
  let hiOpen = false
  for (const [op, b] of ops) {
    const n = Number(b)
    if (op === 'gt' || op === 'gte') [lo, loOpen] = n > lo || (n === lo && op === 'gt') ? [n, op === 'gt'] : [lo, loOpen]
    else [hi, hiOpen] = n < hi || (n === hi && op === 'lt') ? [n, op === 'lt'] : [hi, hiOpen]
  }
  // NaN (no value) is within no bounds.
  const numbers = (column.numbers ??= Float64Array.from(column.values, (v) => (typeof v === 'number' ? v : Number.NaN)))
  const inside = (v: number) => (loOpen ? v > lo : v >= lo) && (hiOpen ? v < hi : v <= hi)
  // Counted, then listed: one array of the exact size (a time filter over 1M events lists 900k).
  let n = 0
  for (let i = 0; i < numbers.length; i++) if (inside(numbers[i])) n++
  const out = new Int32Array(n)
  for (let i = 0, k = 0; k < n; i++) if (inside(numbers[i])) out[k++] = i
  return out
}

function layoutOf(core: StoreCore, meta: IndexMeta): ColumnLayout {
  const known = core.caches.layouts.get(meta, '')
  if (known?.nextRid === meta.nextRid) return known
  const [lo, hi] = ridRange(meta.ix)
  const { nextRid } = meta
  // Without deletions the documents hold every rid from the first.
  if (nextRid - lo === meta.docCount) return core.caches.layouts.set(meta, '', { lo, count: meta.docCount, nextRid })
  const rids = core.db.query('SELECT rid FROM docs WHERE rid BETWEEN ? AND ? ORDER BY rid').values(lo, hi) as number[][]
  const position = new Int32Array(rids.length === 0 ? 0 : rids[rids.length - 1][0] - lo + 1).fill(-1)
  rids.forEach(([rid], i) => (position[rid - lo] = i))
  return core.caches.layouts.set(meta, '', { lo, count: rids.length, position, nextRid })
}

/**
 * The column with the documents added since it was read (from their `keys`, the values they
 * wrote to the field-value index); undefined where positions are not rid order (deletions).
 */
function extendColumn(
  core: StoreCore,
  meta: IndexMeta,
  column: Column,
  layout: ColumnLayout,
  field: string,
  boolean: boolean,
): Column | null | undefined {
  const { count, lo, nextRid } = layout
  if (layout.position || column.nextRid > nextRid) return undefined
  const values = column.values.slice()
  values.length = count
  const f = meta.fieldIds.get(field)
  if (f === undefined) return { values, nextRid }
  const ords = column.ordinals ? new Int32Array(count).fill(-1) : undefined
  ords?.set(column.ordinals!.ords.subarray(0, Math.min(count, column.ordinals!.ords.length)))
  const dict = column.ordinals?.dict.slice() ?? []
  const ordOf = new Map(dict.map((v, o) => [v, o]))
  const rows = core.db.query('SELECT rid, keys FROM docs WHERE rid >= ? AND rid < ?').values(column.nextRid, nextRid) as Array<
    [number, string]
  >
  for (const [rid, keys] of rows) {
    const at = rid - lo
    for (const [k, v] of JSON.parse(keys) as Array<[number, string | number]>) {
      if (k !== f) continue
      const value = boolean ? v === 1 : v
      if (values[at] !== undefined && values[at] !== value) return null
      values[at] = value
      if (!ords) continue
      let o = ordOf.get(value)
      if (o === undefined) ordOf.set(value, (o = dict.push(value) - 1))
      ords[at] = o
    }
  }
  return { values, ordinals: ords ? { ords, dict } : undefined, nextRid }
}

/** The field's column; null when a document holds two values of it. */
function readColumn(core: StoreCore, meta: IndexMeta, layout: ColumnLayout, field: string, boolean: boolean): Column | null {
  const { count, nextRid } = layout
  const values: unknown[] = new Array(count)
  const f = meta.fieldIds.get(field)
  if (f === undefined) return { values, nextRid } // no document ever had a value
  const at = (rid: number) => positionOf(layout, rid)
  // Few distinct values (hosts, levels): one string per value, then only rids are read.
  const distinct = core.db.query('SELECT v FROM fv WHERE f = ? GROUP BY v LIMIT 1001').values(f) as Array<[string | number]>
  if (distinct.length <= 1000) {
    const ords = new Int32Array(count).fill(-1)
    const dict: unknown[] = []
    const ridsOf = core.db.query(`SELECT rid FROM fv WHERE f = ? AND v = ? AND rid > ? ORDER BY rid LIMIT ${COLUMN_CHUNK}`)
    for (const [v] of distinct) {
      const value = boolean ? v === 1 : v
      for (let after = -1; ;) {
        const rows = ridsOf.values(f, v, after) as Array<[number]>
        for (const [rid] of rows) {
          const i = at(rid)
          if (i < 0 || i >= count) continue
          if (values[i] !== undefined) return null
          values[i] = value
          ords[i] = dict.length
        }
        if (rows.length < COLUMN_CHUNK) break
        after = rows[rows.length - 1][0]
      }
      dict.push(value)
    }
    return { values, ordinals: { ords, dict }, nextRid }
  }
  const first = core.db.query(`SELECT rid, v FROM fv WHERE f = ? ORDER BY v, rid LIMIT ${COLUMN_CHUNK}`)
  const next = core.db.query(`SELECT rid, v FROM fv WHERE f = ? AND (v, rid) > (?, ?) ORDER BY v, rid LIMIT ${COLUMN_CHUNK}`)
  for (let rows = first.values(f) as Array<[number, string | number]>; ;) {
    for (const [rid, v] of rows) {
      const i = at(rid)
      if (i < 0 || i >= count) continue
      if (values[i] !== undefined) return null
      values[i] = boolean ? v === 1 : v
    }
    if (rows.length < COLUMN_CHUNK) break
    const [rid, v] = rows[rows.length - 1]
    rows = next.values(f, v, rid) as Array<[number, string | number]>
  }
  return { values, nextRid }
}

/** Index rows read per statement by readColumn: a column of 1M values held 1M row arrays at once (some 100 MiB). */
const COLUMN_CHUNK = 65_536

/** Rids of one conjunction's matches kept at most; larger ones are merged again each time (and counted only up to the cap). */
const MATCHES_KEPT = 16_384

/**
 * The rids a conjunction matches, in order, kept until the index's next write (as OpenSearch's
 * query cache keeps a filter's matches per segment): a repeated bool is counted and paged
 * without merging its clauses again. Undefined for other plans, or too many matches.
 */
function matchesOf(core: StoreCore, meta: IndexMeta, plan: Plan): Float64Array | undefined {
  if (!plan.conjunction) return undefined
  const rids = core.caches.matches.remember(
    meta,
    `${plan.sql} ${JSON.stringify(plan.params)}`,
    () => {
      const rows = core.db
        .query(`SELECT rid FROM (${plan.sql}) ORDER BY rid LIMIT ${MATCHES_KEPT + 1}`)
        .values(...plan.params) as number[][]
      return rows.length > MATCHES_KEPT ? null : Float64Array.from(rows, (r) => r[0])
    },
    (r) => r?.length ?? 1,
  )
  return rids ?? undefined
}

/** Matches below which a query's aggregations read documents rather than columns. */
const MIN_SELECTED = 2_000

/**
 * The number of the query's matches from the index, or undefined when it cannot say. With `cap`,
 * counting stops there (a search that reports at most `track_total_hits` reads no further).
 */
export function exactCount(core: StoreCore, meta: IndexMeta, query: unknown, cap?: number): number | undefined {
  if (matchesAll(query)) return cap === undefined ? meta.docCount : Math.min(cap, meta.docCount)
  const plan = planOf(core, meta, query)
  if (!plan?.exact) return undefined
  const beside = rangeCount(core, meta, plan, cap)
  if (beside !== undefined) return beside
  const matches = matchesOf(core, meta, plan)
  if (matches) return cap === undefined ? matches.length : Math.min(cap, matches.length)
  const picked = cap === undefined || cap > COLUMN_COUNT_FROM ? countByColumns(core, meta, query) : undefined
  if (picked !== undefined) return cap === undefined ? picked : Math.min(cap, picked)
  // A document with several matching values (an array, a flat_object's leaves) has one row per value.
  const distinct = plan.distinct || (plan.field !== undefined && !meta.multiValued.has(plan.field))
  if (cap !== undefined) {
    const rows = distinct ? plan.sql : `SELECT DISTINCT rid FROM (${plan.sql})`
    return (core.db.query(`SELECT count(*) AS n FROM (${rows} LIMIT ${Math.floor(cap)})`).get(...plan.params) as { n: number }).n
  }
  const n = distinct ? 'count(*)' : 'count(DISTINCT rid)'
  return (core.db.query(`SELECT ${n} AS n FROM (${plan.sql})`).get(...plan.params) as { n: number }).n
}

/**
 * A time filter and its pills counted from columns (pick), when the index is large: a negated
 * pill beside a broad time filter counted in SQL merged every match's rows (60 ms over 300k
 * events), where the columns, kept until the next write, answer in a few. Undefined for other
 * queries, or where a field has no column.
 */
function countByColumns(core: StoreCore, meta: IndexMeta, query: unknown): number | undefined {
  if (core.scanOnly || meta.docCount < COLUMN_COUNT_FROM) return undefined
  const parts = conjunctionParts(query, meta, core.now())
  if (!parts || parts.ranges.length === 0) return undefined
  return pick(core, meta, layoutOf(core, meta), parts)?.length
}

/** Documents from which a conjunction's count reads columns (below, its rows cost less than whole columns). */
const COLUMN_COUNT_FROM = 50_000

/**
 * A range on a field every document holds once (a data stream's timestamp) counted as the index's
 * documents less those outside it, when they are fewer: "the last 30 days" over a month of
 * events counts a day's rows, not the month's. Undefined for other plans, or when counting up to
 * `cap` costs less.
 */
function rangeCount(core: StoreCore, meta: IndexMeta, plan: Plan, cap: number | undefined): number | undefined {
  const bounds = plan.bounds
  if (!bounds || !disjointComplement(bounds) || !probeOf(core, meta).singleValued(bounds.field)) return undefined
  const docs = meta.docCount
  if (cap !== undefined && cap <= docs / 2) return undefined
  let outside = 0
  for (const p of complementOf(bounds)) {
    outside += (core.db.query(`SELECT count(*) AS n FROM (${p.sql} LIMIT ${Math.ceil(docs / 2) + 1})`).get(...p.params) as { n: number }).n
    if (outside > docs / 2) return undefined
  }
  return cap === undefined ? docs - outside : Math.min(cap, docs - outside)
}

/** A single-field match ranked from the postings (see text-index.ts), with the page's rows. */
export function topByScore(
  core: StoreCore,
  meta: IndexMeta,
  query: unknown,
  stats: Stats,
  window: number,
): { total: number; top: Array<{ row: Row; score: number }> } | undefined {
  const m = singleMatch(query, meta.specs)
  core.textVisible()
  const lengthsOf = (f: number) => {
    const key = String(f)
    const known = core.caches.lengths.get(meta, key)
    if (known === null) return undefined
    const read = fieldLengths(core.db, meta, f, known)
    if (read !== known) core.caches.lengths.set(meta, key, read, read?.lens.length ?? 1)
    return read ?? undefined
  }
  const ranked = m && topByPostings(core.db, meta, m, stats, window, lengthsOf)
  if (!ranked) return undefined
  const rows = withSources(
    core,
    core.db
      .query(`SELECT ${ROW_COLS} FROM docs WHERE rid IN (SELECT value FROM json_each(?))`)
      .all(JSON.stringify(ranked.top.map((t) => t.rid))) as Row[],
  )
  const byRid = new Map(rows.map((r) => [r.rid, r]))
  return { total: ranked.total, top: ranked.top.map(({ rid, score }) => ({ row: byRid.get(rid)!, score })) }
}

/**
 * Runs a workload on one target over HTTP, normalizes only what may legitimately differ (`took`,
 * `_shards`, node and UUID values, PIT and scroll ids, the order of equal-score hits), and lists
 * where two answers differ, scores compared within a tolerance.
 */
import type { Answer, Op, Request } from './workload'

export interface Target {
  url: string
  authorization?: string
}

export async function send(target: Target, req: Request): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': req.ndjson ? 'application/x-ndjson' : 'application/json' }
  if (target.authorization) headers.authorization = target.authorization
  const body = req.ndjson
    ? req.ndjson.map((l) => JSON.stringify(l) + '\n').join('')
    : req.body === undefined
      ? undefined
      : JSON.stringify(req.body)
  const res = await fetch(target.url + req.path, { method: req.method, headers, body })
  const text = await res.text()
  let parsed: unknown = text
  try {
    parsed = text === '' ? null : JSON.parse(text)
  } catch {
    // Not JSON: compared as text.
  }
  return { status: res.status, body: parsed }
}

export async function run(target: Target, ops: Op[]): Promise<{ requests: Request[]; answers: Answer[] }> {
  const answers: Answer[] = []
  const requests: Request[] = []
  for (const op of ops) {
    const req = typeof op.request === 'function' ? op.request(answers) : op.request
    requests.push(req)
    answers.push(await send(target, req))
  }
  return { requests, answers }
}

// `terminated_early` tells which execution shortcut OpenSearch took (aggregations read from segment
// statistics), not what matched; `creation_time` is a clock reading.
const DROPPED = new Set(['took', '_shards', '_nodes', 'terminated_early', 'creation_time'])
const OPAQUE = new Set(['pit_id', '_scroll_id', 'index_uuid', 'uuid'])
const SCORE = new Set(['_score', 'max_score'])

/** Equal scores are equal to this relative tolerance (float32 BM25 on one side, doubles on the other). */
const SCORE_TOLERANCE = 1e-4
/**
 * Other fractions (sums, averages) to the last bits: OpenSearch adds values in segment order, which
 * updates change, the embedded store in its own.
 */
const SUM_TOLERANCE = 1e-12
/** A score as a sort value: float32's precision, and BM25 computed in floats there (doubles of the field sort alike otherwise). */
const SORT_SCORE_TOLERANCE = 1e-6

/** An index named with its UUID (`[name/uuid]`) in a message. */
const withoutUuids = (v: unknown) => (typeof v === 'string' ? v.replace(/\/[A-Za-z0-9_-]{22}\]/g, '/<uuid>]') : v)

function strip(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(strip)
  if (typeof v === 'string') return withoutUuids(v)
  if (v === null || typeof v !== 'object') return v
  const out: Record<string, unknown> = {}
  // A bulk item's error, like a whole answer's, is compared by its `type` and `reason`.
  if (typeof (v as any).type === 'string' && typeof (v as any).reason === 'string' && 'caused_by' in v)
    return { type: (v as any).type, reason: withoutUuids((v as any).reason) }
  for (const [k, x] of Object.entries(v)) {
    if (DROPPED.has(k)) continue
    out[k] = OPAQUE.has(k) && typeof x === 'string' ? '<opaque>' : strip(x)
  }
  if (Array.isArray(out.hits)) out.hits = orderEqualScores(out.hits as Record<string, unknown>[])
  return out
}

/** Hits ranked by score (no `sort` values) with equal scores put in `_id` order. */
function orderEqualScores(hits: Record<string, unknown>[]): Record<string, unknown>[] {
  if (hits.some((h) => h.sort !== undefined)) return hits
  const key = (h: Record<string, unknown>) => (typeof h._score === 'number' ? Number(h._score.toPrecision(5)) : 0)
  return [...hits].sort((a, b) => key(b) - key(a) || String(a._id).localeCompare(String(b._id)))
}

/** What is compared of an answer: an error's status, `type` and `reason`; anything else whole, stripped. */
export function normalize(a: Answer): unknown {
  const error = causeOf(a.body?.error)
  if (a.status >= 400 && error && typeof error === 'object')
    return { status: a.status, type: error.type, reason: withoutUuids(error.reason) }
  // An _msearch answers each search's failure in its place.
  if (Array.isArray(a.body?.responses))
    return {
      status: a.status,
      body: a.body.responses.map((r: any) => {
        const e = causeOf(r?.error)
        return e ? { status: r.status, type: e.type, reason: withoutUuids(e.reason) } : strip(r)
      }),
    }
  return { status: a.status, body: strip(a.body) }
}

/**
 * A failure of every shard is wrapped by OpenSearch; the embedded store (one shard) answers its cause
 * (README, "Differences between the modes"): the cause is compared.
 */
function causeOf(error: any): any {
  return error?.type === 'search_phase_execution_exception' && error.root_cause?.length === 1 ? error.root_cause[0] : error
}

function close(a: number, b: number, tolerance = SCORE_TOLERANCE): boolean {
  return a === b || Math.abs(a - b) <= tolerance * Math.max(Math.abs(a), Math.abs(b))
}

/**
 * The sort value OpenSearch gives a hit without the field: its type's extreme (the embedded store
 * answers null; README, "Differences between the modes").
 */
const MISSING_SORT_VALUES = new Set<unknown>([2 ** 63, -(2 ** 63), 2147483647, -2147483648, 'Infinity', '-Infinity'])

/** Paths where the two values differ (embedded first, OpenSearch second), each with both values. */
export function differences(a: unknown, b: unknown, path = '', key = ''): string[] {
  if (typeof a === 'number' && typeof b === 'number' && SCORE.has(key)) return close(a, b) ? [] : [`${path}: ${a} vs ${b}`]
  if (a === null && key === 'sort' && MISSING_SORT_VALUES.has(b)) return []
  // A score among sort values is a float in OpenSearch, a double here.
  if (typeof a === 'number' && typeof b === 'number' && key === 'sort' && !Number.isInteger(b))
    return close(a, b, SORT_SCORE_TOLERANCE) ? [] : [`${path}: ${a} vs ${b}`]
  // Integers past 2^53 are doubles as much as fractions are (a sum of longs, a sum of squares).
  if (typeof a === 'number' && typeof b === 'number' && !(Number.isSafeInteger(a) && Number.isSafeInteger(b)))
    return close(a, b, SUM_TOLERANCE) ? [] : [`${path}: ${a} vs ${b}`]
  if (a === b) return []
  if (Array.isArray(a) && Array.isArray(b)) {
    const out: string[] = []
    for (let i = 0; i < Math.max(a.length, b.length); i++) out.push(...differences(a[i], b[i], `${path}[${i}]`, key))
    return out
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const out: string[] = []
    const keys = new Set([...Object.keys(a), ...Object.keys(b)])
    for (const k of keys) out.push(...differences((a as any)[k], (b as any)[k], `${path}.${k}`, k))
    return out
  }
  return [`${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`]
}

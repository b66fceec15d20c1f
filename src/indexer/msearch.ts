/**
 * `_msearch`: NDJSON pairs of header and search body. Each search goes through the same gate as
 * `_search` (authorization on its concrete indices, the caller's DLS); a search that fails
 * answers its error in its slot, as OpenSearch does, and the others still run.
 */
import { badRequest, JSON_BODY_LIMIT, withoutSystemIndices, type RequestContext } from './context'
import { errorAnswer } from '../http/errors'
import type { IndexRouter } from './router'
import { checkSearchBody, SEARCH_KEYS, searchAs, type SearchRequest } from './search'
import type { ResolveOptions } from '../store/port'
import { nodeIdOf } from './node-info'

/** OpenSearch's keys of an msearch header line. */
const HEADER_KEYS = new Set([
  'index',
  'indices',
  'expand_wildcards',
  'ignore_unavailable',
  'allow_no_indices',
  'search_type',
  'preference',
  'routing',
  'request_cache',
  'ccs_minimize_roundtrips',
  'allow_partial_search_results',
  'cancel_after_time_interval',
  'phase_took',
])

function parseLine(line: string, n: number): Record<string, unknown> {
  if (line.trim() === '') return {}
  let v: unknown
  try {
    v = JSON.parse(line)
  } catch (e) {
    throw badRequest(`Failed to parse line [${n}] of the msearch body: ${(e as Error).message}`, 'parse_exception')
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw badRequest(`line [${n}] of the msearch body must be an object`, 'parse_exception')
  return v as Record<string, unknown>
}

function bool(v: unknown): boolean {
  if (v === true || v === 'true') return true
  if (v === false || v === 'false') return false
  throw badRequest(`Failed to parse value [${String(v)}] as only [true] or [false] are allowed.`)
}

function requestOf(ctx: RequestContext, header: Record<string, unknown>, body: Record<string, unknown>): SearchRequest {
  for (const key of Object.keys(header))
    if (!HEADER_KEYS.has(key)) throw badRequest(`key [${key}] is not supported in the metadata section`)
  const given = header.index ?? header.indices
  const named = given === undefined ? ctx.part('index') : ctx.indexNames([given].flat().map(String).join(','))
  const options: ResolveOptions = {}
  if (header.expand_wildcards !== undefined) options.expand_wildcards = [header.expand_wildcards].flat().map(String).join(',')
  if (header.ignore_unavailable !== undefined) options.ignore_unavailable = bool(header.ignore_unavailable)
  if (header.allow_no_indices !== undefined) options.allow_no_indices = bool(header.allow_no_indices)
  const restTotalHitsAsInt = ctx.flag('rest_total_hits_as_int', false)
  if (restTotalHitsAsInt && typeof body.track_total_hits === 'number')
    throw badRequest(
      `[rest_total_hits_as_int] cannot be used if the tracking of total hits is not accurate, got ${body.track_total_hits}`,
      'action_request_validation_exception',
    )
  return {
    expression: withoutSystemIndices(named),
    namedIndices: named !== undefined,
    body: checkSearchBody(body, SEARCH_KEYS),
    options: { ...ctx.resolveOptions(), ...options },
    restTotalHitsAsInt,
  }
}

async function msearch(ctx: RequestContext) {
  const started = performance.now()
  // NDJSON (application/x-ndjson, or JSON types as clients also send).
  const text = await ctx.text({ limit: JSON_BODY_LIMIT, status: 413, kind: 'ndjson' })
  const lines = text.split('\n')
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  else if (text.length > 0) throw badRequest('The msearch request must be terminated by a newline [\\n]')
  const max = ctx.int('max_concurrent_searches')
  if (max !== undefined && max < 1) throw badRequest('maxConcurrentSearches must be positive')
  const pairs: Array<[Record<string, unknown>, Record<string, unknown>]> = []
  for (let i = 0; i < lines.length; i += 2) {
    if (i + 1 >= lines.length) throw badRequest('The msearch request must be terminated by a newline [\\n]')
    pairs.push([parseLine(lines[i], i + 1), parseLine(lines[i + 1], i + 2)])
  }
  if (pairs.length === 0) throw badRequest('Validation Failed: 1: no requests added;', 'action_request_validation_exception')
  // A malformed line fails the whole request, before any search runs.
  const requests = pairs.map(([header, body]) => requestOf(ctx, header, body))
  const responses: unknown[] = []
  for (const req of requests) {
    try {
      const res = await searchAs(ctx, req)
      responses.push({ ...res, status: 200 })
    } catch (e) {
      const answer = errorAnswer(e, 'index', nodeIdOf(ctx))
      if (answer.unexpected) throw e
      responses.push(answer.body)
    }
  }
  return { took: Math.round(performance.now() - started), responses }
}

export function msearchRoutes(r: IndexRouter): void {
  r.on(['GET', 'POST'], ['/_msearch', '/:index/_msearch'], msearch)
}

/**
 * `POST /<alias-or-data-stream>/_rollover[/<new_index>]`: with `conditions` (`max_age`,
 * `max_docs`, `max_size`; any one met rolls over, none given always does) evaluated on the write
 * index's figures (creation date, document count, stored size: no scan), `dry_run`, and for an
 * alias the new index's `settings`, `mappings` and `aliases`. An alias moves to the new index (or,
 * when it names a write index, stays on the old one with `is_write_index: false`); a data stream
 * gets its next generation. Answers OpenSearch's shape.
 */
import { AlreadyExists, IllegalArgument } from '../store/errors'
import { validateIndexName } from '../store/names'
import type { AliasDefinition, CreateIndexBody } from '../store/port'
import { isObject } from '../store/query/doc'
import { parseTimeValue } from '../store/settings'
import { badRequest, type RequestContext } from './context'
import type { IndexRouter } from './router'

export const ROLLOVER_ACTION = 'indices:admin/rollover'

const BYTE_UNITS: Record<string, number> = {
  b: 1,
  kb: 1024,
  mb: 1024 ** 2,
  gb: 1024 ** 3,
  tb: 1024 ** 4,
  pb: 1024 ** 5,
}

function parseByteSize(v: unknown, setting: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb|pb)\s*$/i.exec(String(v))
  if (!m)
    throw new IllegalArgument(
      `failed to parse setting [${setting}] with value [${String(v)}] as a size in bytes: unit is missing or unrecognized`,
    )
  return Math.round(Number(m[1]) * BYTE_UNITS[m[2].toLowerCase()])
}

interface Condition {
  key: string
  met: (f: { ageMs: number; docs: number; bytes: number }) => boolean
}

function conditions(raw: unknown): Condition[] {
  if (raw === undefined) return []
  if (!isObject(raw)) throw badRequest('[conditions] must be an object', 'x_content_parse_exception')
  const out: Condition[] = []
  for (const [k, v] of Object.entries(raw)) {
    switch (k) {
      case 'max_age': {
        const ms = parseTimeValue(String(v), 'max_age')
        out.push({ key: `[max_age: ${String(v)}]`, met: (f) => f.ageMs >= ms })
        break
      }
      case 'max_docs': {
        const n = Number(v)
        if (!Number.isInteger(n)) throw badRequest(`[max_docs] must be an integer, got [${String(v)}]`, 'x_content_parse_exception')
        out.push({ key: `[max_docs: ${n}]`, met: (f) => f.docs >= n })
        break
      }
      case 'max_size': {
        const bytes = parseByteSize(v, 'max_size')
        // An empty index has nothing to roll over, whatever its size (OpenSearch counts primary store bytes of its documents).
        out.push({ key: `[max_size: ${String(v)}]`, met: (f) => f.docs > 0 && f.bytes >= bytes })
        break
      }
      default:
        throw badRequest(`[conditions] unknown field [${k}]`, 'x_content_parse_exception')
    }
  }
  return out
}

function nextName(old: string): string {
  const m = /^(.*-)(\d+)$/.exec(old)
  if (!m) throw new IllegalArgument(`index name [${old}] does not match pattern '^.*-\\d+$'`)
  return `${m[1]}${String(Number(m[2]) + 1).padStart(6, '0')}`
}

const KEYS = new Set(['conditions', 'settings', 'mappings', 'aliases'])

async function rollover(ctx: RequestContext) {
  const target = ctx.part('index')!
  const requested = ctx.part('new_index')
  const body = (await ctx.json()) ?? {}
  for (const k of Object.keys(body)) if (!KEYS.has(k)) throw badRequest(`[rollover] unknown field [${k}]`, 'x_content_parse_exception')
  const conds = conditions(body.conditions)
  const dryRun = ctx.flag('dry_run', false) === true
  // The whole operation is on the target (and the index it creates): authorize on what it resolves to.
  const streams = await ctx.store.getDataStream({ name: target }).catch(() => ({ data_streams: [] }))
  const stream = streams.data_streams.find((d) => d.name === target)

  let oldIndex: string
  let newIndex: string
  let writeAlias = false
  if (stream) {
    if (requested !== undefined) throw badRequest('new index name may not be specified when rolling over a data stream')
    if (body.settings !== undefined || body.mappings !== undefined || body.aliases !== undefined)
      throw badRequest('aliases, mappings, and index settings may not be specified when rolling over a data stream')
    await ctx.authorized(ROLLOVER_ACTION, target, { expand_wildcards: 'all' })
    ;({ old_index: oldIndex, new_index: newIndex } = await ctx.store.rolloverDataStream({ name: target, dry_run: true }))
  } else {
    const aliases = await ctx.store.getAlias({ name: target, expand_wildcards: 'all' }).catch(() => ({}))
    const holders = Object.entries(aliases as Record<string, { aliases: Record<string, AliasDefinition> }>).filter(([, a]) =>
      Object.hasOwn(a.aliases, target),
    )
    if (holders.length === 0) {
      const concrete = await ctx.store.resolve(target, { ignore_unavailable: true, allow_no_indices: true, expand_wildcards: 'all' })
      if (concrete.length > 0)
        throw new IllegalArgument('rollover target is a [concrete index] but one of [alias, data_stream] was expected')
      throw new IllegalArgument(`rollover target [${target}] does not exist`)
    }
    const writer = holders.find(([, a]) => a.aliases[target].is_write_index === true)
    if (!writer && holders.length > 1) throw new IllegalArgument(`rollover target [${target}] does not point to a write index`)
    oldIndex = (writer ?? holders[0])[0]
    writeAlias = writer !== undefined
    newIndex = requested ?? nextName(oldIndex)
    validateIndexName(newIndex)
    await ctx.authorized(ROLLOVER_ACTION, target, { expand_wildcards: 'all' })
    ctx.deps.security.authorizeIndices(ctx.caller, ROLLOVER_ACTION, [newIndex])
    const existing = await ctx.store.resolve(newIndex, { ignore_unavailable: true, allow_no_indices: true, expand_wildcards: 'all' })
    if (existing.length > 0) throw new AlreadyExists(`index [${newIndex}] already exists`, newIndex)
  }

  const [stats] = await ctx.store.stats({ index: oldIndex, expand_wildcards: 'all' })
  const figures = {
    ageMs: Date.now() - (stats?.creation_date ?? Date.now()),
    docs: stats?.docs_count ?? 0,
    bytes: stats?.store_size_in_bytes ?? 0,
  }
  const results: Record<string, boolean> = {}
  for (const c of conds) results[c.key] = c.met(figures)
  const met = conds.length === 0 || Object.values(results).some(Boolean)
  const answer = (rolled: boolean) => ({
    acknowledged: rolled,
    shards_acknowledged: rolled,
    old_index: oldIndex,
    new_index: newIndex,
    rolled_over: rolled,
    dry_run: dryRun,
    conditions: results,
  })
  if (dryRun || !met) return answer(false)

  if (stream) {
    const done = await ctx.store.rolloverDataStream({ name: target })
    newIndex = done.new_index
    return answer(true)
  }
  const createBody: CreateIndexBody = {}
  if (isObject(body.settings)) createBody.settings = body.settings
  if (isObject(body.mappings)) createBody.mappings = body.mappings as CreateIndexBody['mappings']
  if (isObject(body.aliases)) createBody.aliases = body.aliases as CreateIndexBody['aliases']
  await ctx.store.createIndex({ index: newIndex, body: createBody })
  const actions = writeAlias
    ? [
        { add: { index: newIndex, alias: target, is_write_index: true } },
        { add: { index: oldIndex, alias: target, is_write_index: false } },
      ]
    : [{ remove: { index: oldIndex, alias: target } }, { add: { index: newIndex, alias: target } }]
  await ctx.store.updateAliases({ body: { actions } as never })
  return answer(true)
}

export function rolloverRoutes(r: IndexRouter): void {
  r.on('POST', ['/:index/_rollover', '/:index/_rollover/:new_index'], rollover)
}

/**
 * `_mget`: many gets in one request. Every index the request names is authorized for the mget
 * action before anything is read (one refused index refuses the request, as the security
 * plugin does); each document then passes the caller's DLS like a single `GET <index>/_doc`.
 */
import { IndexNotFound, StoreError } from '../store/errors'
import type { GetParams } from '../store/port'
import { badRequest, type RequestContext } from './context'
import { sourceParams } from './documents'
import { filteredGet } from './read-gate'
import type { IndexRouter } from './router'

export const MGET_ACTION = 'indices:data/read/mget'

interface Item {
  index: string
  id: string
  params: Partial<GetParams>
}

const ITEM_KEYS = new Set(['_index', '_id', '_source', 'stored_fields', 'routing', 'version', 'version_type'])
/** Underscored forms OpenSearch removed: a 400, as there. */
const REMOVED_KEYS = new Set(['_routing', '_version', '_version_type', '_stored_fields'])

function items(ctx: RequestContext, body: Record<string, unknown>): Item[] {
  const fallback = ctx.part('index')
  const problems: string[] = []
  const out: Item[] = []
  if (body.docs !== undefined && body.ids !== undefined) throw badRequest('[mget] unknown field [ids] next to [docs]', 'parsing_exception')
  for (const key of Object.keys(body))
    if (key !== 'docs' && key !== 'ids')
      throw badRequest(`unknown key [${key}] for a START_ARRAY, expected [docs] or [ids]`, 'parsing_exception')
  if (Array.isArray(body.ids)) {
    if (fallback === undefined) problems.push('index is missing for doc 0')
    body.ids.forEach((id, i) => {
      if (typeof id !== 'string' && typeof id !== 'number') problems.push(`id is missing for doc ${i}`)
      else out.push({ index: fallback ?? '', id: String(id), params: {} })
    })
  } else if (Array.isArray(body.docs)) {
    body.docs.forEach((d: unknown, i) => {
      if (d === null || typeof d !== 'object' || Array.isArray(d))
        throw badRequest('docs array element should include an object', 'parsing_exception')
      const doc = d as Record<string, unknown>
      for (const key of Object.keys(doc)) {
        if (REMOVED_KEYS.has(key))
          throw badRequest(`Unsupported field [${key}] used, expected [${key.slice(1)}] instead`, 'parsing_exception')
        if (!ITEM_KEYS.has(key)) throw badRequest(`Unknown key for a VALUE_STRING in [${key}].`, 'parsing_exception')
      }
      const index = typeof doc._index === 'string' ? ctx.indexNames(doc._index) : fallback
      if (index === undefined) problems.push(`index is missing for doc ${i}`)
      if (typeof doc._id !== 'string' && typeof doc._id !== 'number') problems.push(`id is missing for doc ${i}`)
      const params: Partial<GetParams> = {}
      if (doc._source !== undefined) params._source = doc._source as GetParams['_source']
      if (doc.stored_fields !== undefined) params.stored_fields = doc.stored_fields as string[]
      if (index !== undefined && doc._id !== undefined) out.push({ index, id: String(doc._id), params })
    })
  } else if (body.docs !== undefined || body.ids !== undefined) {
    throw badRequest('[docs] and [ids] must be arrays', 'parsing_exception')
  }
  if (out.length === 0 && problems.length === 0) problems.push('no documents to get')
  if (problems.length > 0)
    throw badRequest(`Validation Failed: ${problems.map((p, i) => `${i + 1}: ${p};`).join('')}`, 'action_request_validation_exception')
  return out
}

async function mget(ctx: RequestContext) {
  const body = await ctx.json()
  if (body === undefined) throw badRequest('Validation Failed: 1: no documents to get;', 'action_request_validation_exception')
  const list = items(ctx, body)
  // Resolve every name first; authorize all concrete indices together before reading any.
  const concrete = new Map<string, string | StoreError>()
  for (const { index } of list) {
    if (concrete.has(index)) continue
    try {
      const [first] = await ctx.store.resolve(index, { expand_wildcards: 'all' })
      concrete.set(index, first ?? index)
    } catch (e) {
      if (!(e instanceof StoreError)) throw e
      concrete.set(index, e instanceof IndexNotFound ? new IndexNotFound(e.index, 'index_expression') : e)
    }
  }
  const names = [...new Set([...concrete.values()].filter((v): v is string => typeof v === 'string'))]
  if (names.length > 0) ctx.deps.security.authorizeIndices(ctx.caller, MGET_ACTION, names)
  const common = sourceParams(ctx)
  const stored = ctx.list('stored_fields')
  const realtime = ctx.flag('realtime')
  const docs: unknown[] = []
  for (const item of list) {
    const target = concrete.get(item.index)!
    if (typeof target !== 'string') {
      docs.push({ _index: item.index, _id: item.id, error: target.toOpenSearch() })
      continue
    }
    const params: GetParams = {
      index: item.index,
      id: item.id,
      ...common,
      ...(stored ? { stored_fields: stored } : {}),
      ...(realtime !== undefined ? { realtime } : {}),
      ...item.params,
    }
    try {
      docs.push(await filteredGet(ctx, target, params))
    } catch (e) {
      if (!(e instanceof StoreError)) throw e
      docs.push({ _index: item.index, _id: item.id, error: e.toOpenSearch() })
    }
  }
  return { docs }
}

export function mgetRoutes(r: IndexRouter): void {
  r.on(['GET', 'POST'], ['/_mget', '/:index/_mget'], mget)
}

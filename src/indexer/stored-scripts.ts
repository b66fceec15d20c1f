/**
 * Stored scripts (`PUT|POST /_scripts/<id>`, `GET|DELETE /_scripts/<id>`), kept in the system index
 * `.svc-scripts` (the platform keeps them in its cluster state): painless scripts (checked by the
 * Painless subset when stored) and mustache search templates, used by `id` from `_search/template`,
 * `_render/template/<id>` and the `script` of updates and `_update_by_query`.
 */
import { OpenSearchHttpError } from '../http/errors'
import { IndexNotFound } from '../store/errors'
import type { Store } from '../store/port'
import { isObject } from '../store/query/doc'
import { badRequest, type RequestContext } from './context'
import { compileScript } from './painless'
import { Reply, type IndexRouter } from './router'
import { SCRIPTS_INDEX } from '../setup/indices/names'

export const SCRIPT_ACTIONS = {
  put: 'cluster:admin/script/put',
  get: 'cluster:admin/script/get',
  delete: 'cluster:admin/script/delete',
} as const

const INDEX_BODY = {
  settings: { index: { hidden: true, number_of_shards: 1, number_of_replicas: 0 } },
  mappings: { dynamic: false as const, properties: { lang: { type: 'keyword' }, source: { type: 'keyword', index: false } } },
}

export interface StoredScript {
  lang: string
  source: string
  options?: Record<string, unknown>
}

/** A stored script by id, or undefined. */
export async function storedScript(store: Store, id: string): Promise<StoredScript | undefined> {
  try {
    const doc = await store.get({ index: SCRIPTS_INDEX, id })
    if (!doc.found || !doc._source) return undefined
    const s = doc._source as Record<string, unknown>
    return { lang: String(s.lang), source: String(s.source), ...(isObject(s.options) ? { options: s.options } : {}) }
  } catch (e) {
    if (e instanceof IndexNotFound) return undefined
    throw e
  }
}

export function missingScript(id: string): OpenSearchHttpError {
  return new OpenSearchHttpError(404, 'resource_not_found_exception', `unable to find script [${id}] in cluster state`)
}

/** A `script` spec with a stored `id` replaced by the stored source (params kept). */
export async function resolveStoredScript(store: Store, script: unknown): Promise<unknown> {
  if (!isObject(script) || script.id === undefined) return script
  const stored = await storedScript(store, String(script.id))
  if (!stored)
    throw new OpenSearchHttpError(400, 'resource_not_found_exception', `unable to find script [${String(script.id)}] in cluster state`)
  const { id: _id, ...rest } = script
  return { ...rest, source: stored.source, lang: stored.lang }
}

const ID = /^[^#\s/*?"<>|,\\]+$/

async function putScript(ctx: RequestContext) {
  const id = ctx.part('id')!
  await ctx.authorizeCluster(SCRIPT_ACTIONS.put)
  if (!ID.test(id))
    throw badRequest(`Validation Failed: 1: id cannot contain '#' for stored script;`, 'action_request_validation_exception')
  const body = (await ctx.json()) ?? {}
  const script = body.script
  if (!isObject(script)) throw badRequest('must specify [script] for storing a script', 'parse_exception')
  for (const k of Object.keys(body)) if (k !== 'script') throw badRequest(`unexpected field [${k}]`, 'parse_exception')
  const lang = script.lang
  if (typeof lang !== 'string') throw badRequest('must specify lang for stored script', 'illegal_argument_exception')
  if (lang !== 'painless' && lang !== 'mustache') throw badRequest(`script_lang not supported [${lang}]`, 'illegal_argument_exception')
  const raw = script.source ?? script.code
  const source = lang === 'mustache' && isObject(raw) ? JSON.stringify(raw) : raw
  if (typeof source !== 'string' || source === '') throw badRequest('must specify source for stored script', 'illegal_argument_exception')
  if (lang === 'painless') compileScript({ source, lang }) // refused now, as OpenSearch compiles on put
  if (!(await ctx.store.existsIndex({ index: SCRIPTS_INDEX, expand_wildcards: 'all' }))) {
    try {
      await ctx.store.createIndex({ index: SCRIPTS_INDEX, body: INDEX_BODY as never })
    } catch (err) {
      if ((err as { status?: number }).status !== 400) throw err // created meanwhile
    }
  }
  await ctx.store.index({
    index: SCRIPTS_INDEX,
    id,
    body: { lang, source, ...(isObject(script.options) ? { options: script.options } : {}) },
    refresh: true,
  })
  return { acknowledged: true }
}

async function getScript(ctx: RequestContext) {
  const id = ctx.part('id')!
  await ctx.authorizeCluster(SCRIPT_ACTIONS.get)
  const s = await storedScript(ctx.store, id)
  if (!s) return new Reply(404, { _id: id, found: false })
  return { _id: id, found: true, script: { lang: s.lang, source: s.source, ...(s.options ? { options: s.options } : {}) } }
}

async function deleteScript(ctx: RequestContext) {
  const id = ctx.part('id')!
  await ctx.authorizeCluster(SCRIPT_ACTIONS.delete)
  if (!(await storedScript(ctx.store, id)))
    throw new OpenSearchHttpError(404, 'resource_not_found_exception', `Stored script with id [${id}] does not exist`)
  await ctx.store.delete({ index: SCRIPTS_INDEX, id, refresh: true })
  return { acknowledged: true }
}

export function storedScriptRoutes(r: IndexRouter): void {
  r.on(['PUT', 'POST'], ['/_scripts/:id', '/_scripts/:id/:context'], putScript)
  r.on('GET', '/_scripts/:id', getScript)
  r.on('DELETE', '/_scripts/:id', deleteScript)
}

/**
 * Aliases: `POST /_aliases` (atomic actions), put/delete one alias, get/exists with OpenSearch's
 * name expressions (`_all`, `*`, comma lists, `-exclusions` after the first wildcard) and its
 * "alias [x] missing" 404 that still lists what was found.
 */
import { AliasesNotFound } from '../store/errors'
import { AliasDefinition, UpdateAliasesBody, type AliasAction, type ResolveOptions } from '../store/port'
import { badRequest, type RequestContext } from './context'
import { globMatcher } from './names'
import { Reply, validate, type IndexRouter } from './router'

export const ALIAS_ACTIONS = {
  update: 'indices:admin/aliases',
  get: 'indices:admin/aliases/get',
  deleteIndex: 'indices:admin/delete',
} as const

const isPattern = (s: string) => s.includes('*')

/**
 * Does alias `alias` pass the requested name expression? As OpenSearch's `findAliases`: names are
 * applied in order, a `-name` removes what earlier names matched, `_all` matches everything.
 */
export function aliasNameFilter(names: string[] | undefined): (alias: string) => boolean {
  if (!names || names.length === 0) return () => true
  const steps = names.map((n) =>
    n.startsWith('-')
      ? { include: false, match: globMatcher(n.slice(1)) }
      : { include: true, match: n === '_all' ? () => true : globMatcher(n) },
  )
  return (alias) => {
    let matched = false
    for (const step of steps) {
      if (step.include) matched ||= step.match(alias)
      else if (matched) matched = !step.match(alias)
    }
    return matched
  }
}

/** Names asked for explicitly (not wildcards, not excluded later) that matched nothing: RestGetAliasesAction's rule. */
export function missingAliases(names: string[], returned: Set<string>): string[] {
  const firstWildcard = names.findIndex(isPattern)
  const cut = firstWildcard < 0 ? names.length : firstWildcard
  const missing = new Set<string>()
  names.forEach((n, i) => {
    if (n === '_all' || isPattern(n) || (i > cut && n.startsWith('-'))) return
    for (let j = Math.max(i + 1, cut); j < names.length; j++) {
      const m = names[j]
      if (m.startsWith('-') && (m.slice(1) === '_all' || globMatcher(m.slice(1))(n))) return
    }
    if (!returned.has(n)) missing.add(n)
  })
  return [...missing].sort()
}

async function aliasesOf(ctx: RequestContext, expression: string | undefined, options: ResolveOptions) {
  await ctx.authorized(ALIAS_ACTIONS.get, expression, options)
  return ctx.store.getAlias({ ...(expression !== undefined ? { index: expression } : {}), ...options })
}

async function getAlias(ctx: RequestContext) {
  const expression = ctx.indexExpression()
  const rawNames = ctx.part('name')
  const names = rawNames
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const options = ctx.resolveOptions({ expand_wildcards: 'all' })
  const all = await aliasesOf(ctx, expression, options)
  const keep = aliasNameFilter(names)
  const out: Record<string, unknown> = {}
  const returned = new Set<string>()
  for (const [index, { aliases }] of Object.entries(all)) {
    const kept = Object.fromEntries(Object.entries(aliases ?? {}).filter(([a]) => keep(a)))
    Object.keys(kept).forEach((a) => returned.add(a))
    if (names === undefined || Object.keys(kept).length > 0) out[index] = { aliases: kept }
  }
  const missing = names ? missingAliases(names, returned) : []
  if (ctx.request.method === 'HEAD') return new Reply(missing.length === 0 && (names === undefined || returned.size > 0) ? 200 : 404, {})
  if (missing.length === 0) return out
  const error = missing.length === 1 ? `alias [${missing[0]}] missing` : `aliases [${missing.join(',')}] missing`
  return new Reply(404, { error, status: 404, ...out })
}

function actionTargets(action: AliasAction): { kind: 'add' | 'remove' | 'remove_index'; indices: string[] } {
  const [kind, spec] = Object.entries(action)[0] as ['add' | 'remove' | 'remove_index', { index?: string; indices?: string[] }]
  return { kind, indices: [...(spec.index !== undefined ? [spec.index] : []), ...(spec.indices ?? [])] }
}

async function updateAliases(ctx: RequestContext) {
  const body = await ctx.json()
  if (body === undefined) throw badRequest('Validation Failed: 1: no actions specified;', 'action_request_validation_exception')
  if (!Array.isArray(body.actions)) throw badRequest('[aliases] actions must be a list', 'parsing_exception')
  for (const action of body.actions) {
    const keys = action && typeof action === 'object' ? Object.keys(action) : []
    if (keys.length !== 1 || !['add', 'remove', 'remove_index'].includes(keys[0])) {
      throw badRequest(`[aliases] unknown alias action [${keys.join(',')}]`, 'parsing_exception')
    }
  }
  const parsed = validate<UpdateAliasesBody>(UpdateAliasesBody, body, 'aliases')
  if (parsed.actions.length === 0) throw badRequest('Validation Failed: 1: no actions specified;', 'action_request_validation_exception')
  for (const action of parsed.actions) {
    const spec = Object.values(action)[0] as { aliases?: string[]; index?: string; indices?: string[] }
    // Index names may be date math names; alias names may not (OpenSearch refuses `<` in them).
    if (spec.index !== undefined) spec.index = ctx.indexNames(spec.index)
    if (Array.isArray(spec.indices)) spec.indices = spec.indices.map((i) => ctx.indexNames(i))
    if (Array.isArray(spec.aliases) && spec.aliases.length === 0) throw badRequest("[aliases] can't be empty", 'illegal_argument_exception')
    if (Array.isArray(spec.indices) && spec.indices.length === 0) throw badRequest("[indices] can't be empty", 'illegal_argument_exception')
    const { kind, indices } = actionTargets(action)
    if (indices.length === 0)
      throw badRequest('Validation Failed: 1: One of [index] or [indices] is required;', 'action_request_validation_exception')
    const concrete = await ctx.store.resolve(indices, { expand_wildcards: 'all', ignore_unavailable: true, allow_no_indices: true })
    const targets = concrete.length > 0 ? concrete : indices
    ctx.deps.security.authorizeIndices(ctx.caller, ALIAS_ACTIONS.update, targets)
    if (kind === 'remove_index') ctx.deps.security.authorizeIndices(ctx.caller, ALIAS_ACTIONS.deleteIndex, targets)
  }
  return ctx.store.updateAliases({ body: parsed })
}

const PUT_ALIAS_KEYS = new Set(['index', 'indices', 'alias', 'aliases', 'must_exist', ...Object.keys(AliasDefinition.properties)])

/** `PUT /<index>/_alias/<name>`; the body may name the index and the alias too, and then wins over the path. */
async function putAlias(ctx: RequestContext) {
  const body = (await ctx.json()) ?? {}
  for (const key of Object.keys(body)) {
    if (!PUT_ALIAS_KEYS.has(key)) throw badRequest(`[alias] unknown field [${key}]`, 'x_content_parse_exception')
  }
  const { index: bodyIndex, indices, alias: bodyAlias, aliases, must_exist: _ignored, ...rest } = body
  const index =
    (bodyIndex as string | undefined) ?? (Array.isArray(indices) ? (indices as string[]).join(',') : undefined) ?? ctx.indexExpression()
  const name =
    (bodyAlias as string | undefined) ?? (Array.isArray(aliases) ? (aliases as string[]).join(',') : undefined) ?? ctx.part('name')
  if (!index) throw badRequest('Validation Failed: 1: One of [index] or [indices] is required;', 'action_request_validation_exception')
  if (!name) throw badRequest('Validation Failed: 1: One of [alias] or [aliases] is required;', 'action_request_validation_exception')
  const definition = validate<AliasDefinition>(AliasDefinition, rest, 'alias')
  const targets = index.split(',').filter(Boolean)
  await ctx.authorized(ALIAS_ACTIONS.update, targets.join(','), { expand_wildcards: 'all' })
  const actions = name
    .split(',')
    .filter(Boolean)
    .map((alias): AliasAction => ({ add: { indices: targets, alias, ...definition } }))
  return ctx.store.updateAliases({ body: { actions } })
}

async function deleteAlias(ctx: RequestContext) {
  const expression = ctx.indexExpression()!
  const names = ctx.part('name')!.split(',').filter(Boolean)
  const all = await ctx.store.getAlias({ index: expression, expand_wildcards: 'all' })
  const keep = aliasNameFilter(names)
  const actions: AliasAction[] = []
  for (const [index, { aliases }] of Object.entries(all)) {
    for (const alias of Object.keys(aliases ?? {})) if (keep(alias)) actions.push({ remove: { index, alias } })
  }
  if (actions.length === 0) throw new AliasesNotFound(names)
  ctx.deps.security.authorizeIndices(ctx.caller, ALIAS_ACTIONS.update, [
    ...new Set(actions.map((a) => (a as { remove: { index: string } }).remove.index)),
  ])
  return ctx.store.updateAliases({ body: { actions } })
}

export function aliasRoutes(r: IndexRouter): void {
  r.on('POST', '/_aliases', updateAliases)
  r.on(['GET', 'HEAD'], ['/_alias', '/_alias/:name', '/:index/_alias/:name', '/:index/_alias', '/_aliases', '/:index/_aliases'], getAlias)
  r.on(['PUT', 'POST'], ['/:index/_alias/:name', '/:index/_aliases/:name', '/_alias/:name', '/_aliases/:name'], putAlias)
  r.on('PUT', ['/:index/_alias', '/:index/_aliases', '/_alias'], putAlias)
  r.on('DELETE', ['/:index/_alias/:name', '/:index/_aliases/:name'], deleteAlias)
}

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

/** Does alias `alias` pass the requested name expression? Exclusions count only after the first wildcard. */
export function aliasNameFilter(names: string[] | undefined): (alias: string) => boolean {
  if (!names || names.length === 0) return () => true
  const firstWildcard = names.findIndex(isPattern)
  const cut = firstWildcard < 0 ? names.length : firstWildcard
  return (alias) => {
    let matched = false
    names.forEach((n, i) => {
      if (i > cut && n.startsWith('-')) {
        const p = n.slice(1)
        if (p === '_all' || globMatcher(p)(alias)) matched = false
      } else if (n === '_all' || globMatcher(n)(alias)) matched = true
    })
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
  const expression = ctx.part('index')
  const rawNames = ctx.part('name')
  const names = rawNames?.split(',').map((s) => s.trim()).filter(Boolean)
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
    const { kind, indices } = actionTargets(action)
    if (indices.length === 0) throw badRequest('Validation Failed: 1: One of [index] or [indices] is required;', 'action_request_validation_exception')
    const concrete = await ctx.store.resolve(indices, { expand_wildcards: 'all', ignore_unavailable: true, allow_no_indices: true })
    const targets = concrete.length > 0 ? concrete : indices
    ctx.deps.security.authorizeIndices(ctx.caller, ALIAS_ACTIONS.update, targets)
    if (kind === 'remove_index') ctx.deps.security.authorizeIndices(ctx.caller, ALIAS_ACTIONS.deleteIndex, targets)
  }
  return ctx.store.updateAliases({ body: parsed })
}

async function putAlias(ctx: RequestContext) {
  const index = ctx.part('index')!
  const name = ctx.part('name')!
  const body = (await ctx.json()) ?? {}
  const definition = validate<AliasDefinition>(AliasDefinition, body, 'alias')
  await ctx.authorized(ALIAS_ACTIONS.update, index, { expand_wildcards: 'all' })
  return ctx.store.updateAliases({ body: { actions: [{ add: { index, alias: name, ...definition } }] } })
}

async function deleteAlias(ctx: RequestContext) {
  const expression = ctx.part('index')!
  const names = ctx.part('name')!.split(',').filter(Boolean)
  const all = await ctx.store.getAlias({ index: expression, expand_wildcards: 'all' })
  const keep = aliasNameFilter(names)
  const actions: AliasAction[] = []
  for (const [index, { aliases }] of Object.entries(all)) {
    for (const alias of Object.keys(aliases ?? {})) if (keep(alias)) actions.push({ remove: { index, alias } })
  }
  if (actions.length === 0) throw new AliasesNotFound(names)
  ctx.deps.security.authorizeIndices(ctx.caller, ALIAS_ACTIONS.update, [...new Set(actions.map((a) => (a as { remove: { index: string } }).remove.index))])
  return ctx.store.updateAliases({ body: { actions } })
}

export function aliasRoutes(r: IndexRouter): void {
  r.on('POST', '/_aliases', updateAliases)
  r.on(['GET', 'HEAD'], ['/_alias', '/_alias/:name', '/:index/_alias/:name', '/:index/_alias', '/_aliases', '/:index/_aliases'], getAlias)
  r.on(['PUT', 'POST'], ['/:index/_alias/:name', '/:index/_aliases/:name'], putAlias)
  r.on('DELETE', ['/:index/_alias/:name', '/:index/_aliases/:name'], deleteAlias)
}

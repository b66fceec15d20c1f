/** The aliases API: `_aliases` actions in one transaction, and `_alias` reads. */
import { AliasesNotFound, ParsingError, StoreError } from '../errors'
import { hasWildcard, wildcardToRegExp } from '../names'
import type { Acknowledged, AliasDefinition, ResolveOptions, UpdateAliasesBody } from '../port'
import { isObject } from '../query/doc'
import { aliasesOf, checkWriteIndices, putAlias, removeAlias, validateAliasName } from './alias-entries'
import type { StoreCore } from './core'
import { dropIndex, namesForIndexOp } from './indices'

export async function updateAliases(core: StoreCore, params: { body: UpdateAliasesBody }): Promise<Acknowledged> {
  const actions = params.body?.actions
  if (!Array.isArray(actions) || actions.length === 0)
    throw new StoreError('action_request_validation_exception', 400, 'Validation Failed: 1: No action specified;')
  const parsed = actions.map((action) => {
    const [type] = Object.keys(action)
    const a = (action as Record<string, Record<string, unknown>>)[type]
    if (!isObject(a) || Object.keys(action).length !== 1) throw new ParsingError(`[aliases] failed to parse field [actions]`)
    const indexExprs = [...(a.index !== undefined ? [String(a.index)] : []), ...((a.indices as string[]) ?? [])]
    if (indexExprs.length === 0)
      throw new StoreError('action_request_validation_exception', 400, `Validation Failed: 1: One of [index] or [indices] is required;`)
    return { type, a, indexExprs }
  })
  core.tx(() => {
    // Like OpenSearch, every remove_index goes first, so that an index can be replaced by an
    // alias of the same name in one request; the other actions then see the state without it.
    const doomed = parsed.filter((p) => p.type === 'remove_index').flatMap((p) => namesForIndexOp(core, p.indexExprs, {}))
    for (const name of new Set(doomed)) dropIndex(core, core.indexMeta(name))
    for (const { type, a, indexExprs } of parsed) {
      if (type === 'remove_index') continue
      const aliasNames = [...(a.alias !== undefined ? [String(a.alias)] : []), ...((a.aliases as string[]) ?? [])]
      if (aliasNames.length === 0)
        throw new StoreError('action_request_validation_exception', 400, `Validation Failed: 1: One of [alias] or [aliases] is required;`)
      const targets = [...core.resolveTargets(indexExprs, { includeAliases: false, expand_wildcards: 'all' }).keys()]
      if (type === 'add') {
        for (const alias of aliasNames) {
          validateAliasName(alias)
          if (core.cat.byName.has(alias) || core.cat.streams.has(alias))
            throw new StoreError(
              'invalid_alias_name_exception',
              400,
              `Invalid alias name [${alias}]: an index or data stream exists with the same name as the alias`,
              {
                index: alias,
              },
            )
          for (const t of targets) putAlias(core, alias, core.indexMeta(t), a as AliasDefinition)
        }
      } else if (type === 'remove') {
        let removed = 0
        for (const pattern of aliasNames) {
          const re = wildcardToRegExp(pattern)
          for (const alias of [...core.cat.aliasMap.keys()])
            if (re.test(alias))
              for (const t of targets)
                if (core.cat.aliasMap.get(alias)?.has(t)) {
                  removeAlias(core, alias, core.indexMeta(t))
                  removed++
                }
        }
        if (removed === 0 && a.must_exist !== false) throw new AliasesNotFound(aliasNames)
      } else throw new ParsingError(`[aliases] unknown action [${type}]`)
    }
    checkWriteIndices(core)
  })
  return { acknowledged: true }
}

export async function getAlias(
  core: StoreCore,
  params: { index?: string | string[]; name?: string | string[] } & ResolveOptions = {},
): Promise<Record<string, { aliases: Record<string, AliasDefinition> }>> {
  const names = params.name === undefined ? undefined : (Array.isArray(params.name) ? params.name : params.name.split(',')).filter(Boolean)
  const wantsAll = names === undefined || names.includes('_all') || names.includes('*')
  const indices = core.resolveTargets(params.index, { ...params, defaultExpand: params.index === undefined && names ? 'all' : 'open' })
  const out: Record<string, { aliases: Record<string, AliasDefinition> }> = {}
  const found = new Set<string>()
  for (const index of indices.keys()) {
    const all = aliasesOf(core, index)
    const picked: Record<string, AliasDefinition> = {}
    for (const [alias, def] of Object.entries(all)) {
      if (!wantsAll && !matchesAliasPatterns(alias, names!)) continue
      picked[alias] = def
      found.add(alias)
    }
    if (Object.keys(picked).length > 0 || names === undefined) out[index] = { aliases: picked }
  }
  if (names && !wantsAll) {
    const missing = names.filter((n) => !hasWildcard(n) && !n.startsWith('-') && !found.has(n))
    if (missing.length > 0) throw new AliasesNotFound(missing)
  }
  return out
}

function matchesAliasPatterns(alias: string, patterns: string[]): boolean {
  let included = false
  for (const p of patterns) {
    if (p.startsWith('-')) {
      if (wildcardToRegExp(p.slice(1)).test(alias)) included = false
    } else if (wildcardToRegExp(p).test(alias)) included = true
  }
  return included
}

/** Alias entries of the catalog: one alias on one index, written inside the running transaction. */
import { IllegalArgument, StoreError } from '../errors'
import { FILE_NAME_CHARS, FILE_NAME_CHARS_TEXT } from '../names'
import type { AliasDefinition } from '../port'
import type { IndexMeta } from './catalog'
import type { StoreCore } from './core'

/** An alias definition as OpenSearch keeps it: `routing` becomes both `index_routing` and `search_routing`. */
export function aliasDefinition(def: AliasDefinition): AliasDefinition {
  const clean: AliasDefinition = {}
  if (def.filter !== undefined) clean.filter = def.filter
  if (def.routing !== undefined) {
    clean.index_routing = def.routing
    clean.search_routing = def.routing
  }
  if (def.index_routing !== undefined) clean.index_routing = def.index_routing
  if (def.search_routing !== undefined) clean.search_routing = def.search_routing
  if (def.is_write_index !== undefined) clean.is_write_index = def.is_write_index
  if (def.is_hidden !== undefined) clean.is_hidden = def.is_hidden
  return clean
}

export function putAlias(core: StoreCore, alias: string, meta: IndexMeta, def: AliasDefinition): void {
  const clean = aliasDefinition(def)
  core.db.query('INSERT OR REPLACE INTO aliases (alias, ix, def) VALUES (?, ?, ?)').run(alias, meta.ix, JSON.stringify(clean))
  let m = core.cat.aliasMap.get(alias)
  if (!m) core.cat.aliasMap.set(alias, (m = new Map()))
  const before = m.get(meta.name)
  m.set(meta.name, clean)
  const map = m
  core.onUndo(() => {
    if (before) map.set(meta.name, before)
    else map.delete(meta.name)
    if (map.size === 0) core.cat.aliasMap.delete(alias)
  })
}

export function removeAlias(core: StoreCore, alias: string, meta: IndexMeta): void {
  const m = core.cat.aliasMap.get(alias)
  const before = m?.get(meta.name)
  if (!m || !before) return
  core.db.query('DELETE FROM aliases WHERE alias = ? AND ix = ?').run(alias, meta.ix)
  m.delete(meta.name)
  if (m.size === 0) core.cat.aliasMap.delete(alias)
  core.onUndo(() => {
    let mm = core.cat.aliasMap.get(alias)
    if (!mm) core.cat.aliasMap.set(alias, (mm = new Map()))
    mm.set(meta.name, before)
  })
}

/** OpenSearch allows at most one write index per alias. */
export function checkWriteIndices(core: StoreCore): void {
  for (const [alias, m] of core.cat.aliasMap) {
    const writers = [...m.entries()].filter(([, d]) => d.is_write_index === true).map(([i]) => i)
    if (writers.length > 1) throw new IllegalArgument(`alias [${alias}] has more than one write index [${writers.sort().join(',')}]`)
  }
}

export function aliasesOf(core: StoreCore, index: string): Record<string, AliasDefinition> {
  const out: Record<string, AliasDefinition> = {}
  for (const [alias, m] of [...core.cat.aliasMap].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const def = m.get(index)
    if (def) out[alias] = structuredClone(def)
  }
  return out
}

/** OpenSearch's name checks of an alias (MetadataCreateIndexService.validateIndexOrAliasName), the first that fails. */
const ALIAS_NAME_RULES: Array<[(alias: string) => boolean, string]> = [
  [(a) => a === '', 'must not be empty'],
  [(a) => FILE_NAME_CHARS.some((c) => a.includes(c)), `must not contain the following characters ${FILE_NAME_CHARS_TEXT}`],
  [(a) => a.includes('#'), "must not contain '#'"],
  [(a) => a.includes(':'), "must not contain ':'"],
  [(a) => /^[-_+]/.test(a), "must not start with '_', '-', or '+'"],
]

export function validateAliasName(alias: string): void {
  const broken = ALIAS_NAME_RULES.find(([fails]) => fails(alias))
  if (broken) throw new StoreError('invalid_alias_name_exception', 400, `Invalid alias name [${alias}]: ${broken[1]}`)
}

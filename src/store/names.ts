/** Index-name rules and the resolution of index expressions, as OpenSearch's IndexNameExpressionResolver. */
import { IndexClosed, IndexNotFound, InvalidIndexName } from './errors'
import type { ResolveOptions } from './port'

const BAD_CHARS = ['\\', '/', '*', '?', '"', '<', '>', '|', ' ', ',', '#', ':']

export function validateIndexName(name: string): void {
  if (name === '') throw new InvalidIndexName(name, 'must not be empty')
  if (name !== name.toLowerCase()) throw new InvalidIndexName(name, 'must be lowercase')
  for (const c of BAD_CHARS)
    if (name.includes(c)) throw new InvalidIndexName(name, `must not contain the following characters [${BAD_CHARS.join(', ')}]`)
  if (name.startsWith('_') || name.startsWith('-') || name.startsWith('+'))
    throw new InvalidIndexName(name, "must not start with '_', '-', or '+'")
  if (name === '.' || name === '..') throw new InvalidIndexName(name, "must not be '.' or '..'")
  if (new TextEncoder().encode(name).length > 255) throw new InvalidIndexName(name, 'index name is too long, (> 255)')
}

export interface WildcardOptions {
  open: boolean
  closed: boolean
  hidden: boolean
}

export function expandOptions(o: ResolveOptions | undefined, defaults = 'open'): WildcardOptions {
  const raw = o?.expand_wildcards ?? defaults
  const list = (Array.isArray(raw) ? raw : String(raw).split(',')).map((s) => s.trim())
  const all = list.includes('all')
  return { open: all || list.includes('open'), closed: all || list.includes('closed'), hidden: all || list.includes('hidden') }
}

const reCache = new Map<string, RegExp>()
export function wildcardToRegExp(pattern: string): RegExp {
  let re = reCache.get(pattern)
  if (!re) {
    re = new RegExp(
      `^${pattern
        .split('*')
        .map((s) => s.replace(/[\\^$.+?()[\]{}|/]/g, '\\$&'))
        .join('.*')}$`,
      's',
    )
    if (reCache.size < 10_000) reCache.set(pattern, re)
  }
  return re
}

export const hasWildcard = (s: string) => s.includes('*')

/** What the resolver needs to know about the catalog. */
export interface Namespace {
  indices: Iterable<{ name: string; hidden: boolean; closed?: boolean }>
  /** alias -> index -> {hidden, filter} */
  aliases: Iterable<{ alias: string; index: string; hidden: boolean; filter?: Record<string, unknown> }>
  dataStreams: Iterable<{ name: string; indices: string[] }>
  isIndex(name: string): boolean
  /** Undefined when the index is open (or absent); its uuid when it is closed. */
  closedUuid?(name: string): string | undefined
  alias(name: string): Array<{ index: string; filter?: Record<string, unknown> }>
  dataStream(name: string): { name: string; indices: string[] } | undefined
}

export interface ResolveRequest extends ResolveOptions {
  includeDataStreams?: boolean
  includeAliases?: boolean
  defaultExpand?: string
  /**
   * For operations on data (search, documents, refresh): a closed index named directly or
   * through an alias fails with index_closed_exception (skipped with ignore_unavailable), and
   * wildcards never expand to closed indices.
   */
  forbidClosed?: boolean
}

/**
 * Concrete indices for an expression, each with the alias filters that apply to it
 * (`filters === null`: reached directly or through an unfiltered alias, so no filter).
 */
export function resolveExpression(
  ns: Namespace,
  expression: string | string[] | undefined,
  req: ResolveRequest = {},
): Map<string, Array<Record<string, unknown>> | null> {
  const opts = expandOptions(req, req.defaultExpand)
  const ignoreUnavailable = req.ignore_unavailable === true
  const allowNoIndices = req.allow_no_indices !== false
  const includeDs = req.includeDataStreams !== false
  const includeAliases = req.includeAliases !== false
  const forbidClosed = req.forbidClosed === true
  let parts = (Array.isArray(expression) ? expression : expression === undefined ? [] : [expression])
    .flatMap((e) => e.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '')
  if (parts.length === 0 || (parts.length === 1 && parts[0] === '_all')) parts = ['*']

  const out = new Map<string, Array<Record<string, unknown>> | null>()
  const add = (index: string, filter?: Record<string, unknown>) => {
    if (forbidClosed) {
      const uuid = ns.closedUuid?.(index)
      if (uuid !== undefined) {
        if (ignoreUnavailable) return
        throw new IndexClosed(index, uuid)
      }
    }
    const cur = out.get(index)
    if (filter === undefined) out.set(index, null)
    else if (cur === undefined) out.set(index, [filter])
    else if (cur !== null) cur.push(filter)
  }
  // Listing the catalog is only needed for wildcards; literal names are looked up directly.
  let lists:
    | {
        ds: Array<{ name: string; indices: string[] }>
        aliases: ReturnType<typeof aliasesOf>
        indices: Array<{ name: string; hidden: boolean }>
      }
    | undefined
  const aliasesOf = () => (includeAliases ? [...ns.aliases] : [])
  const all = () => (lists ??= { ds: includeDs ? [...ns.dataStreams] : [], aliases: aliasesOf(), indices: [...ns.indices] })
  let wildcardSeen = false

  for (const part of parts) {
    if (part.startsWith('-') && wildcardSeen) {
      const re = wildcardToRegExp(part.slice(1))
      const { ds: dsList, aliases: aliasList } = all()
      for (const name of [...out.keys()]) if (re.test(name)) out.delete(name)
      for (const ds of dsList) if (re.test(ds.name)) for (const i of ds.indices) out.delete(i)
      for (const a of aliasList) if (re.test(a.alias)) out.delete(a.index)
      continue
    }
    if (hasWildcard(part)) {
      wildcardSeen = true
      if (!opts.open && !opts.hidden && !opts.closed) continue
      const re = wildcardToRegExp(part)
      const { ds: dsList, aliases: aliasList, indices: indexList } = all()
      // Hidden things match a wildcard only with expand_wildcards=hidden, or a dot-pattern for a dot-name.
      const visible = (name: string, hidden: boolean) =>
        hidden ? opts.hidden || (part.startsWith('.') && name.startsWith('.')) : opts.open
      // Closed indices match only with expand_wildcards=closed (and never for data operations).
      const stateOk = (ix: { name: string; hidden: boolean; closed?: boolean }) =>
        ix.closed ? opts.closed && !forbidClosed && (!ix.hidden || visible(ix.name, true)) : visible(ix.name, ix.hidden)
      let matched = false
      for (const ix of indexList)
        if (re.test(ix.name) && stateOk(ix)) {
          add(ix.name)
          matched = true
        }
      // What an alias or data stream matched by a wildcard leads to follows the same state rule.
      const reachable = (index: string) => ns.closedUuid?.(index) === undefined || (opts.closed && !forbidClosed)
      for (const a of aliasList)
        if (re.test(a.alias) && visible(a.alias, a.hidden)) {
          if (reachable(a.index)) add(a.index, a.filter)
          matched = true
        }
      for (const ds of dsList)
        if (re.test(ds.name) && visible(ds.name, false)) {
          for (const i of ds.indices) if (reachable(i)) add(i)
          matched = true
        }
      if (!matched && !allowNoIndices) throw new IndexNotFound(part)
      continue
    }
    if (ns.isIndex(part)) {
      add(part)
      continue
    }
    const viaAlias = includeAliases ? ns.alias(part) : []
    if (viaAlias.length > 0) {
      for (const a of viaAlias) add(a.index, a.filter)
      continue
    }
    const ds = includeDs ? ns.dataStream(part) : undefined
    if (ds) {
      for (const i of ds.indices) add(i)
      continue
    }
    // Names starting with `_` are reserved for APIs: an unknown one is a bad request, not a missing
    // index, and ignore_unavailable does not skip it (as in OpenSearch).
    if (part.startsWith('_')) throw new InvalidIndexName(part, "must not start with '_'.")
    if (!ignoreUnavailable) throw new IndexNotFound(part)
  }
  if (out.size === 0 && !allowNoIndices) throw new IndexNotFound(parts.join(','))
  return new Map([...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

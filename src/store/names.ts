/** Index-name rules and the resolution of index expressions, as OpenSearch's IndexNameExpressionResolver. */
import { IllegalArgument, IndexClosed, IndexNotFound, InvalidIndexName } from './errors'
import type { ResolveOptions } from './port'

const BAD_CHARS = ['\\', '/', '*', '?', '"', '<', '>', '|', ' ', ',', '#', ':']

/** Java's Strings.INVALID_FILENAME_CHARS, which alias names must not hold (template patterns but `*`), and the set as OpenSearch prints it. */
export const FILE_NAME_CHARS = ['\\', '/', '*', '?', '"', '<', '>', '|', ' ', ',']
export const FILE_NAME_CHARS_TEXT = '[ , ", *, \\, <, |, ,, >, /, ?]'

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
  let parts = (Array.isArray(expression) ? expression : expression === undefined ? [] : [expression])
    .flatMap((e) => e.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '')
  if (parts.length === 0 || (parts.length === 1 && parts[0] === '_all')) parts = ['*']
  const r = new Resolution(ns, req)
  let wildcardSeen = false
  for (const part of parts) {
    if (part.startsWith('-') && wildcardSeen) r.exclude(part.slice(1))
    else if (hasWildcard(part)) {
      wildcardSeen = true
      r.wildcard(part)
    } else r.literal(part)
  }
  if (r.out.size === 0 && !r.allowNoIndices) throw new IndexNotFound(parts.join(','))
  return new Map([...r.out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

/** One expression being resolved, part by part, into `out`. */
class Resolution {
  readonly out = new Map<string, Array<Record<string, unknown>> | null>()
  readonly allowNoIndices: boolean
  private readonly opts: ReturnType<typeof expandOptions>
  private readonly ignoreUnavailable: boolean
  private readonly includeDs: boolean
  private readonly includeAliases: boolean
  private readonly forbidClosed: boolean
  // Listing the catalog is only needed for wildcards; literal names are looked up directly.
  private lists:
    | {
        ds: Array<{ name: string; indices: string[] }>
        aliases: Array<{ alias: string; index: string; hidden: boolean; filter?: Record<string, unknown> }>
        indices: Array<{ name: string; hidden: boolean; closed?: boolean }>
      }
    | undefined

  constructor(
    private readonly ns: Namespace,
    req: ResolveRequest,
  ) {
    this.opts = expandOptions(req, req.defaultExpand)
    this.ignoreUnavailable = req.ignore_unavailable === true
    this.allowNoIndices = req.allow_no_indices !== false
    this.includeDs = req.includeDataStreams !== false
    this.includeAliases = req.includeAliases !== false
    this.forbidClosed = req.forbidClosed === true
  }

  private all() {
    const { ns } = this
    return (this.lists ??= {
      ds: this.includeDs ? [...ns.dataStreams] : [],
      aliases: this.includeAliases ? [...ns.aliases] : [],
      indices: [...ns.indices],
    })
  }

  private add(index: string, filter?: Record<string, unknown>): void {
    if (this.forbidClosed) {
      const uuid = this.ns.closedUuid?.(index)
      if (uuid !== undefined) {
        if (this.ignoreUnavailable) return
        // Closed indices alone asked for, where no closed index may be read: the request contradicts itself.
        if (this.opts.closed && !this.opts.open && !this.opts.hidden)
          throw new IllegalArgument('To expand [CLOSE] wildcard, please set forbid_closed_indices to `false`')
        throw new IndexClosed(index, uuid)
      }
    }
    const cur = this.out.get(index)
    if (filter === undefined) this.out.set(index, null)
    else if (cur === undefined) this.out.set(index, [filter])
    else if (cur !== null) cur.push(filter)
  }

  /** `-pattern` after a wildcard: takes out what it names. */
  exclude(pattern: string): void {
    const re = wildcardToRegExp(pattern)
    const { ds: dsList, aliases: aliasList } = this.all()
    for (const name of [...this.out.keys()]) if (re.test(name)) this.out.delete(name)
    for (const ds of dsList) if (re.test(ds.name)) for (const i of ds.indices) this.out.delete(i)
    for (const a of aliasList) if (re.test(a.alias)) this.out.delete(a.index)
  }

  wildcard(part: string): void {
    const { opts, ns } = this
    if (!opts.open && !opts.hidden && !opts.closed) return
    const re = wildcardToRegExp(part)
    const { ds: dsList, aliases: aliasList, indices: indexList } = this.all()
    // Hidden things match a wildcard only with expand_wildcards=hidden, or a dot-pattern for a dot-name.
    const visible = (name: string, hidden: boolean) => (hidden ? opts.hidden || (part.startsWith('.') && name.startsWith('.')) : opts.open)
    // Closed indices match only with expand_wildcards=closed; a data operation then fails on them (add).
    const stateOk = (ix: { name: string; hidden: boolean; closed?: boolean }) =>
      ix.closed ? opts.closed && (!ix.hidden || visible(ix.name, true)) : visible(ix.name, ix.hidden)
    let matched = false
    for (const ix of indexList)
      if (re.test(ix.name) && stateOk(ix)) {
        this.add(ix.name)
        matched = true
      }
    // What an alias or data stream matched by a wildcard leads to follows the same state rule.
    const reachable = (index: string) => ns.closedUuid?.(index) === undefined || opts.closed
    for (const a of aliasList)
      if (re.test(a.alias) && visible(a.alias, a.hidden)) {
        if (reachable(a.index)) this.add(a.index, a.filter)
        matched = true
      }
    for (const ds of dsList)
      if (re.test(ds.name) && visible(ds.name, false)) {
        for (const i of ds.indices) if (reachable(i)) this.add(i)
        matched = true
      }
    if (!matched && !this.allowNoIndices) throw new IndexNotFound(part)
  }

  /** A name: an index, an alias or a data stream. */
  literal(part: string): void {
    const { ns } = this
    if (ns.isIndex(part)) return this.add(part)
    const viaAlias = this.includeAliases ? ns.alias(part) : []
    if (viaAlias.length > 0) {
      for (const a of viaAlias) this.add(a.index, a.filter)
      return
    }
    const ds = this.includeDs ? ns.dataStream(part) : undefined
    if (ds) {
      for (const i of ds.indices) this.add(i)
      return
    }
    // Names starting with `_` are reserved for APIs: an unknown one is a bad request, not a missing
    // index, and ignore_unavailable does not skip it (as in OpenSearch).
    if (part.startsWith('_')) throw new InvalidIndexName(part, "must not start with '_'.")
    if (!this.ignoreUnavailable) throw new IndexNotFound(part)
  }
}

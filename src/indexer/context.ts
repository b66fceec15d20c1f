/**
 * What every index API handler gets: the authenticated caller, typed access to the query
 * string and body, and the one way to reach indices (resolve, then authorize the concrete
 * names), so no route can read an index it was not authorized for.
 */
import type { StatusCounter } from './status-counter'
import type { ClusterSettings } from '../config/cluster-settings'
import type { NodeConfig } from '../config/node-config'
import { readBody, type BodyLimit } from '../http/body'
import { OpenSearchHttpError } from '../http/errors'
import type { Logger } from '../http/log'
import { noPermissions, type Caller, type Security } from '../http/caller'
import { SYSTEM_INDICES } from '../setup/indices/names'
import type { Query, ResolveOptions, Store } from '../store/port'
import { resolveDateMathExpression } from '../store/date-math-names'

export interface IndexApiDeps {
  store: Store
  security: Security
  settings: ClusterSettings
  node: NodeConfig
  log: Logger
  now: () => number
  /**
   * A filter a feature puts on reads of some indices besides DLS (filter_by_backend_roles on
   * findings); undefined when nothing applies to these indices for this caller.
   */
  readFilter?: (caller: Caller, indices: string[]) => Promise<Query | undefined>
  /** The node's document and search outcomes (status-counter.ts); the index API makes one when not given. */
  statusCounter?: StatusCounter
}

/** 10 MiB for every JSON body but bulk, whose limit is the node's http.max_body_bytes. */
export const JSON_BODY_LIMIT = 10 * 1024 * 1024

export function badRequest(reason: string, type = 'illegal_argument_exception'): OpenSearchHttpError {
  return new OpenSearchHttpError(400, type, reason)
}

const decoder = new TextDecoder('utf-8', { fatal: true })

/** OpenSearch's answer to a URL parameter that is not a number (Java's NumberFormatException as the cause). */
const unparsable = (kind: 'int' | 'float', name: string, v: string) =>
  new OpenSearchHttpError(400, 'illegal_argument_exception', `Failed to parse ${kind} parameter [${name}] with value [${v}]`, {
    caused_by: {
      type: 'number_format_exception',
      reason: kind === 'float' && v.trim() === '' ? 'empty String' : `For input string: "${v}"`,
    },
  })

/** Path parts that name indices: OpenSearch reads date math names (`<logs-{now/d}>`) there. */
const INDEX_PARTS = new Set(['index'])

export class RequestContext {
  readonly url: URL
  readonly query: URLSearchParams
  /** When the request came: the `now` of every date math index name it holds, as in OpenSearch. */
  readonly started: number

  constructor(
    readonly deps: IndexApiDeps,
    readonly request: Request,
    readonly params: Record<string, string>,
    readonly caller: Caller,
  ) {
    this.url = new URL(request.url)
    this.query = this.url.searchParams
    this.started = deps.now()
  }

  get store(): Store {
    return this.deps.store
  }

  // ---- query string ------------------------------------------------------------------------

  str(name: string): string | undefined {
    return this.query.get(name) ?? undefined
  }

  /** OpenSearch booleans: a bare `?flag` and `true` are true, `false` is false, anything else is a 400. */
  flag(name: string): boolean | undefined
  flag(name: string, fallback: boolean): boolean
  flag(name: string, fallback?: boolean): boolean | undefined {
    const v = this.query.get(name)
    if (v === null) return fallback
    if (v === '' || v === 'true') return true
    if (v === 'false') return false
    throw badRequest(`Failed to parse value [${v}] as only [true] or [false] are allowed.`)
  }

  int(name: string): number | undefined {
    const v = this.query.get(name)
    if (v === null) return undefined
    if (!/^-?\d+$/.test(v.trim())) throw unparsable('int', name, v)
    return Number(v)
  }

  float(name: string): number | undefined {
    const v = this.query.get(name)
    if (v === null) return undefined
    const n = v.trim() === '' ? NaN : Number(v)
    if (Number.isNaN(n)) throw unparsable('float', name, v)
    return n
  }

  list(name: string): string[] | undefined {
    const v = this.query.get(name)
    if (v === null) return undefined
    return v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
  }

  /** `expand_wildcards`, `ignore_unavailable`, `allow_no_indices` as the Store takes them. */
  resolveOptions(defaults: ResolveOptions = {}): ResolveOptions {
    const out: ResolveOptions = { ...defaults }
    const expand = this.str('expand_wildcards')
    if (expand !== undefined) {
      for (const e of expand.split(',')) {
        if (!['open', 'closed', 'hidden', 'none', 'all'].includes(e.trim())) {
          throw badRequest(`No enum constant org.opensearch.action.support.IndicesOptions.WildcardStates.${e.trim().toUpperCase()}`)
        }
      }
      out.expand_wildcards = expand
    }
    const iu = this.flag('ignore_unavailable')
    if (iu !== undefined) out.ignore_unavailable = iu
    const ani = this.flag('allow_no_indices')
    if (ani !== undefined) out.allow_no_indices = ani
    return out
  }

  // ---- path --------------------------------------------------------------------------------

  /** A path part, percent-decoded (Elysia hands them over raw); an index expression's date math names resolved. */
  part(name: string): string | undefined {
    const raw = this.params[name]
    if (raw === undefined) return undefined
    let decoded = raw
    try {
      decoded = decodeURIComponent(raw)
    } catch {}
    return INDEX_PARTS.has(name) ? this.indexNames(decoded) : decoded
  }

  /**
   * Index names or an expression the request gives (path, body, bulk lines) with their date math
   * names resolved: the one step every name takes before resolution and authorization.
   */
  indexNames(expression: string): string {
    return resolveDateMathExpression(expression, this.started)
  }

  /**
   * An index expression from the path with the system indices cut out of its wildcard
   * expansions, as the security plugin's system-index protection does: `*` never reaches
   * `.svc-internal-state`, naming it explicitly still does (and is then refused).
   */
  indexExpression(name = 'index'): string | undefined {
    return withoutSystemIndices(this.part(name))
  }

  // ---- body --------------------------------------------------------------------------------

  async text(limit: BodyLimit = { limit: JSON_BODY_LIMIT, status: 413 }): Promise<string> {
    const bytes = await readBody(this.request, limit)
    try {
      return decoder.decode(bytes)
    } catch {
      throw badRequest('request body is not valid UTF-8', 'parsing_exception')
    }
  }

  /** The JSON object body, or undefined when there is none. Malformed JSON is a 400, never a 500. */
  async json(): Promise<Record<string, unknown> | undefined> {
    const text = await this.text()
    if (text.trim() === '') return undefined
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (e) {
      throw badRequest(`Failed to parse the request body: ${(e as Error).message}`, 'parse_exception')
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw badRequest('request body is required to be a JSON object', 'parse_exception')
    }
    return value as Record<string, unknown>
  }

  // ---- authorization -----------------------------------------------------------------------

  /** Checks a cluster-level action for the caller (403 in OpenSearch's shape otherwise). */
  async authorizeCluster(action: string): Promise<void> {
    if (!this.deps.security.hasClusterPermission(this.caller, action)) {
      throw forbidden(action, this.caller)
    }
  }

  /**
   * Resolves an index expression to concrete indices and authorizes the action on each.
   * Resolution errors (missing index) surface as the Store's typed errors.
   */
  async authorized(action: string, expression: string | undefined, options: ResolveOptions = {}): Promise<string[]> {
    const indices = await this.store.resolve(expression, options)
    this.deps.security.authorizeIndices(this.caller, action, indices)
    return indices
  }

  /**
   * The concrete indices a write to `name` lands in: the alias's or data stream's indices, or
   * the name itself when it does not exist yet (the write will create it).
   */
  async writeTargets(name: string): Promise<string[]> {
    const indices = await this.store.resolve(name, { ignore_unavailable: true, allow_no_indices: true, expand_wildcards: 'all' })
    return indices.length > 0 ? indices : [name]
  }

  async authorizeWrite(action: string, name: string): Promise<string[]> {
    const indices = await this.writeTargets(name)
    this.deps.security.authorizeIndices(this.caller, action, indices)
    return indices
  }

  documentFilter(index: string): Record<string, unknown> | undefined {
    return this.deps.security.documentFilter(this.caller, index)
  }
}

export function withoutSystemIndices(expression: string | undefined): string | undefined {
  const parts = (expression ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
  const all = parts.length === 0 || (parts.length === 1 && parts[0] === '_all')
  if (!all && !parts.some((p) => p.includes('*'))) return expression
  const base = all ? ['*'] : parts
  return [...base, ...SYSTEM_INDICES.map((i) => `-${i}`)].join(',')
}

export function forbidden(action: string, caller: Caller): OpenSearchHttpError {
  return new OpenSearchHttpError(403, 'security_exception', noPermissions(action, caller))
}

/**
 * OpenSearch error bodies rebuilt into the Store's typed errors, so features catch
 * `VersionConflict` or `IndexNotFound` whichever adapter answered. Only the response body is
 * used: the client's own error objects carry the request (and its Authorization header).
 */
import {
  AliasesNotFound,
  AlreadyExists,
  DocumentMissing,
  IllegalArgument,
  IndexClosed,
  IndexNotFound,
  InvalidIndexName,
  MapperParsing,
  ParsingError,
  LifecycleUnavailable,
  QueryShardError,
  ResourceNotFound,
  SearchContextMissing,
  StoreError,
  StrictMappingViolation,
  VersionConflict,
} from '../errors'
import { isObject } from '../../json'

type StoreErrorClass = abstract new (...args: never[]) => StoreError

const CLASSES: Record<string, StoreErrorClass> = {
  version_conflict_engine_exception: VersionConflict,
  index_not_found_exception: IndexNotFound,
  document_missing_exception: DocumentMissing,
  index_closed_exception: IndexClosed,
  resource_already_exists_exception: AlreadyExists,
  strict_dynamic_mapping_exception: StrictMappingViolation,
  mapper_parsing_exception: MapperParsing,
  illegal_argument_exception: IllegalArgument,
  parsing_exception: ParsingError,
  invalid_index_name_exception: InvalidIndexName,
  resource_not_found_exception: ResourceNotFound,
  aliases_not_found_exception: AliasesNotFound,
  search_context_missing_exception: SearchContextMissing,
  query_shard_exception: QueryShardError,
}

/**
 * Exceptions that only say where a failure happened; the cause inside them is what callers
 * handle (a sort on a text field is a `search_phase_execution_exception` around an
 * `illegal_argument_exception`, an expired PIT one around `search_context_missing_exception`).
 */
const WRAPPERS = new Set(['search_phase_execution_exception', 'remote_transport_exception', 'transport_serialization_exception'])

interface ErrorObject {
  type?: unknown
  reason?: unknown
  root_cause?: unknown
  caused_by?: unknown
  [key: string]: unknown
}

/** The innermost meaningful cause of a wrapper exception. */
function unwrap(error: ErrorObject): ErrorObject {
  let current = error
  for (let depth = 0; depth < 8 && WRAPPERS.has(String(current.type)); depth++) {
    const roots = Array.isArray(current.root_cause) ? current.root_cause.filter(isObject) : []
    const next = isObject<ErrorObject>(current.caused_by) ? current.caused_by : roots.find((r) => !WRAPPERS.has(String(r.type)))
    if (!next) break
    current = next
  }
  return current
}

/** A typed error built exactly as the platform described it (type, status, reason, metadata). */
export function storeErrorFrom(status: number, body: unknown): StoreError {
  const raw = isObject<ErrorObject>(body) ? body.error : undefined
  if (typeof raw === 'string') {
    // GET _alias answers a missing alias with a bare message, not an exception object.
    const missing = /^alias(?:es)? \[(.*)\] missing$/.exec(raw)
    if (missing && status === 404) return new AliasesNotFound(missing[1].split(','))
  }
  if (!isObject<ErrorObject>(raw)) {
    // Not an OpenSearch error body (a proxy's HTML page, a bare string): keep the status, say what came.
    const text = (typeof raw === 'string' ? raw : typeof body === 'string' ? body.slice(0, 200) : '') || `HTTP ${status}`
    if (/^no handler found for uri \[\/_(?:plugins|opendistro)\/_ism\//.test(text)) return new LifecycleUnavailable(text)
    return new StoreError(status === 401 || status === 403 ? 'security_exception' : 'platform_exception', status, text)
  }
  const error = unwrap(raw)
  const type = String(error.type ?? 'exception')
  const reason = String(error.reason ?? type)
  const { type: _t, reason: _r, root_cause: _rc, ...metadata } = error
  const effectiveStatus = error === raw ? status : statusOf(type, status)
  const cls = CLASSES[type] ?? StoreError
  // Each subclass only fixes the arguments of StoreError's constructor; construct with the platform's own values.
  return Reflect.construct(StoreError, [type, effectiveStatus, reason, metadata], cls) as StoreError
}

/** The status OpenSearch gives an unwrapped cause (the wrapper's status is derived from it anyway). */
function statusOf(type: string, fallback: number): number {
  if (type === 'search_context_missing_exception' || type === 'index_not_found_exception') return 404
  return fallback
}

/** The platform could not be reached (refused, reset, timed out): a 503 the callers treat as transient. */
export function unavailable(error: unknown): StoreError {
  const name = error instanceof Error ? error.name : 'Error'
  const message = error instanceof Error ? error.message : String(error)
  return new StoreError('platform_unavailable_exception', 503, `platform not reachable (${name}: ${message})`)
}

/**
 * Typed store errors. Each one carries OpenSearch's error `type` string and HTTP status so the
 * index API can answer `{error: {root_cause, type, reason, ...}, status}` without a lookup table,
 * and a platform adapter can rebuild the same class from an OpenSearch error body.
 */
export class StoreError extends Error {
  readonly type: string
  readonly status: number
  readonly reason: string
  /** Extra keys OpenSearch puts next to `type`/`reason` (`index`, `index_uuid`, `resource.id`, ...). */
  readonly metadata: Record<string, unknown>

  constructor(type: string, status: number, reason: string, metadata: Record<string, unknown> = {}) {
    super(reason)
    this.name = new.target.name
    this.type = type
    this.status = status
    this.reason = reason
    this.metadata = metadata
  }

  /** The `error` object of OpenSearch's REST error body. */
  toOpenSearch(): { root_cause: Record<string, unknown>[]; type: string; reason: string; [k: string]: unknown } {
    const { caused_by, ...rest } = this.metadata
    const cause = { type: this.type, reason: this.reason, ...rest }
    // A root cause is the error alone: what it wraps is only beside it.
    return { root_cause: [cause], ...cause, ...(caused_by === undefined ? {} : { caused_by }) }
  }
}

/** A request field OpenSearch's parser refused (`[rare_terms] failed to parse field [max_doc_count]`), with why. */
export class FieldParseError extends StoreError {
  constructor(object: string, field: string, why?: string) {
    super(
      'x_content_parse_exception',
      400,
      `[${object}] failed to parse field [${field}]`,
      why === undefined ? {} : { caused_by: { type: 'illegal_argument_exception', reason: why } },
    )
  }
}

const indexMeta = (index: string, uuid = '_na_') => ({ index_uuid: uuid, index })

export class VersionConflict extends StoreError {
  constructor(reason: string, index: string, uuid?: string) {
    super('version_conflict_engine_exception', 409, reason, { ...indexMeta(index, uuid), shard: '0' })
  }
}

export class IndexNotFound extends StoreError {
  /** `kind`: what the name was read as (a multi-get reads each item's index as an expression). */
  constructor(
    readonly index: string,
    kind: 'index_or_alias' | 'index_expression' = 'index_or_alias',
  ) {
    super('index_not_found_exception', 404, `no such index [${index}]`, {
      'resource.type': kind,
      'resource.id': index,
      ...indexMeta(index),
    })
  }
}

export class DocumentMissing extends StoreError {
  constructor(index: string, id: string, uuid?: string) {
    super('document_missing_exception', 404, `[${id}]: document missing`, { ...indexMeta(index, uuid), shard: '0' })
  }
}

/** An update of a document its index keeps no source of (`_source: {enabled: false}`). */
export class DocumentSourceMissing extends StoreError {
  constructor(index: string, id: string, uuid?: string) {
    super('document_source_missing_exception', 400, `[${id}]: document source missing`, { ...indexMeta(index, uuid), shard: '0' })
  }
}

export class IndexClosed extends StoreError {
  constructor(index: string, uuid?: string) {
    super('index_closed_exception', 400, 'closed', indexMeta(index, uuid))
  }
}

export class AlreadyExists extends StoreError {
  constructor(reason: string, index?: string, uuid?: string) {
    super('resource_already_exists_exception', 400, reason, index === undefined ? {} : indexMeta(index, uuid))
  }
}

export class StrictMappingViolation extends StoreError {
  constructor(field: string, parent = '_doc', mode = 'strict') {
    super(
      'strict_dynamic_mapping_exception',
      400,
      `mapping set to ${mode}, dynamic introduction of [${field}] within [${parent}] is not allowed`,
    )
  }
}

export class MapperParsing extends StoreError {
  /** `inner` becomes OpenSearch's `caused_by` (e.g. the illegal_argument_exception under a mapping failure). */
  constructor(
    reason: string,
    private readonly inner?: StoreError,
  ) {
    super(
      'mapper_parsing_exception',
      400,
      reason,
      inner ? { caused_by: { type: inner.type, reason: inner.reason, ...inner.metadata } } : {},
    )
  }

  /** OpenSearch's root cause is the deepest of its own exceptions: a mapping failure under this one, not a Java one. */
  override toOpenSearch(): ReturnType<StoreError['toOpenSearch']> {
    const out = super.toOpenSearch()
    return this.inner instanceof MapperParsing ? { ...out, root_cause: this.inner.toOpenSearch().root_cause } : out
  }
}

export class IllegalArgument extends StoreError {
  constructor(reason: string) {
    super('illegal_argument_exception', 400, reason)
  }
}

export class ParsingError extends StoreError {
  constructor(reason: string) {
    super('parsing_exception', 400, reason)
  }
}

export class InvalidIndexName extends StoreError {
  constructor(index: string, why: string) {
    super('invalid_index_name_exception', 400, `Invalid index name [${index}], ${why}`, indexMeta(index))
  }
}

/** A missing alias, template or data stream (OpenSearch uses `resource_not_found_exception`). */
export class ResourceNotFound extends StoreError {
  constructor(reason: string) {
    super('resource_not_found_exception', 404, reason)
  }
}

/** A template a delete names that does not exist (index, component or legacy: OpenSearch's one type for the three). */
export class TemplateMissing extends StoreError {
  constructor(name: string) {
    super('index_template_missing_exception', 404, `index_template [${name}] missing`)
  }
}

/** A template refused as a whole, with OpenSearch's wording around what is wrong with it. */
export class InvalidIndexTemplate extends StoreError {
  constructor(name: string, cause: string) {
    super('invalid_index_template_exception', 400, `index_template [${name}] invalid, cause [${cause}]`)
  }
}

export class AliasesNotFound extends StoreError {
  constructor(names: string[]) {
    super('aliases_not_found_exception', 404, `aliases [${names.join(',')}] missing`, {
      'resource.type': 'aliases',
      'resource.id': names.join(','),
    })
  }
}

/** Unknown or expired point in time. */
export class SearchContextMissing extends StoreError {
  constructor(id: string) {
    super('search_context_missing_exception', 404, `No search context found for id [${id}]`)
  }
}

/**
 * A search refused by each shard: OpenSearch answers `search_phase_execution_exception` ("all
 * shards failed") with the shard's own error as the root cause and in `failed_shards`.
 */
export class ShardsFailed extends StoreError {
  /** `status`: 500 when the shard's error is a server one (OpenSearch answers with the worst shard's). */
  constructor(
    readonly shardType: string,
    reason: string,
    readonly index: string,
    status = 400,
  ) {
    super('search_phase_execution_exception', status, reason)
  }

  override toOpenSearch() {
    const cause = { type: this.shardType, reason: this.reason }
    return {
      root_cause: [cause],
      type: this.type,
      reason: 'all shards failed',
      phase: 'query',
      grouped: true,
      failed_shards: [{ shard: 0, index: this.index, reason: cause }],
    }
  }
}

/** An exception as OpenSearch renders it: its type, reason and cause. */
export interface ExceptionCause {
  type: string
  reason: string
  caused_by?: ExceptionCause
}

/**
 * Exceptions OpenSearch's own classes raise (the others are Java's: a number format, an illegal
 * argument): a root cause is the first OpenSearch exception down a failure's causes.
 */
const OPENSEARCH_EXCEPTIONS = new Set(['exception', 'parse_exception', 'query_shard_exception'])

/**
 * A query no shard could build: OpenSearch answers search_phase_execution_exception with each
 * shard's failure. By `form`: `wrapped` (default), a query_shard_exception "failed to create
 * query: ..." caused by `why`; `shard`, a query_shard_exception of `why`'s reason itself (an
 * analyzer not found); `direct`, `why` itself (a date range's bound its format cannot read). The
 * root cause is the first OpenSearch exception down the shard's failure (then also the top
 * `caused_by`, for a wrapped one); a query_shard_exception names the index and its uuid.
 */
export class QueryCreationFailed extends StoreError {
  /** The index whose shard failed, and its uuid (named by the search that compiled the query: the compiler knows none). */
  index?: string
  indexUuid?: string

  constructor(
    readonly why: ExceptionCause,
    private readonly form: 'wrapped' | 'shard' | 'direct' = 'wrapped',
  ) {
    super('search_phase_execution_exception', 400, form === 'wrapped' ? `failed to create query: ${why.reason}` : why.reason)
  }

  override toOpenSearch() {
    const named =
      this.index === undefined ? {} : { index: this.index, ...(this.indexUuid === undefined ? {} : { index_uuid: this.indexUuid }) }
    const shardException = { type: 'query_shard_exception', reason: this.reason, ...named }
    const shard: ExceptionCause =
      this.form === 'direct' ? this.why : this.form === 'shard' ? shardException : { ...shardException, caused_by: this.why }
    const deepest = this.form === 'wrapped' && OPENSEARCH_EXCEPTIONS.has(this.why.type)
    const { caused_by: _, ...root } = deepest ? this.why : shard
    return {
      root_cause: [root],
      type: this.type,
      reason: 'all shards failed',
      phase: 'query',
      grouped: true,
      failed_shards: [{ shard: 0, ...(this.index === undefined ? {} : { index: this.index }), reason: shard }],
      ...(deepest ? { caused_by: this.why } : {}),
    }
  }
}

/**
 * A search whose shards answered but whose answers cannot be merged (sort values of different
 * kinds): OpenSearch fails the fetch phase with no shard failure, the reason only under `caused_by`.
 */
export class ReduceFailed extends StoreError {
  constructor(readonly why: { type: string; reason: string }) {
    super('search_phase_execution_exception', 400, '')
  }

  override toOpenSearch() {
    return { root_cause: [], type: this.type, reason: '', phase: 'fetch', grouped: true, failed_shards: [], caused_by: this.why }
  }
}

/** Sorting/aggregating on something that cannot be sorted (text without fielddata, unmapped field). */
export class QueryShardError extends StoreError {
  constructor(reason: string) {
    super('query_shard_exception', 400, reason)
  }
}

/**
 * A lifecycle (ISM) policy that does not exist: ISM answers `status_exception` 404 with
 * "Policy not found" (get) or "Policy <id> is not found" (delete).
 */
export class PolicyNotFound extends StoreError {
  constructor(reason = 'Policy not found') {
    super('status_exception', 404, reason)
  }
}

/**
 * The platform has no Index State Management (the index-management plugin is not installed: its
 * `_plugins/_ism` routes are unknown, "no handler found for uri"). svc-ext then applies the
 * lifecycle policies' delete ages itself (src/setup/retention.ts).
 */
export class LifecycleUnavailable extends StoreError {
  constructor(reason: string) {
    super('lifecycle_unavailable_exception', 400, reason)
  }
}

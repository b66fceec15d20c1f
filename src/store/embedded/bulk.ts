/** `_bulk`: action and source lines in one transaction, one result (or error) per action. */
import { IllegalArgument, IndexNotFound, MapperParsing, StoreError } from '../errors'
import type { BulkItemResult, BulkParams, BulkResponse, WriteParams } from '../port'
import { isObject } from '../query/doc'
import type { StoreCore } from './core'
import { type Op, readTarget } from './documents'
import { missedUpdate, write } from './doc-write'

export async function bulk(core: StoreCore, params: BulkParams): Promise<BulkResponse> {
  const started = performance.now()
  const lines = params.body
  if (!Array.isArray(lines)) throw new IllegalArgument('bulk body must be a list of action and source lines')
  const items: BulkResponse['items'] = []
  let errors = false
  const commit = { relaxed: params.durability === 'async', deferred: params.durability === 'deferred' }
  core.tx(() => {
    for (let i = 0; i < lines.length; i++) {
      const action = lines[i]
      const keys = isObject(action) ? Object.keys(action) : []
      if (keys.length !== 1 || !['index', 'create', 'update', 'delete'].includes(keys[0]))
        throw new IllegalArgument(
          `Malformed action/metadata line [${i + 1}], expected one of [create, delete, index, update] but found [${keys[0] ?? String(action)}]`,
        )
      const op = keys[0] as Op
      const meta = (action as Record<string, unknown>)[op]
      if (!isObject(meta)) throw new IllegalArgument(`Malformed action/metadata line [${i + 1}], expected START_OBJECT`)
      for (const k of Object.keys(meta))
        if (
          ![
            '_index',
            '_id',
            'if_seq_no',
            'if_primary_term',
            'version',
            'version_type',
            'routing',
            'require_alias',
            'retry_on_conflict',
            'pipeline',
            '_source',
            'dynamic_templates',
            '_type',
          ].includes(k)
        )
          throw new IllegalArgument(`Action/metadata line [${i + 1}] contains an unknown parameter [${k}]`)
      let doc: Record<string, unknown> | undefined
      if (op !== 'delete') {
        const next = lines[++i]
        if (next === undefined) throw new IllegalArgument('The bulk request must be terminated by a newline [\\n]')
        if (!isObject(next)) throw new MapperParsing('failed to parse, document is empty')
        doc = next
        // `_source` on an update's action line asks for the updated document, like in its body.
        if (op === 'update' && meta._source !== undefined && doc._source === undefined) doc = { ...doc, _source: meta._source }
      }
      const index = (meta._index as string | undefined) ?? params.index
      const id = meta._id === undefined || meta._id === null ? undefined : String(meta._id)
      if (index === undefined) throw new StoreError('action_request_validation_exception', 400, `Validation Failed: 1: index is missing;`)
      try {
        const r = write(core, op, index, id, doc, {
          index,
          if_seq_no: meta.if_seq_no as number | undefined,
          if_primary_term: meta.if_primary_term as number | undefined,
          version: meta.version as number | undefined,
          version_type: meta.version_type as WriteParams['version_type'],
          refresh: params.refresh,
        })
        const status = r.result === 'created' ? 201 : r.result === 'not_found' ? 404 : 200
        items.push({ [op]: { ...r, status } })
      } catch (caught) {
        if (!(caught instanceof StoreError)) throw caught
        // OpenSearch's bulk auto-creates the index of an update and then misses the document.
        const e = op === 'update' && caught instanceof IndexNotFound && id !== undefined ? missedUpdate(core, index, id) : caught
        errors = true
        const item: BulkItemResult = { _index: displayIndex(core, index), _id: id ?? null, status: e.status, error: bulkError(e) }
        items.push({ [op]: item })
      }
    }
  }, commit)
  return { took: Math.round(performance.now() - started), errors, items }
}

function displayIndex(core: StoreCore, name: string): string {
  try {
    return readTarget(core, name)?.name ?? name
  } catch {
    return name
  }
}

function bulkError(e: StoreError): BulkItemResult['error'] {
  const { root_cause: _, ...rest } = e.toOpenSearch()
  return rest as BulkItemResult['error']
}

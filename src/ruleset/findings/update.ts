import { ApiError, OpenSearchHttpError } from '../../http/errors'
import { INDEX_ACTIONS } from '../../security/actions'
import type { Caller, Security } from '../../http/caller'
import { platformDecides, securityRefusal, storeAs } from '../../security/platform/caller-store'
import type { BulkItemResult, BulkLine, Store } from '../../store/port'
import type { CaseUpdate } from './update-request'

export interface UpdatedItem {
  _id: string
  _index: string
  status: number
  result?: string
  error?: string
}

export interface UpdateFindingsResponse {
  took: number
  errors: boolean
  items: UpdatedItem[]
}

/**
 * Concurrent writers of one finding may retry this often on a version
 * conflict before the item fails; each retry re-reads, so a field written by
 * another request that answered 200 is never lost.
 */
const RETRY_ON_CONFLICT = 10

/**
 * Merges each case into `svc.case` of its finding with the caller's index
 * rights (reference 4.1): one bulk of partial updates (objects merge, arrays
 * replace), sent through the caller's store. In embedded mode our model is
 * asked per item first and a refused index is a 403 item that is not sent; in
 * platform mode the platform refuses such items itself. The store answers the
 * rest (missing document 404, data stream name 400). Items keep the request
 * order.
 */
export async function updateFindings(
  deps: { store: Store; storeFor?: (caller: Caller) => Store; security: Security; now: () => number },
  caller: Caller,
  updates: CaseUpdate[],
): Promise<UpdateFindingsResponse> {
  const started = deps.now()
  const items: UpdatedItem[] = new Array(updates.length)
  const sent: number[] = []
  const lines: BulkLine[] = []
  const localCheck = !platformDecides(deps)
  // An update of a missing index would create it (OpenSearch auto-creates on update, and so does
  // the embedded store): an index that is not there is a 404 item, never sent.
  const missing = new Set<string>()
  for (const index of new Set(updates.map((u) => u._index)))
    if (!(await deps.store.existsIndex({ index, expand_wildcards: 'all' }).catch(() => true))) missing.add(index)
  updates.forEach((u, i) => {
    if (missing.has(u._index)) {
      items[i] = { _id: u._id, _index: u._index, status: 404, error: `no such index [${u._index}]` }
      return
    }
    if (localCheck) {
      try {
        deps.security.authorizeIndices(caller, INDEX_ACTIONS.update, [u._index])
      } catch (e) {
        // The security layer answers denials in either envelope; both carry the status and the reason.
        if (!(e instanceof ApiError || e instanceof OpenSearchHttpError)) throw e
        items[i] = { _id: u._id, _index: u._index, status: e.status, error: e.message }
        return
      }
    }
    sent.push(i)
    lines.push({ update: { _index: u._index, _id: u._id, retry_on_conflict: RETRY_ON_CONFLICT } }, { doc: { svc: { case: u.case } } })
  })

  if (lines.length > 0) {
    let answer
    try {
      answer = await storeAs(deps, caller).bulk({ body: lines, refresh: 'wait_for' })
    } catch (e) {
      // Refused as a whole (no bulk right at all): every item sent was refused, each says so.
      const refused = securityRefusal(e)
      if (!refused) throw new ApiError(500, `Bulk update failed: ${(e as Error).message}`)
      for (const i of sent) items[i] = { _id: updates[i]._id, _index: updates[i]._index, status: refused.status, error: refused.message }
      return done(deps, started, items)
    }
    answer.items.forEach((entry, k) => {
      const i = sent[k]
      items[i] = itemOf(updates[i], entry.update ?? Object.values(entry)[0])
    })
  }
  return done(deps, started, items)
}

function done(deps: { now: () => number }, started: number, items: UpdatedItem[]): UpdateFindingsResponse {
  const errors = items.some((it) => it.error !== undefined)
  return { took: Math.max(0, deps.now() - started), errors, items }
}

function itemOf(u: CaseUpdate, r: BulkItemResult | undefined): UpdatedItem {
  const base = { _id: u._id, _index: u._index }
  if (!r) return { ...base, status: 500, error: 'no answer from the store for this item' }
  if (r.error) return { ...base, status: r.status || 500, error: r.error.reason }
  return { ...base, status: r.status, result: r.result ?? 'updated' }
}

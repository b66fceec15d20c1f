import { ApiError } from '../../http/errors'
import { Type as T, type Static } from '@sinclair/typebox'
import { Case, checkCase } from './case'
import { isObject } from '../../json'

const NO_FINDINGS = 'Request body must contain a "findings" array'

/** One validated element of `findings`: where the finding is and the normalized case to merge. */
export const CaseUpdate = T.Object({ _id: T.String(), _index: T.String(), case: Case })
export type CaseUpdate = Static<typeof CaseUpdate>
/** The request body (spec "Update findings"); checked by hand below, in the reference's order. */
export const UpdateFindingsBody = T.Object({ findings: T.Array(CaseUpdate) }, { message: NO_FINDINGS })

const blank = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '')

/**
 * Parses and validates a findings update body in the reference's order
 * (section 4.3): JSON, the `findings` array, emptiness, the limit (0 means
 * the endpoint is disabled), then each element. The first failure is the 400;
 * nothing is returned, so nothing is written, unless every element is valid.
 * `limit` is read by the caller from the settings of this very request.
 */
/** The route's body step (the JSON already parsed): the findings array, present and not empty. */
export function findingsOf(parsed: unknown): unknown[] {
  const findings = isObject(parsed) ? parsed.findings : undefined
  if (!Array.isArray(findings)) throw new ApiError(400, NO_FINDINGS)
  if (findings.length === 0) throw new ApiError(400, 'Findings array is empty')
  return findings
}

/** The rest in the reference's order: the endpoint's switch and size (a setting), then each element. */
export function parseUpdates(findings: unknown[], limit: number): CaseUpdate[] {
  if (limit === 0) throw new ApiError(400, 'Case management is disabled')
  if (findings.length > limit) throw new ApiError(400, `Cannot update more than ${limit} findings at once`)

  return findings.map((element, i) => {
    const fail = (reason: string) => new ApiError(400, `Element at index ${i}${reason}`)
    if (!isObject(element)) throw fail(' is not a JSON object')
    const { _id, _index, case: raw } = element
    if (blank(_id)) throw fail(' is missing _id')
    // The reference fails with an internal error on these; a number or object is the client's mistake.
    if (typeof _id !== 'string') throw fail(': _id must be a string')
    if (blank(_index)) throw fail(' is missing _index')
    if (typeof _index !== 'string') throw fail(': _index must be a string')
    if (!isObject(raw)) throw fail(' is missing or invalid case object')
    const checked = checkCase(raw)
    if ('error' in checked) throw fail(`: ${checked.error}`)
    return { _id, _index, case: checked.ok }
  })
}

// Reading and validating the bodies of the three logtest routes (reference 4.9). The size limit is
// a dynamic setting read on every request and enforced before anything is parsed; the messages are
// the reference plugin's, verbatim.
import type { ClusterSettings } from '../../config/cluster-settings'
import { settingDef } from '../../config/registry'
import { Type as T } from '@sinclair/typebox'
import type { BodyLimit } from '../../http/body'
import { ApiError } from '../../http/errors'
import { objectBody } from '../../http/route'
import type { LogtestRequest } from '../engine'
import { isObject, type Doc } from '../repository'

export const MAX_BODY_SETTING = 'plugins.content_manager.logtest.max_body_bytes'
/** The setting's default, the declared limit. */
const DEFAULT_MAX_BODY = settingDef(MAX_BODY_SETTING)!.default as number

/** The combined route runs against every space the Engine can hold; the split routes keep the narrower set. */
const COMBINED_SPACES = ['test', 'custom', 'standard'] as const
const SPLIT_SPACES = ['test', 'standard'] as const
export type CombinedSpace = (typeof COMBINED_SPACES)[number]
export type SplitSpace = (typeof SPLIT_SPACES)[number]

const combinedSpaceError = (received: string) =>
  `Logtest is only supported for the 'test', 'custom' and 'standard' spaces. Received space: '${received}'.`
const splitSpaceError = (received: string) =>
  `Logtest is only supported for the 'test' and 'standard' spaces. Received space: '${received}'.`

/** The logtest limit: `max_body_bytes` as this request finds it, 413 beyond it (declared or streamed). */
function logtestLimit(limit: number): BodyLimit {
  return { limit, status: 413, message: `logtest payload exceeds the maximum allowed size of ${limit} bytes.` }
}

/** Declared for the walk; the fields are checked by the route's parser, in the reference's order and words. */
const LogtestBody = T.Object({ space: T.String() }, { additionalProperties: true })

/** The body of a logtest route: a JSON object under the setting's limit, parsed into the route's request. */
export function logtestBody<T>(settings: ClusterSettings, parse: (body: Doc) => T) {
  return objectBody(logtestLimit(DEFAULT_MAX_BODY), LogtestBody, {
    limitNow: async () => logtestLimit((await settings.snapshot()).num(MAX_BODY_SETTING)),
    parse: (value) => parse(value as Doc),
  })
}

export interface CombinedRequest {
  space: CombinedSpace
  integration: string | undefined
  engine: LogtestRequest
}

export function combinedRequest(body: Doc): CombinedRequest {
  const space = oneOf(required(body, 'space'), COMBINED_SPACES, combinedSpaceError)
  // Optional: absent or null means "normalization only".
  const integration = body.integration == null ? undefined : text(body, 'integration')
  return { space, integration, engine: enginePayload(body, space) }
}

export function normalizationRequest(body: Doc): { space: SplitSpace; engine: LogtestRequest } {
  const space = oneOf(required(body, 'space'), SPLIT_SPACES, splitSpaceError)
  return { space, engine: enginePayload(body, space) }
}

export interface DetectionRequest {
  space: SplitSpace
  integration: string
  input: Doc
}

export function detectionRequest(body: Doc): DetectionRequest {
  for (const field of ['space', 'integration', 'input']) required(body, field)
  const space = oneOf(body.space, SPLIT_SPACES, splitSpaceError)
  const integration = text(body, 'integration')
  if (!isObject(body.input)) throw new ApiError(400, "Invalid 'input' format.")
  return { space, integration, input: body.input }
}

/** Reference 4.1: absent, null and blank strings are all "missing". */
function required(body: Doc, field: string): unknown {
  const value = body[field]
  if (value == null || (typeof value === 'string' && value.trim() === '')) throw new ApiError(400, `Missing [${field}] field.`)
  return value
}

function text(body: Doc, field: string): string {
  const value = body[field]
  if (typeof value !== 'string' || value.trim() === '') throw new ApiError(400, `Invalid '${field}' format.`)
  return value
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], message: (received: string) => string): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T
  throw new ApiError(400, message(typeof value === 'string' ? value : JSON.stringify(value)))
}

/** The REST body minus `integration` (reference 3.3.3): the Engine judges these fields itself. */
function enginePayload(body: Doc, space: string): LogtestRequest {
  const payload: LogtestRequest = { space }
  for (const field of ['queue', 'location', 'event', 'metadata', 'trace_level'] as const) {
    if (body[field] !== undefined) payload[field] = body[field]
  }
  return payload
}

// Wire shapes of the Engine's Unix-socket API (reference section 3): what the client sends and
// reads. The Engine, not these schemas, judges request contents; its error texts are what callers see.
import { t, type Static } from 'elysia'

/** Resource kinds the Engine validates; rules are Ruleset Management's business, never sent here. */
export const EngineResourceType = t.Union([t.Literal('decoder'), t.Literal('kvdb'), t.Literal('filter'), t.Literal('integration')])
export type EngineResourceType = Static<typeof EngineResourceType>

/** Body of `POST /content/validate/resource`; `resource` is the document exactly as it will be stored. */
export const ResourceValidationRequest = t.Object({
  type: EngineResourceType,
  resource: t.Record(t.String(), t.Unknown()),
})
export type ResourceValidationRequest = Static<typeof ResourceValidationRequest>

const Documents = t.Array(t.Record(t.String(), t.Unknown()))

/** A whole space as the Engine imports it: the policy document plus every resource it can reference. */
export const FullPolicy = t.Object({
  policy: t.Record(t.String(), t.Unknown()),
  resources: t.Object({
    integrations: Documents,
    kvdbs: Documents,
    decoders: Documents,
    filters: Documents,
  }),
})
export type FullPolicy = Static<typeof FullPolicy>

/** Body of `POST /content/validate/policy`; `load_in_tester` is false only for the draft space. */
export const PolicyValidationRequest = t.Object({
  load_in_tester: t.Boolean(),
  space: t.String(),
  full_policy: FullPolicy,
})
export type PolicyValidationRequest = Static<typeof PolicyValidationRequest>

/**
 * Body of `POST /logtest` (the REST logtest body minus `integration`). Loose on purpose: the Engine
 * owns these checks and its error texts are what callers pass on, so we forward what we were given.
 */
export const LogtestRequest = t.Object({
  space: t.String(),
  queue: t.Optional(t.Unknown()),
  location: t.Optional(t.Unknown()),
  event: t.Optional(t.Unknown()),
  metadata: t.Optional(t.Unknown()),
  trace_level: t.Optional(t.Unknown()),
})
export type LogtestRequest = Static<typeof LogtestRequest>

/** The `result` of a successful logtest: the normalised event and how it was produced. */
export const LogtestResult = t.Object({
  output: t.Record(t.String(), t.Unknown()),
  asset_traces: t.Array(t.Unknown()),
  validation: t.Object({ valid: t.Boolean(), errors: t.Array(t.Unknown()) }),
})
export type LogtestResult = Static<typeof LogtestResult>

/** Answer of `GET /content/ioc/state`; only `updating` matters to callers. */
export const IocState = t.Object({ hash: t.Optional(t.String()), updating: t.Boolean() })
export type IocState = Static<typeof IocState>

/** Body of `POST /content/ioc/update`: an absolute NDJSON export path and the combined type hash. */
export const IocUpdateRequest = t.Object({ path: t.String(), hash: t.String() })
export type IocUpdateRequest = Static<typeof IocUpdateRequest>

/** The Engine's own answer envelope; user errors are 400 with `status: ERROR` and `error`. */
export const EngineAnswer = t.Object({
  status: t.Union([t.Literal('OK'), t.Literal('ERROR')]),
  error: t.Optional(t.String()),
  result: t.Optional(t.Unknown()),
})
export type EngineAnswer = Static<typeof EngineAnswer>

// The CTI API's answers (reference 1.3-1.7), as far as the service reads them. Anything else in a
// body is ignored; a body that does not fit is a bad payload, never half-used.
import { t, type Static } from 'elysia'

const Obj = t.Record(t.String(), t.Unknown())

export const ConsumerInfo = t.Object({
  data: t.Object({
    name: t.String(),
    context: t.String(),
    last_offset: t.Integer({ minimum: 0 }),
    last_snapshot_link: t.Optional(t.Union([t.String(), t.Null()])),
    last_snapshot_offset: t.Optional(t.Union([t.Integer({ minimum: 0 }), t.Null()])),
    last_snapshot_at: t.Optional(t.Union([t.String(), t.Null()])),
    is_public: t.Optional(t.Union([t.Boolean(), t.Null()])),
  }),
})
export type ConsumerInfo = Static<typeof ConsumerInfo>['data']

export const Change = t.Object({
  type: t.String(),
  resource: t.String({ minLength: 1 }),
  offset: t.Integer({ minimum: 0 }),
  context: t.Optional(t.String()),
  version: t.Optional(t.Integer()),
  payload: t.Optional(t.Union([Obj, t.Null()])),
  operations: t.Optional(t.Union([t.Array(Obj), t.Null()])),
})
export type Change = Static<typeof Change>

export const ChangesPage = t.Object({ data: t.Array(Change) })

export const TokenExchange = t.Object({ access_token: t.String({ minLength: 1 }), expires_in: t.Optional(t.Number()) })

export const Feature = t.Object({
  name: t.Optional(t.String()),
  type: t.String(),
  description: t.Optional(t.String()),
  resource: t.Optional(t.String()),
})
export const Plan = t.Object({
  name: t.Union([t.String(), t.Null()]),
  is_public: t.Optional(t.Boolean()),
  features: t.Optional(t.Array(Feature)),
})
export type Plan = Static<typeof Plan>
export const Environment = t.Object({ plans: t.Array(Plan) })
export const PublicPlans = t.Object({ plans: t.Array(Plan) })

export const Release = t.Object({
  tag: t.String(),
  title: t.Optional(t.String()),
  description: t.Optional(t.String()),
  published_date: t.Optional(t.String()),
  semver: t.Optional(t.Object({ major: t.Integer(), minor: t.Integer(), patch: t.Integer() })),
})
export const ReleaseUpdates = t.Object({
  data: t.Object({ major: t.Optional(t.Array(Release)), minor: t.Optional(t.Array(Release)), patch: t.Optional(t.Array(Release)) }),
})
export type ReleaseUpdates = Static<typeof ReleaseUpdates>['data']

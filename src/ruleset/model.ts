/**
 * Shapes of Ruleset Management resources: request bodies (validated with TypeBox) and the
 * documents kept in the system indices. Times are epoch millis in storage and ISO strings in
 * answers, as the reference does (5.4).
 */
import type { IocFieldsInput } from './threat-intel/ioc-fields'
import { type Static, Type as T } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { ApiError } from '../http/errors'

import { Space } from '../ports/spaces'

export { SPACES, Space } from '../ports/spaces'

const RuleRef = T.Object({ id: T.String({ minLength: 1 }) }, { additionalProperties: true })

export const DetectorInput = T.Object(
  {
    detector_input: T.Object(
      {
        description: T.Optional(T.String()),
        indices: T.Array(T.String({ minLength: 1 }), { minItems: 1 }),
        custom_rules: T.Optional(T.Array(RuleRef)),
        pre_packaged_rules: T.Optional(T.Array(RuleRef)),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: false },
)
export type DetectorInput = Static<typeof DetectorInput>

export const ScheduleUnit = T.Union([T.Literal('MINUTES'), T.Literal('HOURS'), T.Literal('DAYS')])
export const Schedule = T.Object(
  { period: T.Object({ interval: T.Integer({ minimum: 1 }), unit: ScheduleUnit }, { additionalProperties: false }) },
  { additionalProperties: false },
)
export type Schedule = Static<typeof Schedule>

export const Trigger = T.Object(
  {
    id: T.Optional(T.String()),
    name: T.String(),
    severity: T.Optional(T.String()),
    types: T.Optional(T.Array(T.String())),
    ids: T.Optional(T.Array(T.String())),
    sev_levels: T.Optional(T.Array(T.String())),
    tags: T.Optional(T.Array(T.String())),
    actions: T.Optional(T.Array(T.Unknown())),
    detection_types: T.Optional(T.Array(T.String())),
  },
  { additionalProperties: true },
)
export type Trigger = Static<typeof Trigger>

/** Create/update body of `POST|PUT /detectors`. Response-only keys (times) are accepted and ignored. */
export const DetectorBody = T.Object(
  {
    type: T.Optional(T.Literal('detector')),
    name: T.String({ minLength: 1 }),
    detector_type: T.String({ minLength: 1 }),
    enabled: T.Optional(T.Boolean()),
    schedule: Schedule,
    inputs: T.Array(DetectorInput, { minItems: 1 }),
    triggers: T.Optional(T.Array(Trigger)),
    threat_intel_enabled: T.Optional(T.Boolean()),
    last_update_time: T.Optional(T.Union([T.Integer(), T.String()])),
    enabled_time: T.Optional(T.Union([T.Integer(), T.String(), T.Null()])),
  },
  { additionalProperties: true },
)
export type DetectorBody = Static<typeof DetectorBody>

export const StoredUser = T.Object({ name: T.String(), backend_roles: T.Array(T.String()), roles: T.Array(T.String()) })
export type StoredUser = Static<typeof StoredUser>

export type DetectorSource = 'standard' | 'custom'

/** `_source.detector` in `.platform-sap-detectors-config`. */
export interface StoredDetector {
  type: 'detector'
  name: string
  detector_type: string
  enabled: boolean
  schedule: Schedule
  inputs: DetectorInput[]
  triggers: Trigger[]
  threat_intel_enabled: boolean
  last_update_time: number
  enabled_time: number | null
  source: DetectorSource
  user?: StoredUser
  /** The integration (CTI document id) a standard detector was provisioned for. */
  document?: { id: string }
  findings_index: string
  /** The Alerting monitor(s) the reference backs a detector with; `_execute` on one runs the detector. */
  monitor_id?: string[]
}

/** `_source.rule` in either rules index. */
export interface StoredRule {
  category: string
  title: string
  description?: string
  author?: string
  level?: string
  status?: string
  sigma_id?: string
  /** Sigma `name`, by which correlation and filter rules may reference this rule. */
  name?: string
  /** Absent for detection rules; Sigma filter and correlation documents are stored as rules too. */
  kind?: 'filter' | 'correlation'
  tags: Array<{ value: string }>
  references: Array<{ value: string }>
  false_positives: Array<{ value: string }>
  /** The compiled query-DSL tree(s), as JSON text (the tree is evaluated, never searched). */
  queries: Array<{ value: string }>
  query_field_names: Array<{ value: string }>
  /** Why `queries` is empty (a standard rule that does not compile is stored anyway, 5.6). */
  compile_error?: string
  /** The rule as written: YAML text, or the JSON text of a CTI rule document. */
  rule: string
  mitre?: unknown
  compliance?: unknown
  metadata?: Record<string, unknown>
  document: { id: string }
  space: Space
  user?: StoredUser
  last_update_time: number
}

export const FieldMappingEntry = T.Object({ raw_field: T.String({ minLength: 1 }) }, { additionalProperties: T.String() })
export type FieldMappingEntry = Static<typeof FieldMappingEntry>

/** A log type (a CTI integration), `_source` in `.platform-sap-log-types-config`. */
export interface StoredLogType {
  name: string
  description: string
  category: string
  space: Space
  source: string
  document: { id: string }
  tags: { correlation_id: number }
  /** Key of the mapping entries to use; absent means `mappings.default_schema`. */
  schema?: string
  mappings: FieldMappingEntry[]
  /** Which event fields hold which IoC type (threat intel; absent: the built-in list of the name, if any). */
  ioc_fields?: IocFieldsInput
  last_update_time: number
}

/** The one body validation (src/http/validate.ts), under the name the ruleset's modules use. */
export { checkBody as check } from '../http/validate'

export const iso = (millis: number | null | undefined): string | null =>
  millis === null || millis === undefined ? null : new Date(millis).toISOString()

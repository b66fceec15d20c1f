/**
 * Sigma correlation rules (Sigma correlation rules specification v2.1): the YAML document,
 * validated by its TypeBox schema, and normalised into what the engine needs. Every validation
 * error names the construct (`correlation.timespan`, `correlation.condition.gte`, ...), through the
 * same `SigmaInvalid`/`SigmaUnsupported` errors the rule compiler throws, so the rules API answers
 * both the same way.
 */
import { type Static, Type as T } from '@sinclair/typebox'
import { checkSigmaDocument, readSigmaYaml, SIGMA_RULE_DESCRIPTION } from '../sigma/document'
import { SigmaInvalid, SigmaUnsupported } from '../sigma/errors'

export const CORRELATION_TYPES = ['event_count', 'value_count', 'temporal', 'temporal_ordered'] as const
export type CorrelationType = (typeof CORRELATION_TYPES)[number]
/** Defined by v2.1 but not run here: metric aggregations over numeric fields. */
const METRIC_TYPES = ['value_sum', 'value_avg', 'value_percentile']

export const OPERATORS = ['gt', 'gte', 'lt', 'lte', 'eq', 'neq'] as const
export type Operator = (typeof OPERATORS)[number]

export const CorrelationDocument = T.Object(
  {
    title: T.String({ minLength: 1, maxLength: 256 }),
    ...SIGMA_RULE_DESCRIPTION,
    generate: T.Optional(T.Boolean()),
    correlation: T.Object(
      {
        type: T.String(),
        rules: T.Array(T.String({ minLength: 1 }), { minItems: 1 }),
        'group-by': T.Optional(T.Array(T.String({ minLength: 1 }))),
        timespan: T.String(),
        condition: T.Optional(T.Record(T.String(), T.Unknown())),
        aliases: T.Optional(T.Record(T.String(), T.Record(T.String(), T.String({ minLength: 1 })))),
        generate: T.Optional(T.Boolean()),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
)
export type CorrelationDocument = Static<typeof CorrelationDocument>

export type Condition = Partial<Record<Operator, number>>

/** A correlation rule as the engine runs it. */
export interface CorrelationRule {
  /** Stored rule id (the detector's reference); also the key of its state and findings. */
  id: string
  title: string
  name?: string
  level?: string
  type: CorrelationType
  /** `rules` as written: ids or names, in order (the order matters for `temporal_ordered`). */
  refs: string[]
  groupBy: string[]
  timespanMs: number
  condition: Condition
  /** `value_count`: the field(s) whose distinct values are counted (several: distinct tuples). */
  field?: string[]
  /** alias -> rule name -> field name in that rule's events. */
  aliases: Record<string, Record<string, string>>
  generate: boolean
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** `number + lower-case letter` (s, m, h, d). */
export function parseTimespan(text: string): number {
  const m = /^([1-9]\d{0,8})([smhd])$/.exec(text)
  if (!m) throw new SigmaInvalid("correlation 'timespan'", `'${text}' is not <number><s|m|h|d>`)
  return Number(m[1]) * UNITS[m[2]]
}

export function isCorrelationDocument(doc: unknown): boolean {
  return typeof doc === 'object' && doc !== null && !Array.isArray(doc) && 'correlation' in doc
}

/** YAML text (one document) or an already parsed object -> the validated document. */
export function parseCorrelationDocument(source: string | object): CorrelationDocument {
  return checkSigmaDocument(CorrelationDocument, readSigmaYaml(source), 'correlation rule')
}

/** The validated document as the engine runs it; `id` is the stored rule id. */
export function correlationRule(doc: CorrelationDocument, id: string): CorrelationRule {
  const c = doc.correlation
  if (METRIC_TYPES.includes(c.type)) throw new SigmaUnsupported(`correlation type '${c.type}'`, 'metric correlations are not run')
  if (!(CORRELATION_TYPES as readonly string[]).includes(c.type))
    throw new SigmaInvalid("correlation 'type'", `'${c.type}' is not one of ${CORRELATION_TYPES.join(', ')}`)
  const type = c.type as CorrelationType
  if (new Set(c.rules).size !== c.rules.length) throw new SigmaInvalid("correlation 'rules'", 'a rule is referenced twice')
  const temporal = type === 'temporal' || type === 'temporal_ordered'
  if (temporal && c.rules.length < 2) throw new SigmaInvalid("correlation 'rules'", `'${type}' needs at least two rules`)
  const groupBy = c['group-by'] ?? []
  if (new Set(groupBy).size !== groupBy.length) throw new SigmaInvalid("correlation 'group-by'", 'a field is listed twice')

  const condition: Condition = {}
  let field: string[] | undefined
  for (const [k, v] of Object.entries(c.condition ?? {})) {
    if (k === 'field') {
      const list = Array.isArray(v) ? v : [v]
      if (list.length === 0 || !list.every((f) => typeof f === 'string' && f !== ''))
        throw new SigmaInvalid("correlation 'condition.field'", 'must name a field or a list of fields')
      field = list as string[]
      continue
    }
    if (!(OPERATORS as readonly string[]).includes(k))
      throw new SigmaInvalid(`correlation 'condition.${k}'`, `unknown operator; use ${OPERATORS.join(', ')}`)
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
      throw new SigmaInvalid(`correlation 'condition.${k}'`, `'${String(v)}' is not a non-negative integer`)
    condition[k as Operator] = v
  }
  if (type === 'value_count' && !field) throw new SigmaInvalid("correlation 'condition.field'", "required by 'value_count'")
  if (type !== 'value_count' && field) throw new SigmaInvalid("correlation 'condition.field'", `not used by '${type}'`)
  if (Object.keys(condition).length === 0) {
    // Temporal types default to "every referenced rule"; the counting types must say how many.
    if (!temporal) throw new SigmaInvalid("correlation 'condition'", `required by '${type}'`)
    condition.gte = c.rules.length
  }
  const aliases = c.aliases ?? {}
  for (const [alias, byRule] of Object.entries(aliases)) {
    for (const ruleName of Object.keys(byRule))
      if (!c.rules.includes(ruleName))
        throw new SigmaInvalid(`correlation 'aliases.${alias}.${ruleName}'`, 'names a rule that is not in correlation.rules')
  }
  return {
    id,
    title: doc.title,
    name: doc.name,
    level: doc.level,
    type,
    refs: c.rules,
    groupBy,
    timespanMs: parseTimespan(c.timespan),
    condition,
    field,
    aliases,
    generate: c.generate ?? doc.generate ?? false,
  }
}

/** Every operator given must hold (a map of several is a range, AND-ed). */
export function holds(condition: Condition, n: number): boolean {
  for (const [op, v] of Object.entries(condition) as Array<[Operator, number]>) {
    switch (op) {
      case 'gt':
        if (!(n > v)) return false
        break
      case 'gte':
        if (!(n >= v)) return false
        break
      case 'lt':
        if (!(n < v)) return false
        break
      case 'lte':
        if (!(n <= v)) return false
        break
      case 'eq':
        if (n !== v) return false
        break
      case 'neq':
        if (n === v) return false
        break
    }
  }
  return true
}

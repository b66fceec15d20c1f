/**
 * Sigma filter rules (Sigma filters specification v2.1, `rules: any` from the v2.2 draft): a
 * `filter:` document that names rules (by id or name) and adds conditions that suppress their
 * matches. The effective rule is `rule and not filter`, as pySigma builds it; a filter also only
 * applies to rules whose `logsource` has every key/value of the filter's `logsource`.
 *
 * A filter compiles with the same compiler (and the same field mapping) as the rule it tunes; its
 * search identifiers are unnamed in the result so they never show up in a match's conditions.
 */
import { type Static, Type as T } from '@sinclair/typebox'
import { checkSigmaDocument, readSigmaYaml } from '../sigma/document'
import { type CompiledSigmaRule, compileSigmaRule, type CompileOptions, type Query, SigmaInvalid } from '../sigma'
import { and, not } from '../sigma/dsl'

export const FilterDocument = T.Object(
  {
    title: T.String({ minLength: 1, maxLength: 256 }),
    id: T.Optional(T.String()),
    name: T.Optional(T.String()),
    description: T.Optional(T.String()),
    logsource: T.Record(T.String(), T.Unknown()),
    filter: T.Object(
      {
        rules: T.Union([T.Literal('any'), T.Array(T.String({ minLength: 1 }), { minItems: 1 })]),
        condition: T.Union([T.String(), T.Array(T.String())]),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
)
export type FilterDocument = Static<typeof FilterDocument>

export function isFilterDocument(doc: unknown): boolean {
  return typeof doc === 'object' && doc !== null && !Array.isArray(doc) && 'filter' in doc && !('detection' in doc)
}

/** YAML text or a parsed object -> the validated filter; its detection is compiled once to check it. */
export function parseFilterDocument(source: string | object): FilterDocument {
  const doc = checkSigmaDocument(FilterDocument, readSigmaYaml(source), 'filter rule')
  compileFilter(doc)
  return doc
}

/** The filter's searches and condition as a rule document the Sigma compiler takes. */
function asRule(f: FilterDocument): Record<string, unknown> {
  const { rules: _rules, ...detection } = f.filter
  return { title: f.title, logsource: f.logsource, detection }
}

export function compileFilter(f: FilterDocument, options: CompileOptions = {}): Query {
  return compileFilterRule(f, options).query
}

/** The filter's query (without names) and the document fields it reads. */
function compileFilterRule(f: FilterDocument, options: CompileOptions): { query: Query; fields: string[] } {
  try {
    const compiled = compileSigmaRule(asRule(f), options)
    return { query: unnamed(compiled.query), fields: compiled.fields }
  } catch (e) {
    // The compiler names `detection.*`; in a filter the same constructs live under `filter.*`.
    if (e instanceof SigmaInvalid && e.construct.includes('detection.'))
      throw new SigmaInvalid(e.construct.replace('detection.', 'filter.'))
    throw e
  }
}

/** What a filter needs to know of a rule to decide whether it applies. */
export interface FilterTarget {
  /** Every id the rule is known by (stored id, Sigma id). */
  ids: string[]
  name?: string
  logsource: Record<string, unknown>
}

export function applies(f: FilterDocument, rule: FilterTarget): boolean {
  const refs = f.filter.rules
  if (refs !== 'any' && !refs.some((r) => rule.ids.includes(r) || r === rule.name)) return false
  return Object.entries(f.logsource).every(([k, v]) => rule.logsource[k] === v)
}

/** `rule and not filter` for every filter that applies to the rule. */
export function withFilters(
  rule: CompiledSigmaRule,
  target: FilterTarget,
  filters: readonly FilterDocument[],
  options: CompileOptions = {},
): CompiledSigmaRule {
  const applicable = filters.filter((f) => applies(f, target))
  if (applicable.length === 0) return rule
  const compiled = applicable.map((f) => compileFilterRule(f, options))
  // The filter's fields join the rule's: field types are resolved for every field the query reads.
  const fields = [...new Set([...rule.fields, ...compiled.flatMap((c) => c.fields)])]
  return { ...rule, fields, query: and([rule.query, ...compiled.map((c) => not(c.query))]) }
}

/** The tree without `_name`s (a filter's identifiers must not be reported as a rule's conditions). */
function unnamed(q: Query): Query {
  return JSON.parse(JSON.stringify(q), (k, v) => (k === '_name' ? undefined : v)) as Query
}

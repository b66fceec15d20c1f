/**
 * `rules/evaluate` (reference 5.10), the service call behind logtest detection: one normalized
 * event and a set of Sigma rule bodies in, the matched rules and their matched conditions out.
 * Rules are compiled exactly as for a detector (same compiler, same log-type field mapping) and
 * run by the same evaluator, typed by the source indices' mappings when they exist, so logtest
 * predicts what a deployed detector finds.
 */
import type { SettingsSnapshot } from '../config/cluster-settings'
import { ApiError } from '../http/errors'
import type { Logger } from '../http/log'
import { compileQuery, type FieldSpec } from '../store/query'
import type { Store } from '../store/port'
import { type CompiledSigmaRule, type CompileOptions, compileCache, type Query, ruleSet } from './sigma'
import type { LogTypes } from './log-types'
import { concreteIndices } from './detection/checkpoint'
import { sourceFieldSpecs, stableTypes } from './detection/field-types'
import { loadFilters, type StoredFilter, withFilters } from './filters'
import { Lru } from '../lru'

export interface EvaluateRequest {
  normalizedEvent: string
  rulesBodies: string[]
  integrationId: string
  logType: string
  sourceIndices: string[]
}

export interface EvaluateMatch {
  rule: { id: string; title: string; level?: string; tags: string[] }
  matched_conditions: string[]
}

export interface EvaluateResult {
  status: 'success' | 'error'
  rules_evaluated: number
  rules_matched: number
  matches: EvaluateMatch[]
}

export interface EvaluateDeps {
  store: Store
  log: Logger
  logTypes: LogTypes
}

export async function evaluateRulesRequest(
  deps: EvaluateDeps,
  req: Partial<EvaluateRequest>,
  settings: SettingsSnapshot,
): Promise<EvaluateResult> {
  const required: Array<keyof EvaluateRequest> = ['normalizedEvent', 'rulesBodies', 'integrationId', 'logType', 'sourceIndices']
  for (const k of required) {
    const v = req[k]
    if (v === undefined || v === null || v.length === 0) throw new ApiError(400, `${k} must not be null or empty`)
  }
  let event: unknown
  try {
    event = JSON.parse(req.normalizedEvent!)
  } catch {
    event = undefined
  }
  if (typeof event !== 'object' || event === null || Array.isArray(event))
    throw new ApiError(400, 'The normalized event must be a JSON object to be evaluated against rules.')

  const fieldMapping = await deps.logTypes.fieldMapping(req.logType!, settings)
  // Stored Sigma filter rules tune these rules as they tune a detector's (the bodies carry no
  // space here: every space's filters apply).
  const filters = await loadFilters(deps.store, deps.log)
  const rules = compiledBodies(deps, req.rulesBodies!, fieldMapping, filters)
  const fieldTypes = await sourceTypes(deps.store, req.sourceIndices!, fieldsOf(rules))
  const matches = ruleSet(rules, fieldTypes)
    .evaluate(event as Record<string, unknown>)
    .map((m) => {
      const rule = rules[m.at]
      return {
        rule: { id: m.rule.id!, title: m.rule.title, ...(m.rule.level ? { level: m.rule.level } : {}), tags: m.rule.tags },
        matched_conditions: matchedConditions(rule.query, new Set(m.selections), event as Record<string, unknown>, fieldTypes),
      }
    })
  return { status: 'success', rules_evaluated: rules.length, rules_matched: matches.length, matches }
}

/**
 * The compiled rules of a bodies array, kept per array for as long as the caller holds it:
 * logtest hands the same array on every call while its space is unchanged, and looking up a
 * thousand bodies in the compile cache (hashing and comparing each text) per call is most of its
 * cost. A different mapping or filter set compiles again: told by identity when the store keeps
 * them (the same objects while unchanged), else by their text.
 */
const compiledByBodies = new WeakMap<
  readonly string[],
  { mapping: CompileOptions['fieldMapping']; filters: StoredFilter[]; options: string | undefined; rules: CompiledSigmaRule[] }
>()

function compiledBodies(
  deps: EvaluateDeps,
  bodies: readonly string[],
  fieldMapping: CompileOptions['fieldMapping'],
  stored: StoredFilter[],
): CompiledSigmaRule[] {
  const hit = compiledByBodies.get(bodies)
  if (hit && hit.mapping === fieldMapping && hit.filters === stored) return hit.rules
  // Every space's filters apply (the bodies carry no space).
  const filters = stored.map((f) => f.filter)
  const optionsText = typeof fieldMapping === 'function' ? undefined : JSON.stringify([fieldMapping ?? null, filters])
  if (hit && optionsText !== undefined && hit.options === optionsText) return hit.rules
  const rules: CompiledSigmaRule[] = []
  const options = { fieldMapping }
  bodies.forEach((body, position) => {
    try {
      // Compiled once per content (compile cache): logtest sends the same bodies call after call.
      const c = compileCache.compile(body, options)
      const rule = c.id === undefined ? compileCache.compile(body, options, `rule_${position}`) : c
      // Unchanged (the cached object) unless a filter applies.
      rules.push(withFilters(rule, { ids: c.id ? [c.id] : [], name: c.document.name, logsource: c.logsource }, filters, options))
    } catch (e) {
      deps.log.debug('rules/evaluate: rule skipped', { position, error: e as Error })
    }
  })
  if (optionsText !== undefined) compiledByBodies.set(bodies, { mapping: fieldMapping, filters: stored, options: optionsText, rules })
  return rules
}

/**
 * The distinct fields a rule array reads, once per array (a thousand rules read a few hundred
 * fields, each resolved against every template), with their text as a cache key.
 */
const fieldsByRules = new WeakMap<readonly CompiledSigmaRule[], RuleFields>()
interface RuleFields {
  names: string[]
  key: string
}
function fieldsOf(rules: readonly CompiledSigmaRule[]): RuleFields {
  let fields = fieldsByRules.get(rules)
  if (!fields) {
    const names = [...new Set(rules.flatMap((r) => r.fields))]
    fieldsByRules.set(rules, (fields = { names, key: names.join('\u0000') }))
  }
  return fields
}

/**
 * Field types merged over the concrete source indices (templates resolving the fields the rules
 * read that no event carried yet); undefined when none is mapped yet. Logtest asks with the same
 * indices and rules call after call, and reading a mapping copies it whole (the event streams'
 * hold 2,289 templates): answers are reused for SOURCE_TYPES_TTL_MILLIS.
 */
async function sourceTypes(store: Store, expressions: string[], fields: RuleFields): Promise<Map<string, FieldSpec> | undefined> {
  const key = `${expressions.join(',')}\u0000${fields.key}`
  const hit = typesCache.get(key)
  if (hit && Date.now() - hit.at < SOURCE_TYPES_TTL_MILLIS) return hit.types
  const out = new Map<string, FieldSpec>()
  for (const index of await concreteIndices(store, expressions)) {
    const specs = sourceFieldSpecs((await store.getMapping({ index }))[index]?.mappings, fields.names)
    for (const [k, v] of specs ?? []) if (!out.has(k)) out.set(k, v)
  }
  const types = out.size > 0 ? stableTypes(out) : undefined
  typesCache.set(key, { at: Date.now(), types })
  return types
}

/** How long a source mapping read for rules/evaluate is reused (a mapping only grows; templates predict the event streams'). */
const SOURCE_TYPES_TTL_MILLIS = 1000
const SOURCE_TYPES_CACHE_MAX_ENTRIES = 32
const typesCache = new Lru<string, { at: number; types: Map<string, FieldSpec> | undefined }>(SOURCE_TYPES_CACHE_MAX_ENTRIES)

/** A leaf's compiled test, once per (leaf of a cached rule tree, mapping). */
const leafTests = new WeakMap<object, Map<object | undefined, (event: Record<string, unknown>) => boolean>>()
function leafTest(node: object, fieldTypes?: Map<string, FieldSpec>): (event: Record<string, unknown>) => boolean {
  let byTypes = leafTests.get(node)
  if (!byTypes) leafTests.set(node, (byTypes = new Map()))
  let t = byTypes.get(fieldTypes)
  if (!t) {
    if (byTypes.size >= 8) byTypes.clear() // a handful of mappings per leaf; never unbounded
    byTypes.set(fieldTypes, (t = compileQuery(node, fieldTypes)))
  }
  return t
}

const LEAVES = new Set(['term', 'terms', 'wildcard', 'regexp', 'range', 'exists', 'prefix'])

/**
 * `"<field> matched '<value>'"` for each positive leaf of a matched selection that holds on the
 * event (leaves under `not` explain nothing about why a rule matched).
 */
export function matchedConditions(
  query: Query,
  selections: Set<string>,
  event: Record<string, unknown>,
  fieldTypes?: Map<string, FieldSpec>,
): string[] {
  const out: string[] = []
  const walk = (node: Record<string, any>, inSelection: boolean, negated: boolean) => {
    const [kind, body] = Object.entries(node)[0] as [string, Record<string, any>]
    if (kind === 'bool') {
      const selected = inSelection || (typeof body._name === 'string' && selections.has(body._name))
      for (const c of [...(body.filter ?? []), ...(body.must ?? []), ...(body.should ?? [])]) walk(c, selected, negated)
      for (const c of body.must_not ?? []) walk(c, selected, !negated)
      return
    }
    if (!LEAVES.has(kind) || negated) return
    const [field, params] = kind === 'exists' ? [body.field as string, body] : (Object.entries(body)[0] as [string, Record<string, any>])
    const selected = inSelection || (typeof params?._name === 'string' && selections.has(params._name))
    if (!selected || !leafTest(node, fieldTypes)(event)) return
    const text = describe(kind, field, params)
    if (!out.includes(text)) out.push(text)
  }
  walk(query as Record<string, any>, false, false)
  return out
}

function describe(kind: string, field: string, params: Record<string, any>): string {
  switch (kind) {
    case 'exists':
      return `${field} exists`
    case 'regexp':
      return `${field} matched '${params._pcre?.pattern ?? params.value}'`
    case 'range': {
      const ops = ['gt', 'gte', 'lt', 'lte'].filter((o) => params[o] !== undefined).map((o) => `${o} ${params[o]}`)
      return `${field} matched '${ops.join(' ')}'`
    }
    case 'terms':
      return `${field} matched '${Array.isArray(params) ? params.join("', '") : ''}'`
    default:
      return `${field} matched '${typeof params === 'object' && params !== null ? params.value : params}'`
  }
}

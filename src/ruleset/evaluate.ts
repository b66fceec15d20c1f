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
import { fieldSpecs } from '../store/embedded'
import { compileQuery, type FieldSpec } from '../store/query'
import type { Store } from '../store/port'
import { type CompiledSigmaRule, compileCache, evaluateRules, type Query } from './sigma'
import type { LogTypes } from './log-types'
import { concreteIndices } from './detection/checkpoint'

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
  const rules: CompiledSigmaRule[] = []
  const options = { fieldMapping }
  req.rulesBodies!.forEach((body, position) => {
    try {
      // Compiled once per content (compile cache): logtest sends the same bodies call after call.
      const c = compileCache.compile(body, options)
      rules.push(c.id === undefined ? compileCache.compile(body, options, `rule_${position}`) : c)
    } catch (e) {
      deps.log.debug('rules/evaluate: rule skipped', { position, error: e as Error })
    }
  })
  const fieldTypes = await sourceTypes(deps.store, req.sourceIndices!)
  const matches = evaluateRules(event as Record<string, unknown>, rules, fieldTypes).map((m, i) => {
    const rule = rules.find((r) => r.id === m.rule.id) ?? rules[i]
    return {
      rule: { id: m.rule.id!, title: m.rule.title, ...(m.rule.level ? { level: m.rule.level } : {}), tags: m.rule.tags },
      matched_conditions: matchedConditions(rule.query, new Set(m.selections), event as Record<string, unknown>, fieldTypes),
    }
  })
  return { status: 'success', rules_evaluated: rules.length, rules_matched: matches.length, matches }
}

/** Field types merged over the concrete source indices; undefined when none is mapped yet. */
async function sourceTypes(store: Store, expressions: string[]): Promise<Map<string, FieldSpec> | undefined> {
  const out = new Map<string, FieldSpec>()
  for (const index of await concreteIndices(store, expressions)) {
    const m = (await store.getMapping({ index }))[index]?.mappings
    if (m?.properties) for (const [k, v] of fieldSpecs(m)) if (!out.has(k)) out.set(k, v)
  }
  return out.size > 0 ? stableTypes(out) : undefined
}

/** Mappings kept by content, so an unchanged mapping is the same object and its rule set is reused. */
const TYPES_CACHE_MAX_ENTRIES = 32
const typesByContent = new Map<string, Map<string, FieldSpec>>()
function stableTypes(types: Map<string, FieldSpec>): Map<string, FieldSpec> {
  const key = JSON.stringify([...types])
  const hit = typesByContent.get(key)
  if (hit) return hit
  typesByContent.set(key, types)
  if (typesByContent.size > TYPES_CACHE_MAX_ENTRIES) typesByContent.delete(typesByContent.keys().next().value!)
  return types
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
    if (!selected || !compileQuery(node, fieldTypes)(event)) return
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

/**
 * `rules/evaluate` core: one event against compiled rules with THE query evaluator
 * (`src/store/query/`), so logtest predicts exactly what a detector over stored documents finds.
 * A rule set is indexed once (runtime/rule-index.ts) so each event is tested only against the
 * rules it can match; `evaluateRulesTree` tests every rule and is kept as the reference the
 * differential test compares against.
 */
import { compile, type CompiledQuery, DocView, type FieldTypes, matchedNames } from '../../store/query'
import type { CompiledSigmaRule } from './compile'
import { contentKey } from './compile-cache'
import { neverHolds, normaliseTypes, type Requirement, requirementOf, type Types } from './runtime/requirements'
import { RuleIndex } from './runtime/rule-index'
import { vetoesOf } from './runtime/vetoes'
import { Lru } from '../../lru'

export interface RuleMatch {
  rule: { id?: string; title: string; level?: string; tags: string[] }
  /** Search identifiers that matched and contributed (not those only under `not`). */
  selections: string[]
}

/**
 * A rule's test, and the selections that can contribute to a match: those are tested again only
 * when a caller asks which matched (logtest does; a detector run, which writes none, never does).
 */
interface Predicate {
  test: (doc: DocView) => boolean
  contributing: CompiledQuery['named']
}

const never = () => false
/** A rule the evaluator refuses under a mapping (e.g. a term that is no date on a `date` field) never matches. */
const refused: Predicate = { test: never, contributing: [] }

const byTypes = new WeakMap<object, WeakMap<CompiledSigmaRule, Predicate>>()
const untyped = new WeakMap<CompiledSigmaRule, Predicate>()

function predicate(rule: CompiledSigmaRule, fieldTypes?: FieldTypes): Predicate {
  let cache = untyped
  if (fieldTypes) {
    cache = byTypes.get(fieldTypes) ?? new WeakMap()
    byTypes.set(fieldTypes, cache)
  }
  let p = cache.get(rule)
  if (!p) cache.set(rule, (p = compilePredicate(rule, fieldTypes)))
  return p
}

function compilePredicate(rule: CompiledSigmaRule, fieldTypes?: FieldTypes): Predicate {
  try {
    const { test, named } = compile(rule.query, fieldTypes)
    // Only the selections that can contribute are tested again once the rule matched (the
    // filters under `not` were half of a matching rule's time).
    const positive = new Set(rule.selections)
    return { test, contributing: named.filter((n) => positive.has(n.name)) }
  } catch (e) {
    refusals.set(rule, (e as Error).message)
    return refused
  }
}

/**
 * The predicate an indexed set keeps for a rule: none for a rule no event can match (its
 * requirement can never hold, e.g. it reads fields the mapping lacks: two thirds of SigmaHQ's
 * Windows rules under a log type that maps two dozen fields), since the index never asks it;
 * it is still compiled once, to tell whether the evaluator refuses it.
 */
function keptPredicate(rule: CompiledSigmaRule, fieldTypes: FieldTypes | undefined, r: Requirement): Predicate {
  if (!neverHolds(r)) return predicate(rule, fieldTypes)
  const cached = (fieldTypes ? byTypes.get(fieldTypes) : untyped)?.get(rule)
  const p = cached ?? compilePredicate(rule, fieldTypes)
  return p === refused ? refused : unmatched
}

/** Kept for a rule no event can match: never called, as the index never yields the rule. */
const unmatched: Predicate = { test: never, contributing: [] }

const refusals = new WeakMap<CompiledSigmaRule, string>()

const derivedRequirements = new WeakMap<object, WeakMap<CompiledSigmaRule, Requirement>>()
const normalised = new WeakMap<object, Types>()
const UNTYPED = {}

/** What an event must contain for `rule` to match under `fieldTypes`, derived once per pair. */
function requirement(rule: CompiledSigmaRule, fieldTypes?: FieldTypes): Requirement {
  const key = fieldTypes ?? UNTYPED
  let cache = derivedRequirements.get(key)
  if (!cache) derivedRequirements.set(key, (cache = new WeakMap()))
  let r = cache.get(rule)
  if (!r) cache.set(rule, (r = requirementOf(rule.query, typesOf(fieldTypes))))
  return r
}

function typesOf(fieldTypes?: FieldTypes): Types {
  let types = fieldTypes && normalised.get(fieldTypes)
  if (fieldTypes && !types) normalised.set(fieldTypes, (types = normaliseTypes(fieldTypes)))
  return types
}

/**
 * Does the per-rule work of `ruleSet(rules, fieldTypes)` ahead, giving the event loop back
 * whenever `pacer` says its slice is used, so a node building a large set keeps serving requests.
 */
export async function warmRuleSet(
  rules: readonly CompiledSigmaRule[],
  fieldTypes: FieldTypes | undefined,
  pacer: { due(): boolean; pause(): Promise<unknown> },
): Promise<void> {
  for (const rule of rules) {
    predicate(rule, fieldTypes)
    requirement(rule, fieldTypes)
    if (pacer.due()) await pacer.pause()
  }
}

const ruleOf = (rule: CompiledSigmaRule): RuleMatch['rule'] => ({ id: rule.id, title: rule.title, level: rule.level, tags: rule.tags })
const matchOf = (rule: CompiledSigmaRule, selections: string[]): RuleMatch => ({ rule: ruleOf(rule), selections })

/** A rule set ready to evaluate events: predicates compiled and rules indexed once, for one mapping. */
export class RuleSet {
  private readonly predicates: Predicate[]
  readonly index: RuleIndex
  /** Rules the evaluator cannot run under this mapping, with its reason; they never match. */
  readonly refused: Array<{ rule: CompiledSigmaRule; error: string }>

  constructor(
    readonly rules: readonly CompiledSigmaRule[],
    fieldTypes?: FieldTypes,
  ) {
    const requirements = rules.map((r) => requirement(r, fieldTypes))
    this.predicates = rules.map((r, at) => keptPredicate(r, fieldTypes, requirements[at]))
    this.refused = rules.flatMap((rule, at) => (this.predicates[at] === refused ? [{ rule, error: refusals.get(rule) ?? '' }] : []))
    const types = typesOf(fieldTypes)
    this.index = new RuleIndex(
      requirements,
      rules.map((r) => vetoesOf(r.query, types)),
    )
    // Derived ahead for this set (warmRuleSet), they are the index's now: not kept beside it.
    const cache = derivedRequirements.get(fieldTypes ?? UNTYPED)
    for (const r of rules) cache?.delete(r)
  }

  /** Matched rules in the set's order, each with its position in the set. */
  evaluate(event: Record<string, unknown> | DocView): SetMatch[] {
    const doc = event instanceof DocView ? event : new DocView(event)
    const out: SetMatch[] = []
    for (const at of this.index.candidates(doc)) if (this.predicates[at].test(doc)) out.push(new SetMatch(this, at, doc))
    return out
  }

  /** The contributing selections of rule `at` that `doc` meets (it matched). */
  selections(at: number, doc: DocView): string[] {
    return matchedNames(this.predicates[at].contributing, doc)
  }
}

/** A match of a set's rule `at`: what was matched and why is worked out when read, not per match. */
export class SetMatch implements RuleMatch {
  private named?: string[]

  constructor(
    private readonly set: RuleSet,
    readonly at: number,
    private readonly doc: DocView,
  ) {}

  get rule(): RuleMatch['rule'] {
    return ruleOf(this.set.rules[this.at])
  }

  get selections(): string[] {
    return (this.named ??= this.set.selections(this.at, this.doc))
  }
}

const sets = new WeakMap<readonly CompiledSigmaRule[], Map<FieldTypes | undefined, RuleSet>>()
/** Rule sets by content (the rules' compile-cache keys and the mapping object), for callers that rebuild arrays. */
/** Indexed rule sets kept by content (least recently used evicted first). */
export const RULE_SET_CACHE_MAX_ENTRIES = 64
const byContent = new Lru<string, { rules: readonly CompiledSigmaRule[]; fieldTypes?: FieldTypes; set: RuleSet }>(
  RULE_SET_CACHE_MAX_ENTRIES,
)
const typesIds = new WeakMap<object, number>()
let nextTypesId = 0

/**
 * The indexed set of `rules` for `fieldTypes`, built once per (array, mapping) pair, and once per
 * content when every rule came from the compile cache (a detector run or a logtest call rebuilds
 * its array, not its rules).
 */
export function ruleSet(rules: readonly CompiledSigmaRule[], fieldTypes?: FieldTypes): RuleSet {
  let byMapping = sets.get(rules)
  if (!byMapping) sets.set(rules, (byMapping = new Map()))
  let set = byMapping.get(fieldTypes)
  if (set) return set
  // A handful of mappings per array at most (one per source index); never grow without bound.
  if (byMapping.size >= 16) byMapping.clear()
  const keys = rules.map(contentKey)
  let key: string | undefined
  if (keys.every((k) => k !== undefined)) {
    let t = fieldTypes === undefined ? -1 : typesIds.get(fieldTypes)
    if (t === undefined) typesIds.set(fieldTypes!, (t = nextTypesId++))
    key = `${t}|${keys.join('|')}`
    const hit = byContent.get(key)
    if (hit && hit.fieldTypes === fieldTypes && hit.rules.every((r, i) => r === rules[i])) set = hit.set
  }
  if (!set) {
    set = new RuleSet(rules, fieldTypes)
    if (key !== undefined) {
      byContent.set(key, { rules, fieldTypes, set })
    }
  }
  byMapping.set(fieldTypes, set)
  return set
}

/** Matched rules in the given order. `fieldTypes` (the source index mapping) when known. */
export function evaluateRules(event: Record<string, unknown>, rules: readonly CompiledSigmaRule[], fieldTypes?: FieldTypes): RuleMatch[] {
  return ruleSet(rules, fieldTypes)
    .evaluate(event)
    .map((m): RuleMatch => ({ rule: m.rule, selections: m.selections }))
}

/** Every rule tested against the event (no index): the reference the indexed runtime must agree with. */
export function evaluateRulesTree(
  event: Record<string, unknown>,
  rules: readonly CompiledSigmaRule[],
  fieldTypes?: FieldTypes,
): RuleMatch[] {
  const doc = new DocView(event)
  const out: RuleMatch[] = []
  for (const rule of rules) {
    const p = predicate(rule, fieldTypes)
    if (p.test(doc)) out.push(matchOf(rule, matchedNames(p.contributing, doc)))
  }
  return out
}

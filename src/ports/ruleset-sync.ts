// The port between the Content Manager and Ruleset Management, below both: the Content Manager
// keeps Ruleset Management's rules, integrations and standard detectors in step with content (spec
// background 7); Ruleset Management implements this, the Content Manager only calls it. Neither
// imports the other.
import { t, type Static } from 'elysia'
import { ApiError } from '../http/errors'
import type { Space } from './spaces'

/** A content document as both sides pass it (the resource, not its envelope). */
export type Doc = Record<string, unknown>

/** `rules/evaluate` (reference 5.10): one normalized event against the Sigma bodies of an integration's rules. */
export const RuleEvaluation = t.Object({
  normalizedEvent: t.String(),
  rulesBodies: t.Array(t.String()),
  integrationId: t.String(),
  logType: t.String(),
  sourceIndices: t.Array(t.String()),
})
export type RuleEvaluation = Static<typeof RuleEvaluation>

/** What `rules/evaluate` answers; logtest passes it on as its detection result. */
export const RuleEvaluationResult = t.Object({
  status: t.Union([t.Literal('success'), t.Literal('error')]),
  rules_evaluated: t.Integer(),
  rules_matched: t.Integer(),
  matches: t.Array(
    t.Object({
      rule: t.Object({ id: t.String(), title: t.String(), level: t.Optional(t.String()), tags: t.Array(t.String()) }),
      matched_conditions: t.Array(t.String()),
    }),
  ),
})
export type RuleEvaluationResult = Static<typeof RuleEvaluationResult>

/** One rule of `upsertRules`, as `upsertRule` takes it. */
export interface RuleUpsert {
  rule: Doc
  integrationId: string
  existed: boolean
}

export interface RulesetSync {
  /**
   * Creates (`existed: false`) or replaces a rule of `space`, linked to its integration. Throws
   * RulesetRejected when Ruleset Management refuses the rule (the REST call answers 400).
   */
  upsertRule(space: Space, rule: Doc, integrationId: string, existed: boolean): Promise<void>
  /**
   * `upsertRule` of many rules at once (a promotion's), written together: answers, in order,
   * undefined for each rule upserted and what refused or failed each other one (one rule's
   * failure is not the others').
   */
  upsertRules(space: Space, rules: RuleUpsert[]): Promise<Array<Error | undefined>>
  /** Removes a rule; an unknown id is not an error. */
  deleteRule(space: Space, id: string): Promise<void>
  upsertIntegration(space: Space, integration: Doc, existed: boolean): Promise<void>
  deleteIntegration(space: Space, id: string): Promise<void>
  /** Logtest detection; absent until Ruleset Management is wired in (detection then reports an error). */
  evaluate?(request: RuleEvaluation): Promise<RuleEvaluationResult>
}

/**
 * Ruleset Management refused a rule or integration. It is the REST caller's answer as it stands
 * (400, the spec's wording), so the Content Manager lets it through without translating it again.
 */
export class RulesetRejected extends ApiError {
  override name = 'RulesetRejected'
  constructor(readonly reason: string) {
    super(400, `Error in Security Analytics. ${reason}`)
  }
}

/** A standard detector as the Content Manager provisions it from a CTI integration (5.5). */
export interface StandardDetector {
  /** The integration's CTI id; also the detector's id, so a re-sync updates it in place. */
  integrationId: string
  /** Integration title = log type name. */
  logType: string
  /** Raw CTI category (`cloud-services`), used for the default source index. */
  category: string
  ruleIds: string[]
  sources?: string[]
  /** Minutes; out of 1..10080 (or absent) falls back to the `detector_interval` setting. */
  interval?: number
  enabled?: boolean
}

/** Until Ruleset Management is wired in: accept everything, store nothing. */
export const noRulesetSync: RulesetSync = {
  async upsertRule() {},
  async upsertRules(space, rules) {
    return upsertOneByOne(this, space, rules)
  },
  async deleteRule() {},
  async upsertIntegration() {},
  async deleteIntegration() {},
}

/** `upsertRules` as one `upsertRule` call after another: for a side with nothing to gain from writing them together. */
export async function upsertOneByOne(
  sync: Pick<RulesetSync, 'upsertRule'>,
  space: Space,
  rules: RuleUpsert[],
): Promise<Array<Error | undefined>> {
  const out: Array<Error | undefined> = []
  for (const r of rules) {
    try {
      await sync.upsertRule(space, r.rule, r.integrationId, r.existed)
      out.push(undefined)
    } catch (e) {
      out.push(e instanceof Error ? e : new Error(String(e)))
    }
  }
  return out
}

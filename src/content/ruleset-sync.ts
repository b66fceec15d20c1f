// The Content Manager keeps Ruleset Management's rules and integrations in step with content (spec
// background 7). The detectors task implements this; the Content Manager only calls it.
import { t, type Static } from 'elysia'
import type { Doc } from './repository'
import type { Space } from './spaces'

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

export interface RulesetSync {
  /**
   * Creates (`existed: false`) or replaces a rule of `space`, linked to its integration. Throws
   * RulesetRejected when Ruleset Management refuses the rule (the REST call answers 400).
   */
  upsertRule(space: Space, rule: Doc, integrationId: string, existed: boolean): Promise<void>
  /** Removes a rule; an unknown id is not an error. */
  deleteRule(space: Space, id: string): Promise<void>
  upsertIntegration(space: Space, integration: Doc, existed: boolean): Promise<void>
  deleteIntegration(space: Space, id: string): Promise<void>
  /** Logtest detection; absent until Ruleset Management is wired in (detection then reports an error). */
  evaluate?(request: RuleEvaluation): Promise<RuleEvaluationResult>
}

/** Ruleset Management refused a rule or integration; its reason reaches the REST caller. */
export class RulesetRejected extends Error {
  override name = 'RulesetRejected'
}

/** Until Ruleset Management is wired in: accept everything, store nothing. */
export const noRulesetSync: RulesetSync = {
  async upsertRule() {},
  async deleteRule() {},
  async upsertIntegration() {},
  async deleteIntegration() {},
}

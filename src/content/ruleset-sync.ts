// The Content Manager keeps Ruleset Management's rules and integrations in step with content (spec
// background 7). The detectors task implements this; the Content Manager only calls it.
import type { Doc } from './repository'
import type { Space } from './spaces'

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

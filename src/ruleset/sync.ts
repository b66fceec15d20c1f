/**
 * The service calls the Content Manager makes into Ruleset Management (reference 5.9): rules,
 * integrations (log types) and detectors per space. It implements the Content Manager's
 * `RulesetSync` port and adds the detector and space calls.
 */
import { Value } from '@sinclair/typebox/value'
import { IocFieldsSchema } from './threat-intel/ioc-fields'
import {
  RulesetRejected,
  type Doc,
  type RuleEvaluation,
  type RuleEvaluationResult,
  type RuleUpsert,
  type RulesetSync,
  type StandardDetector,
} from '../ports/ruleset-sync'
import { ApiError } from '../http/errors'
import type { RulesetDeps } from './deps'
import type { Detectors } from './detectors'
import { evaluateRulesRequest } from './evaluate'
import type { LogTypes } from './log-types'
import type { DetectorBody, Space } from './model'
import type { Rules, RuleWrite } from './rules'

export const DETECTOR_INTERVAL_SETTING = 'plugins.content_manager.security_analytics.detector_interval'

export type { StandardDetector } from '../ports/ruleset-sync'

export interface RulesetDetectorSync {
  upsertDetector(d: StandardDetector): Promise<{ _id: string; result: 'created' | 'updated'; skippedRules: string[] }>
  deleteDetector(id: string): Promise<boolean>
  setDetectorEnabled(id: string, enabled: boolean, user?: string): Promise<{ _id: string; _version: number; changed: boolean }>
  deleteSpace(space: Space): Promise<{ integrations: number; rules: number; failures: string[] }>
}

/** Ruleset Management's refusal of a rule (a 400) as the Content Manager passes it on. */
const rejected = (e: unknown): Error =>
  e instanceof ApiError && e.status === 400 ? new RulesetRejected(e.message) : e instanceof Error ? e : new Error(String(e))

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined)
const obj = (v: unknown): Doc => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Doc) : {})

/** `cloud-services` -> `Cloud Services` (how the fork shows categories). */
export const prettyCategory = (c: string) =>
  c
    .split('-')
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join(' ')

export class RulesetService implements RulesetSync, RulesetDetectorSync {
  constructor(
    private readonly d: RulesetDeps,
    private readonly logTypes: LogTypes,
    private readonly rules: Rules,
    private readonly detectors: Detectors,
  ) {}

  async upsertRule(space: Space, rule: Doc, integrationId: string, _existed: boolean): Promise<void> {
    const write = await this.ruleWrite(space, rule, integrationId)
    try {
      await this.rules.upsert(space, write)
    } catch (e) {
      throw rejected(e)
    }
  }

  async upsertRules(space: Space, rules: RuleUpsert[]): Promise<Array<Error | undefined>> {
    const titles = new Map<string, Promise<string | undefined>>()
    const title = (id: string) => titles.get(id) ?? titles.set(id, this.integrationTitle(space, id)).get(id)!
    const writes: Array<RuleWrite & { ctiId: string }> = []
    const at: number[] = []
    const out: Array<Error | undefined> = []
    for (const [i, r] of rules.entries()) {
      try {
        writes.push(await this.ruleWrite(space, r.rule, r.integrationId, title))
        at.push(i)
        out.push(undefined)
      } catch (e) {
        out.push(e as Error)
      }
    }
    let answers: Array<Error | undefined>
    try {
      answers = await this.rules.upsertMany(space, writes)
    } catch (e) {
      answers = writes.map(() => e as Error)
    }
    answers.forEach((e, k) => (out[at[k]] = e && rejected(e)))
    return out
  }

  /** What `Rules.upsert` takes for a content rule: its CTI id, and its log type (the integration's title when the rule names none). */
  private async ruleWrite(
    space: Space,
    rule: Doc,
    integrationId: string,
    titleOf = (id: string) => this.integrationTitle(space, id),
  ): Promise<RuleWrite & { ctiId: string }> {
    const ctiId = str(rule.id)
    if (!ctiId) throw new RulesetRejected('A rule needs an id')
    const ls = obj(rule.logsource)
    const category = str(ls.product) ?? str(ls.category) ?? (await titleOf(integrationId)) ?? 'linux'
    return { body: rule, ctiId, category }
  }

  async deleteRule(space: Space, id: string): Promise<void> {
    await this.rules.delete(space, id)
  }

  async upsertIntegration(space: Space, integration: Doc, _existed: boolean): Promise<void> {
    const id = str(integration.id)
    const meta = obj(integration.metadata)
    const name = str(meta.title) ?? str(integration.title)
    if (!id || !name) throw new RulesetRejected('An integration needs an id and a metadata.title')
    const category = str(integration.category)
    await this.logTypes.upsert(space, {
      id,
      name,
      description: str(meta.description),
      category: category && prettyCategory(category),
      source: space,
      // An integration may say which of its fields hold IoCs (threat intel); a malformed list is none.
      ...(Value.Check(IocFieldsSchema, integration.ioc_fields) ? { ioc_fields: integration.ioc_fields } : {}),
    })
  }

  async deleteIntegration(space: Space, id: string): Promise<void> {
    await this.logTypes.delete(space, id)
  }

  /** `rules/evaluate` for logtest detection (reference 5.10). */
  async evaluate(request: RuleEvaluation): Promise<RuleEvaluationResult> {
    return evaluateRulesRequest(
      { store: this.d.store, log: this.d.log, logTypes: this.logTypes },
      request,
      await this.d.settings.snapshot(),
    )
  }

  async upsertDetector(sd: StandardDetector): Promise<{ _id: string; result: 'created' | 'updated'; skippedRules: string[] }> {
    const settings = await this.d.settings.snapshot()
    const { rules, missing } = await this.rules.bySpaceIds('standard', sd.ruleIds)
    if (missing.length > 0)
      this.d.log.warn('standard detector: rules not found, skipped', { integration: sd.integrationId, rules: missing })
    const interval =
      sd.interval !== undefined && sd.interval >= 1 && sd.interval <= 10080 ? sd.interval : settings.num(DETECTOR_INTERVAL_SETTING)
    const body: DetectorBody = {
      type: 'detector',
      name: sd.logType.toLowerCase(),
      detector_type: sd.logType,
      enabled: sd.enabled ?? false,
      schedule: { period: { interval, unit: 'MINUTES' } },
      inputs: [
        {
          detector_input: {
            description: `Detector for ${sd.logType} integration`,
            indices: sd.sources && sd.sources.length > 0 ? sd.sources : [`svc-events-v5-${sd.category}`],
            custom_rules: [],
            pre_packaged_rules: rules.map((r) => ({ id: r.rule.document.id })),
          },
        },
      ],
      triggers: [],
    }
    const existing = await this.detectors.stored(sd.integrationId)
    if (existing) {
      await this.detectors.update(sd.integrationId, body, undefined)
      return { _id: sd.integrationId, result: 'updated', skippedRules: missing }
    }
    await this.detectors.create(body, undefined, { id: sd.integrationId, documentId: sd.integrationId })
    return { _id: sd.integrationId, result: 'created', skippedRules: missing }
  }

  async deleteDetector(id: string): Promise<boolean> {
    try {
      await this.detectors.delete(id, undefined)
      return true
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return false
      throw e
    }
  }

  setDetectorEnabled(id: string, enabled: boolean, user?: string) {
    return this.detectors.setEnabled(id, enabled, user)
  }

  async deleteSpace(space: Space): Promise<{ integrations: number; rules: number; failures: string[] }> {
    const failures: string[] = []
    const attempt = async (what: string, fn: () => Promise<number>) => {
      try {
        return await fn()
      } catch (e) {
        failures.push(`${what}: ${(e as Error).message}`)
        return 0
      }
    }
    const integrations = await attempt('integrations', () => this.logTypes.deleteSpace(space))
    const rules = await attempt('rules', () => this.rules.deleteSpace(space))
    return { integrations, rules, failures }
  }

  private async integrationTitle(space: Space, integrationId: string): Promise<string | undefined> {
    const r = await this.logTypes.search({
      size: 1,
      query: { bool: { filter: [{ term: { 'document.id': integrationId } }, { term: { space } }] } },
    })
    return (r.hits.hits[0]?._source as { name?: string } | undefined)?.name
  }
}

// Logtest (reference 4.9): the Engine normalises a raw event in a space's tester session, and
// Ruleset Management evaluates the integration's rules of that space against the result. The
// combined run always answers; how each phase went is carried inside (`normalization`, `detection`).
import { Value } from '@sinclair/typebox/value'
import type { Logger } from '../../http/log'
import { ApiError } from '../../http/errors'
import { eventsStream, type EventCategory } from '../../setup/indices/names'
import { EngineError, engineFailure, EngineRefused, type EngineClient, type LogtestRequest } from '../engine'
import { CONTENT_ALIASES } from '../indices'
import { isObject, type ContentRepository, type Doc, type Stored } from '../repository'
import { storedSpaceHash } from '../space-hash'
import { VersionedCache } from '../../store/versioned-cache'
import type { Space } from '../spaces'
import { RuleEvaluationResult, type RulesetSync } from '../../ports/ruleset-sync'

export interface LogtestDeps {
  repo: ContentRepository
  engine: EngineClient
  ruleset: RulesetSync
  log: Pick<Logger, 'warn' | 'error'>
}

export type Detection = RuleEvaluationResult | { status: 'skipped'; reason: string }

export type Normalization = Doc | { status: 'error'; error: { message: string; code: 'ENGINE_ERROR' | 'PARSE_ERROR' } }

/** The normalization route's answer: the Engine's message (parsed when it is JSON) and its HTTP status. */
export interface EngineAnswer {
  status: number
  message: unknown
}

type EngineRun = { ok: true; result: Doc; event: Doc } | { ok: false; normalization: Normalization }

const noRules = (): RuleEvaluationResult => ({ status: 'success', rules_evaluated: 0, rules_matched: 0, matches: [] })
const failed = (): RuleEvaluationResult => ({ status: 'error', rules_evaluated: 0, rules_matched: 0, matches: [] })

/** Integrations and their rule bodies kept per (space, integration): a handful of integrations are tested at a time. */
const CACHE_MAX_ENTRIES = 64

export class LogtestService {
  /** Integrations looked up by id, while the integrations index sees no write (embedded store only). */
  private readonly integrations = new VersionedCache<Stored | undefined>(CACHE_MAX_ENTRIES)
  /**
   * The enabled rule bodies of an integration, by the version they were read at: the rules index's
   * write mark, else (a store that keeps none) the space hash, which covers the policy, its
   * integrations (their rule lists) and every rule document and moves on every write. The SAME
   * array is handed on each call while unchanged, which lets `rules/evaluate` reuse its compiled
   * and indexed set instead of reading, serialising and compiling every rule of the space per call.
   */
  private readonly bodies = new VersionedCache<string[]>(CACHE_MAX_ENTRIES)

  constructor(private readonly d: LogtestDeps) {}

  /** Normalization only: the Engine's answer with the Engine's status; a failure as `engineFailure` answers it. */
  async normalize(payload: LogtestRequest): Promise<EngineAnswer> {
    try {
      const reply = await this.d.engine.logtest(payload)
      return { status: reply.status, message: parseJson(reply.message) ?? reply.message }
    } catch (e) {
      if (!(e instanceof EngineError)) throw e
      if (!(e instanceof EngineRefused)) this.d.log.error('Engine logtest failed', { error: e })
      const answer = engineFailure(e)
      return { status: answer.status, message: parseJson(answer.message) ?? answer.message }
    }
  }

  /** Normalization, then detection when an integration is named and the Engine succeeded. */
  async combined(
    space: string,
    integrationId: string | undefined,
    payload: LogtestRequest,
  ): Promise<{ normalization: Normalization; detection: Detection }> {
    if (integrationId === undefined) {
      const run = await this.runEngine(payload)
      return {
        normalization: run.ok ? run.result : run.normalization,
        detection: { status: 'skipped', reason: "'integration' field not provided" },
      }
    }
    // The integration is looked up first: a wrong id is the caller's error and the Engine is not asked.
    const integration = await this.integration(space, integrationId)
    const run = await this.runEngine(payload)
    if (!run.ok) return { normalization: run.normalization, detection: { status: 'skipped', reason: 'Engine processing failed' } }
    return { normalization: run.result, detection: await this.evaluate(space, integration, run.event) }
  }

  /** Detection only, against an event the caller already normalised. */
  async detect(space: string, integrationId: string, input: Doc): Promise<RuleEvaluationResult> {
    return this.evaluate(space, await this.integration(space, integrationId), input)
  }

  private async integration(space: string, id: string): Promise<Stored> {
    const found = await this.integrations.get(this.d.repo.writeMark(CONTENT_ALIASES.integrations), `${space}\u0000${id}`, () =>
      this.d.repo.findByDocumentId(CONTENT_ALIASES.integrations, space, id),
    )
    if (!found) throw new ApiError(400, `Integration [${id}] not found in the '${space}' space.`)
    return found
  }

  /**
   * Reference 4.9: success is the Engine's `result` (as its message); anything but 200 or no answer
   * is ENGINE_ERROR; a 200 whose message is not a JSON object (mock mode's `OK`) is PARSE_ERROR.
   */
  private async runEngine(payload: LogtestRequest): Promise<EngineRun> {
    let message: string
    try {
      message = (await this.d.engine.logtest(payload)).message
    } catch (e) {
      const text = e instanceof EngineRefused ? e.reason : e instanceof Error ? e.message : String(e)
      this.d.log.warn('Engine logtest failed', { error: text })
      return { ok: false, normalization: { status: 'error', error: { message: text, code: 'ENGINE_ERROR' } } }
    }
    const result = parseJson(message)
    if (!isObject(result)) return { ok: false, normalization: { status: 'error', error: { message, code: 'PARSE_ERROR' } } }
    return { ok: true, result, event: isObject(result.output) ? result.output : result }
  }

  /** The integration's enabled rules of the same space, evaluated as its detector would run them. */
  private async evaluate(space: string, integration: Stored, event: Doc): Promise<RuleEvaluationResult> {
    const ids = strings(integration.document.rules)
    if (ids.length === 0) return noRules()
    let bodies: string[]
    try {
      bodies = await this.ruleBodies(space, integration, ids)
    } catch (e) {
      this.d.log.warn('Logtest rules could not be read', { integration: integrationIdOf(integration), error: e as Error })
      return noRules()
    }
    if (bodies.length === 0) return noRules()
    const target = detectorTarget(integration)
    if (target.sourceIndices.length === 0 || !this.d.ruleset.evaluate) return failed()
    try {
      const result = await this.d.ruleset.evaluate({ normalizedEvent: JSON.stringify(event), rulesBodies: bodies, ...target })
      return Value.Check(RuleEvaluationResult, result) ? result : failed()
    } catch (e) {
      this.d.log.error('Logtest rule evaluation failed', { integration: target.integrationId, error: e as Error })
      return failed()
    }
  }

  private async ruleBodies(space: string, integration: Stored, ids: string[]): Promise<string[]> {
    const version = this.d.repo.writeMark(CONTENT_ALIASES.rules) ?? (await this.spaceHash(space))
    return this.bodies.get(version, `${space}\u0000${integration._id}\u0000${integration.hash}`, async () => {
      const rules = await this.d.repo.list(CONTENT_ALIASES.rules, space, {
        filter: [{ terms: { 'document.id': ids } }, { term: { 'document.enabled': true } }],
      })
      return rules.map((r) => JSON.stringify(r.document))
    })
  }

  private async spaceHash(space: string): Promise<string | undefined> {
    const policy = await this.d.repo.policy(space as Space)
    return policy && storedSpaceHash(policy)
  }
}

/**
 * Where the integration's detector looks (reference 5.10, as a standard detector is built): log
 * type = integration title, sources = `detector.source`, else the events stream of its category.
 */
function detectorTarget(integration: Stored) {
  const doc = integration.document
  const integrationId = integrationIdOf(integration)
  const title = isObject(doc.metadata) && typeof doc.metadata.title === 'string' ? doc.metadata.title : ''
  let sourceIndices = isObject(doc.detector) ? strings(doc.detector.source) : []
  if (sourceIndices.length === 0 && typeof doc.category === 'string' && doc.category !== '')
    sourceIndices = [eventsStream(doc.category.toLowerCase() as EventCategory)]
  return { integrationId, logType: title || integrationId, sourceIndices }
}

const integrationIdOf = (s: Stored) => (typeof s.document.id === 'string' ? s.document.id : s._id)

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : [])

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

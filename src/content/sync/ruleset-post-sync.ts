// Ruleset consumer post-sync (reference 2.8, 7.2): default space policies, then the three
// Ruleset Management phases (integrations, rules, detectors) when content changed or when a phase
// is still pending from an earlier pass, then the standard space hash (which loads the Engine when
// it moved). A failed or timed-out phase is written to `pending_sync_phases` and retried next time.
import type { Logger } from '../../http/log'
import type { Store } from '../../store/port'
import type { SettingsSnapshot } from '../../config/cluster-settings'
import { CONTENT_ALIASES } from '../indices'
import { ensureSpacePolicies } from '../policy/defaults'
import { isObject, type ContentRepository, type Doc, type Stored } from '../repository'
import type { RulesetSync, StandardDetector } from '../../ports/ruleset-sync'
import type { SpaceHashResult } from '../space-hash'
import type { Space } from '../spaces'
import { SYNC_PHASES, type SyncPhase } from './state'

/** What the sync needs from Ruleset Management: the Content Manager's port plus detectors and space cleanup. */
export interface SyncRuleset extends RulesetSync {
  upsertDetector?(d: StandardDetector): Promise<unknown>
  deleteSpace?(space: Space): Promise<{ failures: string[] }>
}

export interface RulesetPostSyncDeps {
  store: Store
  repo: ContentRepository
  ruleset: SyncRuleset
  log: Logger
  now: () => number
  settings: SettingsSnapshot
  recomputeSpaces(spaces: Space[]): Promise<SpaceHashResult[]>
}

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined)
const ids = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])

class PhaseTimeout extends Error {}

async function withTimeout<T>(ms: number, what: string, fn: () => Promise<T>): Promise<T> {
  let timer: Timer | undefined
  try {
    return await Promise.race([
      fn(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new PhaseTimeout(`${what} did not finish within ${ms / 1000} s`)), ms)
      }),
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** Runs each item, collecting failures instead of stopping at the first. */
async function each<T>(items: T[], fn: (item: T) => Promise<unknown>): Promise<string[]> {
  const failures: string[] = []
  for (const item of items) {
    try {
      await fn(item)
    } catch (e) {
      failures.push((e as Error).message)
    }
  }
  return failures
}

export interface StaleStandard {
  integrations: string[]
  rules: string[]
}

export async function rulesetPostSync(
  deps: RulesetPostSyncDeps,
  input: { updated: boolean; pending: string[]; stale?: StaleStandard },
): Promise<{ pending: SyncPhase[] }> {
  const { log, settings } = deps
  try {
    await ensureSpacePolicies({ store: deps.store, now: deps.now })
  } catch (e) {
    log.error('default space policies could not be ensured', { error: e })
  }
  const createDetectors = settings.bool('plugins.content_manager.catalog.create_detectors')
  const due = (phase: SyncPhase) => input.updated || input.pending.includes(phase)
  const timeoutMs = settings.num('plugins.content_manager.security_analytics.sync_timeout_seconds') * 1000
  const failed = new Set<SyncPhase>()

  if (input.updated) {
    await deps.store.refresh({ index: Object.values(CONTENT_ALIASES), expand_wildcards: 'all', ignore_unavailable: true })
  }

  let integrations: Stored[] = []
  const needIntegrations = SYNC_PHASES.some((p) => due(p))
  if (needIntegrations) {
    try {
      integrations = await deps.repo.list(CONTENT_ALIASES.integrations, 'standard')
    } catch (e) {
      log.error('standard integrations could not be read', { error: e })
      for (const p of SYNC_PHASES) if (due(p)) failed.add(p)
    }
  }

  const phase = async (name: SyncPhase, fn: () => Promise<string[]>) => {
    if (!due(name) || failed.has(name)) return
    try {
      const failures = await withTimeout(timeoutMs, `Ruleset Management ${name} sync`, fn)
      if (failures.length > 0) {
        failed.add(name)
        log.warn('Ruleset Management sync phase had failures', { phase: name, failures: failures.length, first: failures.slice(0, 3) })
      }
    } catch (e) {
      failed.add(name)
      log.warn('Ruleset Management sync phase failed', { phase: name, error: (e as Error).message })
    }
  }

  await phase('integrations', () => each(integrations, (i) => deps.ruleset.upsertIntegration('standard', i.document, true)))

  await phase('rules', async () => {
    const rules = await deps.repo.list(CONTENT_ALIASES.rules, 'standard')
    const parent = new Map<string, string>()
    for (const i of integrations) for (const r of ids(i.document.rules)) parent.set(r, String(i.document.id))
    return each(rules, (r) => deps.ruleset.upsertRule('standard', r.document, parent.get(String(r.document.id)) ?? '', true))
  })

  if (createDetectors && deps.ruleset.upsertDetector) {
    await phase('detectors', () => syncDetectors(deps, integrations))
  }

  if (input.stale) await removeStale(deps, input.stale, integrations)

  const pending = SYNC_PHASES.filter((p) => failed.has(p) && (p !== 'detectors' || createDetectors))
  if (input.updated) await deps.recomputeSpaces(['standard'])
  return { pending }
}

/** Reference 2.8 step 6: one detector per standard integration with at least one enabled rule. */
async function syncDetectors(deps: RulesetPostSyncDeps, integrations: Stored[]): Promise<string[]> {
  const rules = await deps.repo.list(CONTENT_ALIASES.rules, 'standard', { source: ['document.id', 'document.enabled', 'space.name'] })
  const enabled = new Set(rules.filter((r) => r.document.enabled !== false).map((r) => String(r.document.id)))
  const wanted: StandardDetector[] = []
  for (const i of integrations) {
    const doc = i.document
    const ruleIds = ids(doc.rules).filter((r) => enabled.has(r))
    if (ruleIds.length === 0) continue
    const detector: Doc = isObject(doc.detector) ? doc.detector : {}
    // `detector.source` is a keyword: one index pattern or a list of them.
    const declared = typeof detector.source === 'string' ? [detector.source] : ids(detector.source)
    const sources = declared.length > 0 ? declared : undefined
    if (sources) {
      const missing: string[] = []
      for (const s of sources) {
        const found = await deps.store.resolve(s, { expand_wildcards: 'all', ignore_unavailable: true, allow_no_indices: true })
        if (found.length === 0) missing.push(s)
      }
      if (missing.length > 0) {
        deps.log.warn('standard detector skipped: source indices do not exist', { integration: doc.id, missing })
        continue
      }
    }
    const meta = isObject(doc.metadata) ? doc.metadata : {}
    wanted.push({
      integrationId: String(doc.id),
      logType: str(meta.title) ?? String(doc.id),
      category: str(doc.category) ?? 'other',
      ruleIds,
      sources,
      interval: typeof detector.interval === 'number' ? detector.interval : undefined,
      enabled: typeof detector.enabled === 'boolean' ? detector.enabled : false,
    })
  }
  if (wanted.length === 0) return []
  const upsert = deps.ruleset.upsertDetector!.bind(deps.ruleset)
  const firstMs = deps.settings.num('plugins.content_manager.security_analytics.detector_timeout_seconds') * 1000
  const failures: string[] = []
  // The first detector alone (it may create shared structures), the rest in parallel.
  try {
    await withTimeout(firstMs, 'first detector creation', () => upsert(wanted[0]))
  } catch (e) {
    failures.push(`${wanted[0].integrationId}: ${(e as Error).message}`)
  }
  const rest = await Promise.allSettled(wanted.slice(1).map((d) => upsert(d)))
  rest.forEach((r, i) => {
    if (r.status === 'rejected') failures.push(`${wanted[i + 1].integrationId}: ${(r.reason as Error).message}`)
  })
  return failures
}

/** Reference 2.8 step 8: after a swap, what left the standard space leaves Ruleset Management too. */
async function removeStale(deps: RulesetPostSyncDeps, stale: StaleStandard, integrations: Stored[]): Promise<void> {
  const timeoutMs = deps.settings.num('plugins.content_manager.security_analytics.cleanup_timeout_seconds') * 1000
  const nowIntegrations = new Set(integrations.map((i) => String(i.document.id)))
  try {
    const rules = await deps.repo.list(CONTENT_ALIASES.rules, 'standard', { source: ['document.id', 'space.name'] })
    const nowRules = new Set(rules.map((r) => String(r.document.id)))
    await withTimeout(timeoutMs, 'stale Ruleset Management cleanup', async () => {
      const failures = [
        ...(await each(
          stale.rules.filter((id) => !nowRules.has(id)),
          (id) => deps.ruleset.deleteRule('standard', id),
        )),
        ...(await each(
          stale.integrations.filter((id) => !nowIntegrations.has(id)),
          (id) => deps.ruleset.deleteIntegration('standard', id),
        )),
      ]
      if (failures.length > 0)
        deps.log.warn('stale standard content could not all be removed from Ruleset Management', { failures: failures.slice(0, 3) })
    })
  } catch (e) {
    // Not retried (spec: cleanup_timeout_seconds).
    deps.log.warn('stale standard content cleanup did not finish', { error: (e as Error).message })
  }
}

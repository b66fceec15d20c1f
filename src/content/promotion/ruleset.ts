// Ruleset Management's copies of the target space's integrations and rules: step 4 of a promotion,
// and the reconciliation that follows a rollback. Both are best-effort: a failure is a warning and
// never changes the promotion's answer.
import type { Logger } from '../../http/log'
import type { Doc } from '../repository'
import type { RulesetSync } from '../../ports/ruleset-sync'
import type { Applied } from './consolidate'
import type { Plan, Step } from './plan'

interface Deps {
  ruleset: RulesetSync
  log: Logger
}

const ids = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])
const documentOf = (source: Doc | undefined): Doc => (source?.document ?? {}) as Doc

/** The integration listing each rule in a set of integration documents (the first that does). */
function parentsOf(integrations: Doc[]): (ruleId: string) => string {
  const parents = new Map<string, string>()
  for (const i of integrations) for (const r of ids(i.rules)) if (!parents.has(r)) parents.set(r, String(i.id ?? ''))
  return (ruleId) => parents.get(ruleId) ?? ''
}

/**
 * Calls for independent documents, `SLICE` at a time: the store commits the writes of one slice
 * together instead of one commit (and sync to disk) per rule, so 2,400 promoted rules take
 * seconds, not minutes. Warnings stay in the steps' order.
 */
const SLICE = 32
async function inSlices<T>(steps: T[], call: (step: T) => Promise<string | undefined>): Promise<string[]> {
  const warnings: string[] = []
  for (let at = 0; at < steps.length; at += SLICE) {
    for (const w of await Promise.all(steps.slice(at, at + SLICE).map(call))) if (w !== undefined) warnings.push(w)
  }
  return warnings
}

/** The call's warning, if it failed (logged). */
async function tried(deps: Deps, what: string, call: () => Promise<void>): Promise<string | undefined> {
  try {
    await call()
    return undefined
  } catch (e) {
    return warned(deps, what, e)
  }
}

/** A failed call's warning, logged. */
function warned(deps: Deps, what: string, e: unknown): string {
  const error = e instanceof Error ? e.message : String(e)
  deps.log.warn('Ruleset Management call failed during a promotion', { call: what, error })
  return `${what}: ${error}`
}

async function attempt(deps: Deps, warnings: string[], what: string, call: () => Promise<void>): Promise<void> {
  const warning = await tried(deps, what, call)
  if (warning !== undefined) warnings.push(warning)
}

/** Step 4: removed rules and integrations deleted, then applied integrations and rules upserted (POST when new, PUT otherwise). */
export async function syncRuleset(deps: Deps, plan: Plan): Promise<string[]> {
  const warnings: string[] = []
  const { target } = plan
  const removed = (list: string) => plan.removals.filter((s) => s.list === list)
  const applied = (list: string) => plan.applies.filter((s) => s.list === list)
  warnings.push(
    ...(await inSlices(removed('rules'), (s) => tried(deps, `delete rule ${s.id}`, () => deps.ruleset.deleteRule(target, s.id)))),
  )
  for (const s of removed('integrations')) {
    await attempt(deps, warnings, `delete integration ${s.id}`, () => deps.ruleset.deleteIntegration(target, s.id))
  }
  for (const s of applied('integrations')) {
    await attempt(deps, warnings, `upsert integration ${s.id}`, () =>
      deps.ruleset.upsertIntegration(target, documentOf(s.body), s.previous !== undefined),
    )
  }
  const parentOf = parentsOf(plan.after.integrations)
  // Written together (2,400 rules one by one waited for as many commits); one refused is one warning.
  const rules = applied('rules')
  let failures: Array<Error | undefined>
  try {
    failures = await deps.ruleset.upsertRules(
      target,
      rules.map((s) => ({ rule: documentOf(s.body), integrationId: parentOf(s.id), existed: s.previous !== undefined })),
    )
  } catch (e) {
    failures = rules.map(() => (e instanceof Error ? e : new Error(String(e))))
  }
  for (const [i, s] of rules.entries()) {
    const failure = failures[i]
    if (failure !== undefined) warnings.push(warned(deps, `upsert rule ${s.id}`, failure))
  }
  return warnings
}

/**
 * After a rollback, puts Ruleset Management back to the pre-promotion target in the spec's order:
 * revert applied rules (adds deleted, updates restored), revert applied integrations, restore
 * deleted integrations, restore deleted rules. Every call re-asserts a pre-promotion state, so it is
 * harmless for a copy Ruleset Management never received.
 */
export async function reconcileRuleset(deps: Deps, plan: Plan, applied: Applied[]): Promise<string[]> {
  const warnings: string[] = []
  const { target } = plan
  const parentOf = parentsOf(plan.before.integrations.map((i) => i.document))
  const revert = async (s: Step) => {
    if (s.list === 'rules') {
      if (s.previous === undefined) await attempt(deps, warnings, `delete rule ${s.id}`, () => deps.ruleset.deleteRule(target, s.id))
      else {
        await attempt(deps, warnings, `restore rule ${s.id}`, () =>
          deps.ruleset.upsertRule(target, documentOf(s.previous), parentOf(s.id), true),
        )
      }
    } else if (s.previous === undefined) {
      await attempt(deps, warnings, `delete integration ${s.id}`, () => deps.ruleset.deleteIntegration(target, s.id))
    } else {
      await attempt(deps, warnings, `restore integration ${s.id}`, () =>
        deps.ruleset.upsertIntegration(target, documentOf(s.previous), true),
      )
    }
  }
  const forward = applied.filter((s) => s.operation !== 'remove')
  const removals = applied.filter((s) => s.operation === 'remove')
  for (const s of forward.filter((s) => s.list === 'rules')) await revert(s)
  for (const s of forward.filter((s) => s.list === 'integrations')) await revert(s)
  for (const s of removals.filter((s) => s.list === 'integrations')) {
    await attempt(deps, warnings, `re-create integration ${s.id}`, () =>
      deps.ruleset.upsertIntegration(target, documentOf(s.previous), false),
    )
  }
  for (const s of removals.filter((s) => s.list === 'rules')) {
    await attempt(deps, warnings, `re-create rule ${s.id}`, () =>
      deps.ruleset.upsertRule(target, documentOf(s.previous), parentOf(s.id), false),
    )
  }
  return warnings
}

import { Cron } from 'croner'
import type { Logger } from '../http/log'
import { LifecycleUnavailable } from '../store/errors'
import { wildcardToRegExp } from '../store/names'
import type { IsmPolicy, IsmTemplate, Store } from '../store/port'
import { parseTimeValue } from '../store/settings'
import { ismPolicyBody, LIFECYCLE_POLICIES } from './indices'

/**
 * Retention where no ISM runs (embedded mode, or a platform without the
 * index-management plugin, which runs the shipped policies): a scheduled job reads the
 * lifecycle policies from the store (the ones the bootstrap writes, or an
 * operator's edit of them through `PUT _plugins/_ism/policies/<id>`) and
 * applies each policy's delete age to the data streams its `ism_template`
 * patterns match (the highest priority wins, as in ISM).
 *
 * How this differs from ISM, on purpose:
 * - ISM deletes a whole backing index once the index (not its documents) is
 *   older than the `min_index_age` of the transition into the deleting state,
 *   and a backing index only stops growing after a rollover, which a
 *   low-volume stream practically never reaches (reference 1.5: it keeps its
 *   data indefinitely). The embedded store has one backing index per stream
 *   and no rollover, so the age applies to each document: one whose
 *   `@timestamp` is older than the delete age is deleted. That is the promise
 *   an operator reads in the policy ("raw events are kept 10 minutes"),
 *   kept for every document instead of for none of a quiet stream's; the
 *   sessions policy's daily rollover is therefore not needed either (a
 *   session lives 7 days from its creation, `@timestamp` being `created_at`).
 * - ISM runs an edited policy on indices it already manages only after a
 *   change-policy call; here there is no per-index managed state, so the
 *   policy the API shows now is the one applied at the next run (until the
 *   next boot rewrites the shipped policies, as on the platform).
 * - ISM ignores templates updated after an index was created; every boot
 *   rewrites the templates here while the backing indices stay, so that rule
 *   would switch retention off after the second start. It is not applied.
 * Transitions on document count or size, and actions other than `delete`,
 * have no meaning for documents and are not run.
 */

export interface RetentionDeps {
  store: Store
  now: () => number
  log: Logger
  /**
   * The store is a platform (platform mode): its ISM applies the policies, so a run does nothing,
   * unless the platform has no ISM (LifecycleUnavailable): the run then applies the shipped
   * policies (reference 1.5) itself, as in embedded mode.
   */
  platform?: boolean
  /**
   * Per concrete index, the highest `_seq_no` that may go at `now`: documents a reader has yet
   * to see (a detector's backlog) are kept past their age until it has (`ruleset` says which).
   */
  holds?: (now: number) => Promise<Map<string, number>>
}

export interface RetentionOutcome {
  stream: string
  policy: string
  deleted: number
  /** Expired documents kept because a reader has not seen them yet. */
  held: number
}

/** What the job takes from one policy: which streams, and after how long their documents go. */
export interface RetentionRule {
  policy: string
  templates: Array<{ patterns: RegExp[]; priority: number }>
  deleteAfterMillis: number
}

const PAGE = 1000
/** `index.max_result_window`'s default: held documents are skipped with `from`, which it bounds. */
const MAX_WINDOW = 10_000
const POLICY_PAGE = 100

const hasDelete = (actions: Array<Record<string, unknown>> | undefined) => (actions ?? []).some((a) => 'delete' in a)

/**
 * The age after which a policy deletes: the smallest `min_index_age` of a
 * transition into a state with a `delete` action (0 when such a transition
 * has no condition, or when the default state deletes). Undefined when the
 * policy never deletes by age.
 */
export function deleteAge(policy: IsmPolicy): number | undefined {
  const deleting = new Set(policy.states.filter((s) => hasDelete(s.actions)).map((s) => s.name))
  if (deleting.size === 0) return undefined
  if (deleting.has(policy.default_state)) return 0
  let age: number | undefined
  for (const state of policy.states) {
    for (const t of state.transitions ?? []) {
      if (!deleting.has(t.state_name)) continue
      const conditions = t.conditions ?? {}
      const value =
        Object.keys(conditions).length === 0
          ? 0
          : typeof conditions.min_index_age === 'string'
            ? safeAge(conditions.min_index_age)
            : undefined
      if (value !== undefined) age = age === undefined ? value : Math.min(age, value)
    }
  }
  return age
}

function safeAge(v: string): number | undefined {
  try {
    return parseTimeValue(v, 'min_index_age')
  } catch {
    return undefined
  }
}

const templatesOf = (t: IsmPolicy['ism_template']): IsmTemplate[] => (t == null ? [] : Array.isArray(t) ? t : [t])

export function retentionRule(id: string, policy: IsmPolicy): RetentionRule | undefined {
  const deleteAfterMillis = deleteAge(policy)
  const templates = templatesOf(policy.ism_template).map((t) => ({
    patterns: [t.index_patterns].flat().map((p) => wildcardToRegExp(p)),
    priority: t.priority ?? 0,
  }))
  if (deleteAfterMillis === undefined || templates.length === 0) return undefined
  return { policy: id, templates, deleteAfterMillis }
}

/** The shipped policies (reference 1.5) as rules: what a platform without ISM is governed by. */
export function shippedRules(now: number): RetentionRule[] {
  return LIFECYCLE_POLICIES.flatMap((p) => retentionRule(p.id, ismPolicyBody(p, now).policy as IsmPolicy) ?? [])
}

/**
 * The rules of this run: the store's policies; on a platform, none while its ISM runs them, the
 * shipped ones when it has no ISM.
 */
async function readRules(deps: RetentionDeps): Promise<RetentionRule[]> {
  try {
    const rules = await readStoredRules(deps.store)
    return deps.platform ? [] : rules
  } catch (e) {
    if (!deps.platform || !(e instanceof LifecycleUnavailable)) throw e
    if (!warned.has(deps.store)) {
      warned.add(deps.store)
      deps.log.warn('the platform has no Index State Management: svc-ext deletes expired documents itself', { reason: e.reason })
    }
    return shippedRules(deps.now())
  }
}
const warned = new WeakSet<Store>()

async function readStoredRules(store: Store): Promise<RetentionRule[]> {
  const rules: RetentionRule[] = []
  for (let from = 0; ; from += POLICY_PAGE) {
    const page = await store.getLifecyclePolicies({ from, size: POLICY_PAGE })
    for (const p of page.policies) {
      const rule = retentionRule(p._id, p.policy)
      if (rule) rules.push(rule)
    }
    if (page.policies.length < POLICY_PAGE || from + POLICY_PAGE >= page.total_policies) return rules
  }
}

/**
 * The rule governing a stream: ISM matches a backing index by its data
 * stream's name; the `.ds-` names match too, as the shipped templates list
 * both. Highest priority wins; on a tie the first policy by id.
 */
export function ruleFor(names: string[], rules: RetentionRule[]): RetentionRule | undefined {
  let best: { rule: RetentionRule; priority: number } | undefined
  for (const rule of rules) {
    for (const t of rule.templates) {
      if (!t.patterns.some((re) => names.some((n) => re.test(n)))) continue
      if (!best || t.priority > best.priority) best = { rule, priority: t.priority }
    }
  }
  return best?.rule
}

/** One pass over every existing data stream that a stored policy governs. */
export async function applyRetention(deps: RetentionDeps): Promise<RetentionOutcome[]> {
  const rules = await readRules(deps)
  if (rules.length === 0) return []
  const holds = (await deps.holds?.(deps.now())) ?? new Map<string, number>()
  const { data_streams } = await deps.store.getDataStream()
  const out: RetentionOutcome[] = []
  for (const ds of data_streams) {
    const rule = ruleFor([ds.name, ...ds.indices.map((i) => i.index_name)], rules)
    if (!rule) continue
    const cutoff = new Date(deps.now() - rule.deleteAfterMillis).toISOString()
    let deleted = 0
    // Documents left in place (held, or refused by the delete) stay in the results; hits come in
    // a stable order (score, then document order), left ones first, so `from` steps over them.
    let held = 0
    let left = 0
    while (left + PAGE <= MAX_WINDOW) {
      const page = await deps.store.search({
        index: ds.name,
        body: { query: { range: { '@timestamp': { lt: cutoff } } }, from: left, size: PAGE, _source: false, seq_no_primary_term: true },
      })
      const hits = page.hits.hits
      if (hits.length === 0) break
      const expired = hits.filter((h) => h._seq_no === undefined || h._seq_no <= (holds.get(h._index) ?? Infinity))
      held += hits.length - expired.length
      let gone = 0
      if (expired.length > 0) {
        const r = await deps.store.bulk({ body: expired.map((h) => ({ delete: { _index: h._index, _id: h._id } })), refresh: true })
        gone = r.items.filter((i) => (i.delete?.status ?? 500) < 300 || i.delete?.status === 404).length
      }
      deleted += gone
      left += hits.length - gone
      if (hits.length < PAGE) break
    }
    if (deleted > 0)
      deps.log.info('retention deleted expired documents', { stream: ds.name, policy: rule.policy, deleted, older_than: cutoff })
    if (held > 0)
      deps.log.info('retention kept expired documents a detector has yet to read', { stream: ds.name, policy: rule.policy, held })
    out.push({ stream: ds.name, policy: rule.policy, deleted, held })
  }
  return out
}

/** Schedules `applyRetention` (every 5 minutes by default); overlapping runs are skipped. */
export function startRetentionJob(deps: RetentionDeps, pattern = '0 */5 * * * *'): { stop(): void } {
  const job = new Cron(pattern, { protect: true, catch: (e) => deps.log.error('retention run failed', { error: e }) }, async () => {
    await applyRetention(deps)
  })
  return { stop: () => job.stop() }
}

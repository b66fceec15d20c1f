// Step 3 of a promotion: one bulk request per list, adds/updates first, then removals, each item
// that the store acknowledged recorded as a rollback step. The store is the caller's: the
// reference runs a content request with the caller's identity unless it says the context is
// stashed, and for content it says so only of lock I/O (reference 7.1). When a bulk request fails as a whole we
// cannot know which items it applied, so all of them are recorded: every undo sets a document back
// to its pre-promotion state, which is harmless for an item that was never applied.
import { securityRefusal, type SecurityRefusal } from '../../security/platform/caller-store'
import type { BulkItemResult, BulkLine, Store } from '../../store/port'
import type { ContentRepository } from '../repository'
import { ALIAS, CHANGE_LISTS, RESOURCE_LISTS } from './changes'
import type { Plan, Step } from './plan'

/** A step as it was applied: where it went, so its undo needs no alias resolution. */
export interface Applied extends Step {
  index: string
}

export class ConsolidationFailed extends Error {
  override name = 'ConsolidationFailed'
  constructor(
    message: string,
    /** The steps whose mutation failed (or may have failed). */
    readonly failed: Step[],
    /** Set when the store refused the caller's write (the platform's word on its rights). */
    readonly refusal?: SecurityRefusal,
  ) {
    super(message)
  }
}

/**
 * Applies the plan and returns the applied steps in order. On the first failed mutation it throws
 * ConsolidationFailed after recording what was applied in `applied` (shared with the caller, so the
 * rollback sees everything up to the failure).
 */
export async function consolidate(store: Store, repo: ContentRepository, plan: Plan, applied: Applied[]): Promise<void> {
  const batches: Step[][] = [
    ...CHANGE_LISTS.map((list) => plan.applies.filter((s) => s.list === list)),
    ...RESOURCE_LISTS.map((list) => plan.removals.filter((s) => s.list === list)),
  ]
  for (const steps of batches) {
    if (steps.length === 0) continue
    const index = await repo.concrete(ALIAS[steps[0].list])
    const body: BulkLine[] = []
    for (const step of steps) {
      if (step.operation === 'remove') body.push({ delete: { _index: index, _id: step.targetId } })
      else body.push({ index: { _index: index, _id: step.targetId } }, step.body!)
    }
    let items: BulkItemResult[]
    try {
      const r = await store.bulk({ body, refresh: true })
      items = r.items.map((item) => Object.values(item)[0]!)
    } catch (e) {
      applied.push(...steps.map((s) => ({ ...s, index })))
      throw new ConsolidationFailed(`bulk write to [${index}] failed: ${reason(e)}`, steps, securityRefusal(e))
    }
    const failed: Step[] = []
    const reasons: string[] = []
    let refusal: SecurityRefusal | undefined
    steps.forEach((step, i) => {
      const item = items[i]
      // A removal that finds nothing left has reached its goal; the snapshot still restores it.
      const ok = item !== undefined && (item.status < 300 || (step.operation === 'remove' && item.status === 404))
      if (ok) applied.push({ ...step, index })
      else {
        failed.push(step)
        refusal ??= securityRefusal(item?.error && { ...item.error, status: item.status })
        reasons.push(`${step.operation} of '${step.id}': ${item?.error?.reason ?? `status ${item?.status ?? 'missing'}`}`)
      }
    })
    if (failed.length > 0) throw new ConsolidationFailed(`bulk write to [${index}] failed (${reasons.join('; ')})`, failed, refusal)
  }
}

export const reason = (e: unknown) => (e instanceof Error ? e.message : String(e))

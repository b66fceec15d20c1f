// Promotion of a space into the next one (spec "Promotion"; reference 4.6, 4.7): the preview, and
// the four steps (snapshots, Engine validation, consolidation, Ruleset Management) with the
// rollback of step 3, all under one lease per target space. Step 3 writes with the caller's
// rights; the lease, the undo of step 3 and the target hash are the service's (a rollback must
// restore what the caller's writes changed even where the caller may not write).
import { ApiError } from '../../http/errors'
import { INDEX_ACTIONS } from '../../security/actions'
import type { Caller } from '../../http/caller'
import type { Store } from '../../store/port'
import { afterChange, contentCallerStore, type ContentContext } from '../context'
import { EngineError, EngineRefused } from '../engine'
import { buildFullPolicy } from '../policy/engine-load'
import { NEXT_SPACE, sourceSpace } from './chain'
import { ALIAS, CHANGE_LISTS, type Changes, type PreviewResponse } from './changes'
import { consolidate, ConsolidationFailed, reason, type Applied } from './consolidate'
import { promotionWait, withPromotionLease } from './lease'
import { engineFullPolicy, planPromotion, type Plan } from './plan'
import { previewPromotion } from './preview'
import type { PromoteRequest } from './request'
import { reconcileRuleset, syncRuleset } from './ruleset'
import { undoSteps } from './rollback'

export const PROMOTION_COMPLETED = 'Promotion completed successfully.'

export class PromotionService {
  constructor(private readonly ctx: ContentContext) {}

  async preview(space: unknown): Promise<PreviewResponse> {
    return { changes: await previewPromotion(this.ctx.repo, sourceSpace(space)) }
  }

  async promote(request: PromoteRequest, caller: Caller): Promise<string> {
    const { ctx } = this
    const target = NEXT_SPACE[request.space]
    const writes = await this.callerWrites(caller, request.changes)
    return withPromotionLease(ctx, promotionWait(await ctx.settings.snapshot()), target, async (assertMine) => {
      const plan = await planPromotion(ctx.repo, request)
      if (plan.needsEngine) await this.validate(plan)
      // The lease is renewed on a timer; a long synchronous stretch could still starve it, so check before writing.
      await assertMine()

      const applied: Applied[] = []
      try {
        await consolidate(writes, ctx.repo, plan, applied)
      } catch (e) {
        throw await this.rollback(plan, applied, e)
      }

      const warnings = await syncRuleset(ctx, plan)
      await afterChange(ctx, [target])
      // Post-promotion broadcast: the node's loader brings the Engine's session of the space up to date.
      ctx.engineLoads.trigger(target)
      ctx.journal.record(
        'promotion.completed',
        target,
        { source: plan.source, ...counts(plan), rulesetWarnings: warnings.length },
        ctx.now(),
      )
      return PROMOTION_COMPLETED
    })
  }

  /** The store for step 3: the caller's own rights on the content indices cover the writes made on its behalf. */
  private async callerWrites(caller: Caller, changes: Changes): Promise<Store> {
    const written = new Set<string>()
    const deleted = new Set<string>()
    for (const list of CHANGE_LISTS) for (const c of changes[list]) (c.operation === 'remove' ? deleted : written).add(ALIAS[list])
    const rights: Record<string, string[]> = {}
    if (written.size > 0) rights[INDEX_ACTIONS.index] = [...written]
    if (deleted.size > 0) rights[INDEX_ACTIONS.delete] = [...deleted]
    return contentCallerStore(this.ctx, caller, rights)
  }

  /** Step 2: anything but an Engine 200/202 stops the promotion before a single write. */
  private async validate(plan: Plan): Promise<void> {
    try {
      await this.ctx.engine.validatePolicy(plan.target, engineFullPolicy(plan))
    } catch (e) {
      if (e instanceof EngineRefused) throw new ApiError(e.status >= 400 ? e.status : 502, e.reason)
      if (e instanceof EngineError) throw new ApiError(e.status, e.message)
      throw e
    }
  }

  /** Undo of step 3, then the best-effort repairs; returns the 500 the request answers. */
  private async rollback(plan: Plan, applied: Applied[], cause: unknown): Promise<ApiError> {
    const { ctx } = this
    const { target } = plan
    ctx.log.error('Promotion failed; rolling back', { source: plan.source, space: target, applied: applied.length, error: reason(cause) })
    const failures = await undoSteps(ctx, target, applied)
    const warnings = await reconcileRuleset(ctx, plan, applied)
    // Restored documents carry their old aggregate hash; only a partial restore needs a new one.
    if (failures.length > 0) await afterChange(ctx, [target])
    if (plan.needsEngine) await this.reloadEngine(target)
    ctx.journal.record(
      'promotion.rolled_back',
      target,
      {
        source: plan.source,
        error: reason(cause),
        undone: applied.length - failures.length,
        undoFailures: failures.length,
        rulesetWarnings: warnings.length,
      },
      ctx.now(),
    )
    const partial = failures.length > 0 ? ` ${failures.length} rollback step(s) failed; see the node log.` : ''
    // Refused by the platform (embedded mode refuses before step 2): its status and message, as a
    // refusal by our model would have been answered.
    if (cause instanceof ConsolidationFailed && cause.refusal) return new ApiError(cause.refusal.status, cause.refusal.message + partial)
    return new ApiError(
      500,
      `Internal Server Error. Promotion of space [${plan.source}] into [${target}] failed and was rolled back: ${reason(cause)}.${partial}`,
    )
  }

  /** Validation loaded the promoted content into the Engine's session of the space: load what is stored again. */
  private async reloadEngine(target: Plan['target']): Promise<void> {
    try {
      const built = await buildFullPolicy(this.ctx.repo, target)
      if (built) await this.ctx.engine.validatePolicy(target, built.fullPolicy)
    } catch (e) {
      this.ctx.log.warn('Engine session could not be restored after a promotion rollback', { space: target, error: reason(e) })
    }
  }
}

function counts(plan: Plan) {
  const of = (op: string) => [...plan.applies, ...plan.removals].filter((s) => s.operation === op).length
  return { added: of('add'), updated: of('update'), removed: of('remove') }
}

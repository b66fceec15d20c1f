// Undo of step 3, last in first out (spec "Promotion", rollback table): an add is deleted, an
// update gets its previous version back, a removal is re-indexed from its snapshot. A failing undo
// is logged and skipped so one bad document cannot keep the others from being restored.
import type { Logger } from '../../http/log'
import type { Journal } from '../../journal/journal'
import type { Store } from '../../store/port'
import { reason, type Applied } from './consolidate'

export interface UndoFailure {
  list: string
  id: string
  targetId: string
  error: string
}

export async function undoSteps(
  deps: { store: Store; log: Logger; journal: Journal },
  target: string,
  applied: Applied[],
): Promise<UndoFailure[]> {
  const failures: UndoFailure[] = []
  for (const step of [...applied].reverse()) {
    try {
      if (step.previous === undefined) await deps.store.delete({ index: step.index, id: step.targetId, refresh: true })
      else await deps.store.index({ index: step.index, id: step.targetId, body: step.previous, refresh: true })
    } catch (e) {
      const failure = { list: step.list, id: step.id, targetId: step.targetId, error: reason(e) }
      failures.push(failure)
      deps.log.error('Promotion rollback step failed; skipped', { space: target, operation: step.operation, ...failure })
      deps.journal.record('promotion.rollback_step_failed', target, { operation: step.operation, ...failure })
    }
  }
  return failures
}

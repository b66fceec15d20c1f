/**
 * What retention must keep for detection. The embedded retention job ages stream documents by
 * their `@timestamp`, so an event shipped late (an agent back from a day offline, a backfill)
 * is already past its stream's delete age when it arrives; deleting it before a detector has
 * read it would be a detection silently missed. A hold says, per concrete index, up to which
 * `_seq_no` every live detector reading that index has evaluated: retention deletes nothing
 * above it.
 *
 * Only live detectors hold: enabled ones whose last run started less than two intervals (plus
 * the run lease's staleness) ago. A detector whose node is gone, or whose runs keep failing,
 * stops holding after that, so it cannot keep a stream growing without bound.
 */
import type { Store } from '../../store/port'
import type { Detectors } from '../detectors'
import { concreteIndices, loadCheckpoints } from './checkpoint'
import { intervalMillis } from './scheduler'

/** How long past its due time a run may go unseen before its detector stops holding. */
const GRACE_MILLIS = 15 * 60_000

export interface HoldDeps {
  store: Store
  detectors: Pick<Detectors, 'enabled'>
}

/** Concrete index -> the highest `_seq_no` retention may delete (what every live detector has read). */
export async function detectionHolds(deps: HoldDeps, now: number): Promise<Map<string, number>> {
  const holds = new Map<string, number>()
  const enabled = await deps.detectors.enabled()
  const checkpoints = await loadCheckpoints(
    deps.store,
    enabled.map((d) => d.id),
  )
  for (const { id, detector } of enabled) {
    const cp = checkpoints.get(id)
    // Without a checkpoint of this enabling, the next run baselines at the ends: it reads nothing there is now.
    if (!cp || cp.epoch !== detector.enabled_time) continue
    if (now - cp.last_run_at > 2 * intervalMillis(detector.schedule) + GRACE_MILLIS) continue
    for (const index of await concreteIndices(
      deps.store,
      detector.inputs.flatMap((i) => i.detector_input.indices),
    )) {
      // An index the checkpoint has not met yet (a new backing index) is read from its first document.
      const read = cp.indices[index] ?? -1
      holds.set(index, Math.min(holds.get(index) ?? Infinity, read))
    }
  }
  return holds
}

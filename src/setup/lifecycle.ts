import { PolicyNotFound, VersionConflict } from '../store/errors'
import type { Store } from '../store/port'
import { ismPolicyBody, type LifecyclePolicy } from './indices'

/** Reads before a write that lose to a concurrent writer are retried this often before the task fails. */
const CONFLICT_ATTEMPTS = 3

/**
 * Reference 1.5: a shipped policy is rewritten on every boot, so an operator's edit lasts until
 * the next start, with the boot time as `last_updated_time` in every `ism_template` (ISM
 * manages only indices created after it). The reference writes the ISM config index directly
 * and then registers each backing index itself; writing through the ISM API instead (the
 * platform's, or the embedded store's copy of it) lets ISM pick the `ism_template` up, so new
 * backing indices are managed without that step. ISM creates only, unless the write names the
 * current `_seq_no`/`_primary_term`: read them first, read again if someone wrote in between.
 */
export async function writeLifecyclePolicy(store: Store, policy: LifecyclePolicy, now: number): Promise<void> {
  const body = ismPolicyBody(policy, now)
  for (let attempt = 1; ; attempt++) {
    const current = await store.getLifecyclePolicy({ id: policy.id }).catch((e) => {
      if (e instanceof PolicyNotFound) return undefined
      throw e
    })
    try {
      await store.putLifecyclePolicy({
        id: policy.id,
        body,
        ...(current ? { if_seq_no: current._seq_no, if_primary_term: current._primary_term } : {}),
      })
      return
    } catch (e) {
      if (!(e instanceof VersionConflict) || attempt >= CONFLICT_ATTEMPTS) throw e
    }
  }
}

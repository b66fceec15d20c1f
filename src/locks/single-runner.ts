// "One runner at a time": a content sync, a detector's run, the Setup bootstrap. A node takes the
// runner's lease in one attempt or learns that another runner holds it (and does something else:
// reports `locked`, skips the run, waits for the outcome); the lease is renewed while it runs, so
// only a dead runner's lease goes stale and is taken over.
import { ActiveLease, tryAcquireLease, type Lease, type LeaseDeps, type LeaseSpec } from './lease'

export interface Turn {
  /** The lease was taken over from a runner that stopped renewing it. */
  readonly stolen: boolean
  /** Runs `fn` under the lease, renewed while it runs, and releases it whatever happens. */
  run<T>(fn: (lease: Lease) => Promise<T>): Promise<T>
}

export interface RunnerDeps extends LeaseDeps {
  /** Where a failed release goes (a leaked lease goes stale and is taken over); absent: `run` throws it. */
  onReleaseError?: (e: unknown) => void
}

/** One attempt at the runner's lease: this node's turn, or undefined while another runner holds it. */
export async function claimTurn(deps: RunnerDeps, spec: LeaseSpec): Promise<Turn | undefined> {
  const held = await tryAcquireLease(deps, spec)
  if (!held) return undefined
  return {
    stolen: held.stolen,
    async run(fn) {
      const lease = new ActiveLease(deps, held, true)
      try {
        return await fn(lease)
      } finally {
        const released = lease.release()
        await (deps.onReleaseError ? released.catch(deps.onReleaseError) : released)
      }
    },
  }
}

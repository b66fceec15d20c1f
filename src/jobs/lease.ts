// Job and detector leases are the one lease helper of src/locks; this module keeps their import path.
export {
  acquireLease,
  ActiveLease,
  LeaseLost,
  releaseLease,
  renewLease,
  tryAcquireLease,
  withLease,
  type HeldLease,
  type LeaseDeps,
  type LeaseEvent,
  type LeaseSpec,
} from '../locks/lease'

import type { Journal } from '../journal/journal'
import type { LeaseEvent } from './lease'

/** Journals what happened to a lock under `subject` (lock audit, reference 7.1). */
export const journalLeaseEvents = (journal: Journal, subject: string) => (e: LeaseEvent) => {
  // Polls (`busy`) and renewals are too frequent to journal; a wait is recorded once per acquisition.
  if (e.kind !== 'busy' && e.kind !== 'renew')
    journal.record(`lock.${e.kind}`, subject, { index: e.index, id: e.id, ageMillis: e.ageMillis }, e.at)
}

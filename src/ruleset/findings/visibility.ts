import type { SettingsSnapshot } from '../../config/cluster-settings'
import type { Caller } from '../../http/caller'
import type { Query, Store } from '../../store/port'
import { IndexNotFound } from '../../store/errors'
import { backendRoleClause, filteredCaller } from '../access'
import { DETECTORS_INDEX } from '../indices'

const MATCH_NONE: Query = { match_none: {} }
/** More detectors than any deployment has (`max_detectors` plus one per integration). */
const DETECTOR_SCAN = 10_000

/**
 * The filter `filter_by_backend_roles` puts on reads of findings (reference
 * 6.3): a finding is visible when its detector's stored backend roles share
 * one with the caller's. Undefined means "no filter": the setting is off or
 * the caller holds `all_access`. Evaluated per request, so a change of a
 * detector's owner or of the setting shows on the next read.
 */
export async function findingsFilter(store: Store, settings: SettingsSnapshot, caller: Caller): Promise<Query | undefined> {
  const filtered = filteredCaller(settings, caller)
  if (!filtered) return undefined
  if (filtered.backendRoles.length === 0) return MATCH_NONE
  let ids: string[]
  try {
    const found = await store.search({
      index: DETECTORS_INDEX,
      ignore_unavailable: true,
      allow_no_indices: true,
      expand_wildcards: 'all',
      body: { size: DETECTOR_SCAN, _source: false, query: backendRoleClause(filtered, 'detector.user.backend_roles') },
    })
    ids = found.hits.hits.map((h) => h._id)
  } catch (e) {
    if (e instanceof IndexNotFound) return MATCH_NONE
    throw e
  }
  return ids.length === 0 ? MATCH_NONE : { terms: { 'svc.detector.id': ids } }
}

/** Backing indices of the findings streams (`.ds-svc-findings-v5-<category>-NNNNNN`). */
const FINDINGS_BACKING = /^\.ds-svc-findings-v5-/

/**
 * The same visibility for the index API (`GET svc-findings-v5-*\/_search`,
 * `_count`, `_doc`): applied to the findings backing indices among the
 * concrete indices of a read, leaving the others alone. Undefined when the
 * read touches no findings or nothing is filtered.
 */
export function findingsReadFilter(deps: { store: Store; settings: { snapshot(): Promise<SettingsSnapshot> } }) {
  return async (caller: Caller, indices: string[]): Promise<Query | undefined> => {
    const findings = indices.filter((i) => FINDINGS_BACKING.test(i))
    if (findings.length === 0) return undefined
    const filter = await findingsFilter(deps.store, await deps.settings.snapshot(), caller)
    if (filter === undefined || findings.length === indices.length) return filter
    const inFindings = { bool: { should: findings.map((index) => ({ term: { _index: index } })), minimum_should_match: 1 } }
    return {
      bool: {
        should: [{ bool: { filter: [inFindings, filter] } }, { bool: { must_not: [inFindings] } }],
        minimum_should_match: 1,
      },
    }
  }
}

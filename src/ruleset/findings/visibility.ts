import type { SettingsSnapshot } from "../../config/cluster-settings";
import type { Caller } from "../../security/caller";
import type { Query, Store } from "../../store/port";
import { IndexNotFound } from "../../store/errors";

/** Where detectors are stored, each as `{detector: {..., user: {name, backend_roles}}}` (reference 5.2). */
export const DETECTORS_INDEX = ".platform-sap-detectors-config";

export const FILTER_BY_BACKEND_ROLES = "plugins.security_analytics.filter_by_backend_roles";

const MATCH_NONE: Query = { match_none: {} };
/** More detectors than any deployment has (`max_detectors` is 10 plus one per integration). */
const DETECTOR_SCAN = 10_000;

/**
 * The filter `filter_by_backend_roles` puts on reads of findings (reference
 * 6.3): a finding is visible when its detector's stored backend roles share
 * one with the caller's. Undefined means "no filter": the setting is off or
 * the caller holds `all_access`. Evaluated per request, so changing a
 * detector's roles or the setting takes effect on the next read.
 */
export async function findingsFilter(store: Store, settings: SettingsSnapshot, caller: Caller): Promise<Query | undefined> {
  if (!settings.bool(FILTER_BY_BACKEND_ROLES) || caller.roles.includes("all_access")) return undefined;
  if (caller.backendRoles.length === 0) return MATCH_NONE;
  let ids: string[];
  try {
    const found = await store.search({
      index: DETECTORS_INDEX,
      ignore_unavailable: true,
      allow_no_indices: true,
      expand_wildcards: "all",
      body: { size: DETECTOR_SCAN, _source: false, query: { terms: { "detector.user.backend_roles": caller.backendRoles } } },
    });
    ids = found.hits.hits.map((h) => h._id);
  } catch (e) {
    if (e instanceof IndexNotFound) return MATCH_NONE;
    throw e;
  }
  return ids.length === 0 ? MATCH_NONE : { terms: { "svc.detector.id": ids } };
}

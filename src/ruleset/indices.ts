/**
 * Ruleset Management's system indices (reference 5.2, platform form). They are created on first
 * use rather than at start-up so that a node without Ruleset Management traffic writes nothing.
 * Mappings are `dynamic: false`: everything stays in `_source`, only what searches filter on is
 * indexed, so a large compiled query or an odd CTI field can never blow up the mapping.
 */
import { AlreadyExists } from '../store/errors'
import type { Mappings, Store } from '../store/port'

export const DETECTORS_INDEX = '.platform-sap-detectors-config'
export const PREPACKAGED_RULES_INDEX = '.platform-sap-pre-packaged-rules-config'
export const CUSTOM_RULES_INDEX = '.platform-sap-custom-rules-config'
export const LOG_TYPES_INDEX = '.platform-sap-log-types-config'
/** Per-detector run state (checkpoints, last run); shared by every node through the Store. */
export const DETECTOR_STATE_INDEX = '.platform-sap-detectors-state'
/** Lease documents (`{acquired_at}`): one per detector run, one for the user-detector count. */
export const DETECTOR_LOCKS_INDEX = '.platform-sap-detectors-locks'
/** Sigma correlation windows, one document per (detector, correlation rule, group). */
export const CORRELATION_STATE_INDEX = '.platform-sap-correlation-state'
/** Threat-intel sources of users (`IOC_UPLOAD`), one document `{source_config}` each. */
export const TI_SOURCES_INDEX = '.platform-sap-threat-intel-sources'
/** The IoCs of those sources, one document per (source, IoC), in the CTI IoCs' `document` shape. */
export const TI_UPLOADED_IOCS_INDEX = '.platform-sap-threat-intel-iocs'
/** Retro-hunt jobs (threat-intel/retro-hunt.ts), one document each while it waits or runs. */
export const TI_RETRO_HUNT_INDEX = '.platform-sap-threat-intel-retro-hunt'
/** Threat-intel monitors (`{monitor}`), at most one. */
export const TI_MONITORS_INDEX = '.platform-sap-threat-intel-monitors'

const kw = { type: 'keyword' }
const date = { type: 'date', format: 'epoch_millis||strict_date_optional_time' }
const userMapping = { properties: { name: kw, backend_roles: kw, roles: kw } }

const RULE_MAPPING: Mappings = {
  dynamic: false,
  properties: {
    rule: {
      properties: {
        category: kw,
        title: { type: 'text', fields: { keyword: kw } },
        level: kw,
        status: kw,
        author: kw,
        sigma_id: kw,
        /** Sigma name (correlation and filter references) and document kind (rule, filter, correlation). */
        name: kw,
        kind: kw,
        space: kw,
        tags: { properties: { value: kw } },
        document: { properties: { id: kw } },
        user: userMapping,
        last_update_time: date,
      },
    },
  },
}

const MAPPINGS: Record<string, Mappings> = {
  [DETECTORS_INDEX]: {
    dynamic: false,
    properties: {
      detector: {
        properties: {
          name: { type: 'text', fields: { keyword: kw } },
          detector_type: kw,
          enabled: { type: 'boolean' },
          source: kw,
          user: userMapping,
          document: { properties: { id: kw } },
          inputs: {
            properties: {
              detector_input: {
                properties: { indices: kw, custom_rules: { properties: { id: kw } }, pre_packaged_rules: { properties: { id: kw } } },
              },
            },
          },
          last_update_time: date,
          enabled_time: date,
        },
      },
    },
  },
  [PREPACKAGED_RULES_INDEX]: RULE_MAPPING,
  [CUSTOM_RULES_INDEX]: RULE_MAPPING,
  [LOG_TYPES_INDEX]: {
    dynamic: false,
    properties: {
      name: kw,
      category: kw,
      space: kw,
      source: kw,
      document: { properties: { id: kw } },
    },
  },
  [DETECTOR_STATE_INDEX]: { dynamic: false, properties: { detector_id: kw, last_run_at: date } },
  [DETECTOR_LOCKS_INDEX]: { dynamic: 'strict', properties: { acquired_at: { type: 'long' } } },
  [CORRELATION_STATE_INDEX]: { dynamic: false, properties: { scope: kw, rule: kw, newest: { type: 'long' } } },
  [TI_SOURCES_INDEX]: {
    dynamic: false,
    properties: { source_config: { properties: { name: kw, type: kw, format: kw, state: kw, created_at: date, last_update_time: date } } },
  },
  [TI_UPLOADED_IOCS_INDEX]: {
    dynamic: false,
    properties: {
      feed_id: kw,
      ioc_key: kw,
      document: {
        properties: {
          id: kw,
          name: kw,
          type: kw,
          tags: kw,
          provider: kw,
          first_seen: date,
          last_seen: date,
          feed: { properties: { name: kw } },
        },
      },
    },
  },
  [TI_RETRO_HUNT_INDEX]: { dynamic: false, properties: { queued_at: { type: 'long' } } },
  [TI_MONITORS_INDEX]: {
    dynamic: false,
    properties: { monitor: { properties: { name: kw, monitor_type: kw, enabled: { type: 'boolean' } } } },
  },
}

const ensured = new WeakMap<Store, Set<string>>()

/** Creates the system index once per store (hidden, one shard); concurrent creators are fine. */
export async function ensureIndex(store: Store, index: keyof typeof MAPPINGS | string): Promise<void> {
  let done = ensured.get(store)
  if (!done) ensured.set(store, (done = new Set()))
  if (done.has(index)) return
  const exists = await store.existsIndex({ index, expand_wildcards: 'all' })
  // Rule indices written by an older version lack the fields added since (rule.name, rule.kind).
  if (exists && RULE_MAPPING === MAPPINGS[index]) await store.putMapping({ index, body: RULE_MAPPING })
  if (!exists) {
    try {
      await store.createIndex({
        index,
        body: { settings: { index: { hidden: true, number_of_shards: 1, auto_expand_replicas: '0-1' } }, mappings: MAPPINGS[index] },
      })
    } catch (e) {
      if (!(e instanceof AlreadyExists)) throw e
    }
  }
  done.add(index)
}

/** Forget what was ensured (an index deleted behind our back, e.g. by a test wiping the store). */
export function forgetEnsured(store: Store): void {
  ensured.delete(store)
}

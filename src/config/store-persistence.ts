import type { Store } from '../store/port'
import { AlreadyExists, IndexNotFound, VersionConflict } from '../store/errors'
import type { PersistedSettings, SettingsPersistence } from './cluster-settings'

/** Hidden index holding the dynamic settings, so every node of a cluster reads the same values. */
export const CLUSTER_SETTINGS_INDEX = '.svc-cluster-settings'
const DOC_ID = 'cluster'

const MAPPINGS = {
  dynamic: 'strict' as const,
  // Setting keys are dotted names; storing them unindexed keeps them from being read as object paths.
  properties: { persistent: { type: 'object' as const, enabled: false }, transient: { type: 'object' as const, enabled: false } },
}

const empty = (): PersistedSettings => ({ persistent: {}, transient: {} })

/**
 * Dynamic settings in the Store: one document, written with if_seq_no so two
 * nodes changing settings at the same time never lose each other's change.
 */
export function storeSettingsPersistence(store: Store, maxAttempts = 20): SettingsPersistence {
  async function read(): Promise<{ state: PersistedSettings; seqNo?: number; primaryTerm?: number }> {
    try {
      const doc = await store.get({ index: CLUSTER_SETTINGS_INDEX, id: DOC_ID })
      if (!doc.found) return { state: empty() }
      const src = doc._source as Partial<PersistedSettings>
      return {
        state: { persistent: src.persistent ?? {}, transient: src.transient ?? {} },
        seqNo: doc._seq_no,
        primaryTerm: doc._primary_term,
      }
    } catch (e) {
      if (e instanceof IndexNotFound) return { state: empty() }
      throw e
    }
  }

  async function ensureIndex() {
    try {
      await store.createIndex({
        index: CLUSTER_SETTINGS_INDEX,
        body: { settings: { 'index.hidden': true, 'index.auto_expand_replicas': '0-1' }, mappings: MAPPINGS },
      })
    } catch (e) {
      if (!(e instanceof AlreadyExists)) throw e
    }
  }

  return {
    async load() {
      return (await read()).state
    },
    async update(change) {
      await ensureIndex()
      for (let attempt = 1; ; attempt++) {
        const { state, seqNo, primaryTerm } = await read()
        const next = change(state)
        try {
          if (seqNo === undefined)
            await store.index({ index: CLUSTER_SETTINGS_INDEX, id: DOC_ID, body: next, op_type: 'create', refresh: true })
          else
            await store.index({
              index: CLUSTER_SETTINGS_INDEX,
              id: DOC_ID,
              body: next,
              if_seq_no: seqNo,
              if_primary_term: primaryTerm,
              refresh: true,
            })
          return next
        } catch (e) {
          if (!(e instanceof VersionConflict) || attempt >= maxAttempts) throw e
        }
      }
    },
  }
}

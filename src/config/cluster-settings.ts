import { flattenKeys } from '../store/flat-keys'
import { isOwnedKey, settingDef, SETTINGS, type SettingKey, type SettingKeyOf, type SettingValueOf } from './registry'
import { parseSettingValue, type SettingValue } from './values'
import type { NodeConfig } from './node-config'

/** Dynamic settings as stored: one map per scope, flat dotted keys. */
export interface PersistedSettings {
  persistent: Record<string, SettingValue>
  transient: Record<string, SettingValue>
}

/** Where dynamic settings live so that every node sees them (the Store in practice). */
export interface SettingsPersistence {
  load(): Promise<PersistedSettings>
  /** Applies a change atomically against concurrent writers and returns the new state. */
  update(change: (current: PersistedSettings) => PersistedSettings): Promise<PersistedSettings>
}

export class SettingsError extends Error {
  constructor(
    message: string,
    readonly type = 'illegal_argument_exception',
  ) {
    super(message)
  }
}

/**
 * Platform (non-svc) cluster settings that the embedded store accepts and
 * echoes back, so scripts written for OpenSearch (the rolling upgrade
 * procedure, the conformance tests) work against it. Other keys are refused
 * the way OpenSearch refuses an unknown setting.
 */
const PLATFORM_KEYS: Array<string | RegExp> = [
  'cluster.routing.allocation.enable',
  'cluster.routing.rebalance.enable',
  /^cluster\.routing\.allocation\.[a-z_.]+$/,
  'cluster.max_shards_per_node',
  'cluster.blocks.read_only',
  'cluster.blocks.read_only_allow_delete',
  'action.auto_create_index',
  'action.destructive_requires_name',
  /^indices\.recovery\.[a-z_.]+$/,
  /^indices\.breaker\.[a-z_.]+$/,
  /^search\.[a-z_.]+$/,
  /^logger\.[A-Za-z_.]+$/,
]

export function isKnownPlatformKey(key: string): boolean {
  return PLATFORM_KEYS.some((p) => (typeof p === 'string' ? p === key : p.test(key)))
}

export type Scope = 'persistent' | 'transient'

/** A frozen view of all effective settings, taken once per operation. */
export class SettingsSnapshot {
  constructor(readonly values: ReadonlyMap<string, SettingValue>) {}
  get<K extends SettingKey>(key: K): SettingValueOf<K> {
    const v = this.values.get(key)
    if (v === undefined) throw new Error(`unknown setting ${key}`)
    return v as SettingValueOf<K>
  }
  bool(key: SettingKeyOf<'boolean'>): boolean {
    return this.get(key)
  }
  num(key: SettingKeyOf<'integer' | 'long'>): number {
    return this.get(key)
  }
  str(key: SettingKeyOf<'string' | 'time'>): string {
    return this.get(key)
  }
}

/**
 * Effective settings: transient over persistent over the node file over defaults.
 * Dynamic values are read from the persistence layer and cached for at most
 * `cacheMillis` (the architecture allows 1 s), so a change made on another node
 * is seen on the next operation after that.
 */
export class ClusterSettings {
  private cached?: { at: number; snapshot: SettingsSnapshot; persisted: PersistedSettings }

  constructor(
    readonly node: NodeConfig,
    private readonly persistence: SettingsPersistence,
    private readonly now: () => number = Date.now,
    private readonly cacheMillis = 1000,
  ) {}

  async snapshot(): Promise<SettingsSnapshot> {
    return (await this.current()).snapshot
  }

  private async current() {
    const t = this.now()
    if (this.cached && t - this.cached.at < this.cacheMillis) return this.cached
    const persisted = await this.persistence.load()
    this.cached = { at: t, snapshot: this.compose(persisted), persisted }
    return this.cached
  }

  /**
   * The effective values as last read, without waiting: for checks that run synchronously (the
   * embedded store's search limits). A stale cache is refreshed in the background, so a change
   * is seen within about `cacheMillis`.
   */
  latest(): ReadonlyMap<string, SettingValue> {
    if (!this.cached || this.now() - this.cached.at >= this.cacheMillis) void this.current().catch(() => {})
    return this.cached?.snapshot.values ?? this.node.values
  }

  /** Node-file values only: for settings that need a restart. */
  nodeValue<K extends SettingKey>(key: K): SettingValueOf<K> {
    return this.node.values.get(key)
  }

  private compose(p: PersistedSettings): SettingsSnapshot {
    const values = new Map(this.node.values)
    for (const scope of [p.persistent, p.transient]) {
      for (const [k, v] of Object.entries(scope)) if (settingDef(k)?.dynamic) values.set(k, v)
    }
    return new SettingsSnapshot(values)
  }

  /**
   * PUT /_cluster/settings. Validates everything before writing anything:
   * unknown, non-dynamic, mistyped and out-of-range values are refused with a
   * message naming the setting. A null value resets the key; "prefix.*": null
   * resets every key under the prefix.
   */
  async update(body: { persistent?: Record<string, unknown>; transient?: Record<string, unknown> }): Promise<PersistedSettings> {
    const changes: Record<Scope, Record<string, SettingValue | null>> = { persistent: {}, transient: {} }
    for (const scope of ['persistent', 'transient'] as const) {
      const given = body[scope]
      if (given === undefined || given === null) continue
      if (typeof given !== 'object' || Array.isArray(given)) throw new SettingsError(`[${scope}] must be an object`, 'parsing_exception')
      for (const [key, raw] of Object.entries(flattenKeys(given as Record<string, unknown>))) {
        if (raw === null) {
          changes[scope][key] = null
          continue
        }
        changes[scope][key] = validateDynamic(scope, key, raw)
      }
    }
    const result = await this.persistence.update((cur) => {
      const next: PersistedSettings = { persistent: { ...cur.persistent }, transient: { ...cur.transient } }
      for (const scope of ['persistent', 'transient'] as const) {
        for (const [key, value] of Object.entries(changes[scope])) {
          if (value !== null) next[scope][key] = value
          else if (key.endsWith('*')) {
            const prefix = key.slice(0, -1)
            for (const k of Object.keys(next[scope])) if (k.startsWith(prefix)) delete next[scope][k]
          } else delete next[scope][key]
        }
      }
      return next
    })
    // This node's next search sees the change at once (latest() would answer the old values once more).
    this.cached = { at: this.now(), snapshot: this.compose(result), persisted: result }
    return result
  }

  /** GET /_cluster/settings body (flat keys; the route nests them unless flat_settings). */
  async read(includeDefaults: boolean): Promise<PersistedSettings & { defaults?: Record<string, SettingValue> }> {
    this.cached = undefined
    const { persisted } = await this.current()
    if (!includeDefaults) return persisted
    const defaults: Record<string, SettingValue> = {}
    for (const s of SETTINGS) defaults[s.key] = s.secret ? '<masked>' : (this.node.values.get(s.key) ?? s.default)
    return { ...persisted, defaults }
  }
}

function validateDynamic(scope: Scope, key: string, raw: unknown): SettingValue {
  const def = settingDef(key)
  if (!def || (!isOwnedKey(key) && !def.dynamic)) {
    if (!def && isKnownPlatformKey(key)) {
      if (typeof raw === 'object') throw new SettingsError(`failed to parse value for setting [${key}]`)
      return raw as SettingValue
    }
    throw new SettingsError(`${scope} setting [${key}], not recognized`)
  }
  if (!def.dynamic) throw new SettingsError(`${scope} setting [${key}], not dynamically updateable`)
  const parsed = parseSettingValue(def, raw)
  if ('error' in parsed) throw new SettingsError(`Failed to parse value [${String(raw)}] for setting [${key}]: ${parsed.error}`)
  return parsed.value
}

/** In-memory persistence for a single process (unit tests, check-config). */
export function memoryPersistence(initial: PersistedSettings = { persistent: {}, transient: {} }): SettingsPersistence {
  let state = initial
  return {
    async load() {
      return state
    },
    async update(change) {
      state = change(state)
      return state
    },
  }
}

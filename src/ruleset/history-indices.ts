/**
 * History indices behind a write alias, kept as the peer keeps its alert and IoC finding history
 * (`DetectorIndexManagementService`, `IocFindingService`): the first created as
 * `<alias>-<yyyy.MM.dd>-1` (`history.first`); every `<family>_rollover_period` a write index older
 * than `max_age` or holding `max_docs` documents gets a successor that takes the alias's writes,
 * and the other history indices older than the retention period are deleted. One mechanism for
 * every family: each names its settings, its indices and how a new one is created.
 */
import type { SettingsSnapshot } from '../config/cluster-settings'
import type { SettingKeyOf } from '../config/registry'
import { timeToMillis } from '../config/values'
import type { Logger } from '../http/log'
import { IndexNotFound } from '../store/errors'
import type { Store } from '../store/port'

export interface HistoryFamily {
  /** What log lines call it (`alert history`). */
  name: string
  /** The history indices of every alias of the family (`.opensearch-sap-*-alerts-history-*`). */
  pattern: string
  /** The family's setting keys: rollover on or off, and its bounds. */
  settings: {
    historyEnabled: SettingKeyOf<'boolean'>
    maxAge: SettingKeyOf<'time'>
    maxDocs: SettingKeyOf<'long'>
    retention: SettingKeyOf<'time'>
    rolloverPeriod: SettingKeyOf<'time'>
  }
  /** The start of the names of an alias's history indices, when it is not the alias's name. */
  prefix?: (alias: string) => string
  /** Creates an index of the family (its settings and mappings), with these aliases. */
  create(index: string, aliases?: Record<string, object>): Promise<void>
}

const day = (millis: number) => new Date(millis).toISOString().slice(0, 10).replaceAll('-', '.')

/** The name of the first history index whose names start so, created on a day. */
export const firstHistoryIndex = (prefix: string, now: number) => `${prefix}-${day(now)}-1`

/** One rollover check of every history alias of a family, then the retention sweep. */
export async function rollOverHistory(store: Store, family: HistoryFamily, settings: SettingsSnapshot, now: number, log: Logger) {
  if (!settings.bool(family.settings.historyEnabled)) return
  const maxAge = timeToMillis(settings.str(family.settings.maxAge))
  const maxDocs = settings.num(family.settings.maxDocs)
  const retention = timeToMillis(settings.str(family.settings.retention))
  let indices
  try {
    indices = await store.getIndex({ index: family.pattern, expand_wildcards: 'all' })
  } catch (e) {
    if (e instanceof IndexNotFound) return
    throw e
  }
  for (const [index, info] of Object.entries(indices)) {
    const created = Number(info.settings.index.creation_date ?? now)
    const alias = Object.entries(info.aliases).find(([, def]) => def.is_write_index === true)?.[0]
    if (alias) {
      const docs = (await store.count({ index })).count
      if (now - created < maxAge && docs < maxDocs) continue
      const n = Number(/-(\d+)$/.exec(index)?.[1] ?? '1') + 1
      const next = `${family.prefix?.(alias) ?? alias}-${day(now)}-${n}`
      await family.create(next)
      await store.updateAliases({
        body: {
          actions: [{ add: { index, alias, is_write_index: false } }, { add: { index: next, alias, is_write_index: true } }],
        },
      })
      log.info(`${family.name} rolled over`, { alias, from: index, to: next, docs })
    } else if (now - created > retention) {
      await store.deleteIndex({ index })
      log.info(`${family.name} index deleted after its retention period`, { index })
    }
  }
}

/**
 * The family's rollover job: a check every `rollover_period`. The period is read again at least
 * once a minute, so shortening it takes effect without waiting out the old one.
 */
export function historyRollover(
  deps: { store: Store; settings: { snapshot(): Promise<SettingsSnapshot> }; now: () => number; log: Logger },
  family: HistoryFamily,
): { start(): void; stop(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined
  let stopped = false
  let last = -Infinity
  const tick = async () => {
    if (stopped) return
    const settings = await deps.settings.snapshot()
    const period = Math.max(timeToMillis(settings.str(family.settings.rolloverPeriod)), 1000)
    if (Date.now() - last >= period) {
      last = Date.now()
      await rollOverHistory(deps.store, family, settings, deps.now(), deps.log).catch((e) =>
        deps.log.warn(`${family.name} rollover failed; trying again at the next period`, { error: e as Error }),
      )
    }
    if (!stopped) timer = setTimeout(tick, Math.min(period, 60_000))
  }
  return {
    start: () => void tick(),
    stop: () => {
      stopped = true
      clearTimeout(timer)
    },
  }
}

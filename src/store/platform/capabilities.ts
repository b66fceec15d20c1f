/**
 * What this platform lacks of what svc-ext asks of it, learned from its first refusal and shared
 * by every store on the same connection (the service account's and the callers').
 *
 * - The `zstd` codec (the reference's) needs OpenSearch's custom-codecs plugin: a platform without
 *   it refuses the whole index or template ("unknown value for [index.codec]"). It then gets
 *   `best_compression`, its own tightest codec: the same data, compressed less tightly.
 * - Index State Management is a plugin too: without it `_plugins/_ism/...` has no handler and its
 *   index setting `index.plugins.index_state_management.*` is unknown. The policies then live in
 *   a service index on the platform, as on the embedded store, the setting is left out, and the
 *   Setup retention job applies the policies (src/store/lifecycle-policies.ts, src/setup/retention.ts).
 */
import { LifecycleUnavailable, StoreError } from '../errors'

const CODEC_REFUSED = /unknown value for \[index\.codec\].*zstd/
const ISM_SETTING_REFUSED = /unknown setting \[index\.plugins\.index_state_management\./

export class PlatformCapabilities {
  private zstdRefused = false
  private ismSettingRefused = false
  /** undefined until the platform answered an ISM call one way or the other. */
  private ism?: boolean

  /** Sends an index or template body as given, or as the platform accepts it once it refused what it lacks. */
  async withIndexSettings<T>(body: unknown, send: (body: unknown) => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await send(this.adapt(body))
      } catch (e) {
        if (!(e instanceof StoreError)) throw e
        if (!this.zstdRefused && CODEC_REFUSED.test(e.message)) this.zstdRefused = true
        else if (!this.ismSettingRefused && ISM_SETTING_REFUSED.test(e.message)) this.ismSettingRefused = true
        else throw e
      }
    }
  }

  private adapt(body: unknown): unknown {
    if (!this.zstdRefused && !this.ismSettingRefused) return body
    return adaptSettings(body, { zstd: !this.zstdRefused, ismSettings: !this.ismSettingRefused })
  }

  /** The platform's ISM when it has one, else the emulation over its indices. */
  async withIsm<T>(native: () => Promise<T>, emulated: () => Promise<T>): Promise<T> {
    if (this.ism === false) return emulated()
    try {
      const r = await native()
      this.ism = true
      return r
    } catch (e) {
      if (!(e instanceof LifecycleUnavailable)) {
        if (e instanceof StoreError && e.status < 500) this.ism = true
        throw e
      }
      this.ism = false
      return emulated()
    }
  }

  /** Whether the platform runs ISM itself (asked with `probe` the first time). */
  async hasIsm(probe: () => Promise<unknown>): Promise<boolean> {
    if (this.ism === undefined) await this.withIsm(probe, async () => undefined).catch(() => undefined)
    return this.ism !== false
  }
}

/** A copy whose index settings (of an index, or of a template's `template`) hold only what the platform has. */
export function adaptSettings(body: unknown, has: { zstd: boolean; ismSettings: boolean }): unknown {
  if (!body || typeof body !== 'object') return body
  const out = structuredClone(body) as Record<string, any>
  for (const settings of [out.settings, out.template?.settings]) {
    if (!settings || typeof settings !== 'object') continue
    for (const level of [settings, settings.index]) {
      if (!level || typeof level !== 'object') continue
      for (const key of Object.keys(level)) {
        const name = level === settings && !key.startsWith('index.') ? `index.${key}` : level === settings ? key : `index.${key}`
        if (!has.zstd && name === 'index.codec' && level[key] === 'zstd') level[key] = 'best_compression'
        if (!has.ismSettings && (name.startsWith('index.plugins.index_state_management') || name === 'index.plugins')) {
          if (name === 'index.plugins' && typeof level[key] === 'object') delete level[key].index_state_management
          else delete level[key]
        }
      }
    }
  }
  return out
}

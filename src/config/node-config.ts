import { dirname, resolve } from 'node:path'
import { flattenKeys } from '../store/flat-keys'
import { SETTINGS, settingDef } from './registry'
import { parseSettingValue, type SettingMap, type SettingValue } from './values'

/**
 * The node configuration: a YAML file of flat dotted keys (like opensearch.yml;
 * nested maps are flattened, so both spellings work) plus SVC_* environment
 * overrides. Anything unknown or out of range stops the start.
 */
export interface NodeConfig {
  /** Effective value of every setting from the file/env/defaults (dynamic overrides come later). */
  values: SettingMap
  /** Keys set explicitly by the file or the environment. */
  explicit: Set<string>
  /** Directory of the config file (security files live in <configDir>/security/). */
  configDir: string
  configFile?: string
}

export class ConfigError extends Error {}

/**
 * Setting names contain underscores, so the environment form spells the dots
 * out: SVC_SETTING_http.port (through `env`) or SVC_SETTING_http__port (a
 * name every shell accepts; `__` stands for a dot).
 */
function envOverrides(env: Record<string, string | undefined>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(env)) {
    if (name.startsWith('SVC_SETTING_') && value !== undefined) out[name.slice('SVC_SETTING_'.length).replaceAll('__', '.')] = value
  }
  return out
}

export function parseNodeConfig(text: string, fileName: string): Record<string, unknown> {
  let doc: unknown
  try {
    doc = Bun.YAML.parse(text)
  } catch (e) {
    throw new ConfigError(`${fileName}: not valid YAML: ${(e as Error).message}`)
  }
  if (doc === null || doc === undefined) return {}
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new ConfigError(`${fileName}: expected a map of settings`)
  return flattenKeys(doc as Record<string, unknown>)
}

export function buildNodeConfig(raw: Record<string, unknown>, source: string, configDir: string, configFile?: string): NodeConfig {
  // Every declared key starts at its default, so each read finds a value of its type.
  const values = new Map<string, SettingValue>(SETTINGS.map((s) => [s.key, s.default])) as SettingMap
  const explicit = new Set<string>()
  for (const [key, rawValue] of Object.entries(raw)) {
    const def = settingDef(key)
    if (!def) throw new ConfigError(`${source}: unknown setting [${key}]`)
    const parsed = parseSettingValue(def, rawValue)
    if ('error' in parsed) {
      throw new ConfigError(`${source}: invalid value [${String(rawValue)}] for setting [${key}]: ${parsed.error}`)
    }
    values.set(key, parsed.value)
    explicit.add(key)
  }
  const cert = values.get('http.tls.certificate')
  const key = values.get('http.tls.key')
  if (Boolean(cert) !== Boolean(key)) {
    throw new ConfigError(`${source}: http.tls.certificate and http.tls.key must be set together`)
  }
  // Relative paths in the file are relative to the file, as operators expect from a config file.
  for (const k of ['path.data', 'http.tls.certificate', 'http.tls.key', 'storage.platform.ssl.certificate_authorities'] as const) {
    const v = values.get(k)
    if (typeof v === 'string' && v !== '' && explicit.has(k)) values.set(k, resolve(configDir, v))
  }
  return { values, explicit, configDir, configFile }
}

/** Loads the node file (if any) and the SVC_SETTING_* environment. */
export async function loadNodeConfig(
  configFile: string | undefined,
  env: Record<string, string | undefined> = process.env,
): Promise<NodeConfig> {
  let raw: Record<string, unknown> = {}
  let configDir = resolve('config')
  if (configFile) {
    const file = Bun.file(configFile)
    if (!(await file.exists())) throw new ConfigError(`config file not found: ${configFile}`)
    raw = parseNodeConfig(await file.text(), configFile)
    configDir = dirname(resolve(configFile))
  }
  const fromEnv = envOverrides(env)
  const source = configFile ?? 'environment'
  return buildNodeConfig({ ...raw, ...fromEnv }, source, configDir, configFile)
}

import { describe, expect, test } from 'bun:test'
import { buildNodeConfig, ConfigError, loadNodeConfig, parseNodeConfig } from '../../src/config/node-config'
import { SETTINGS } from '../../src/config/registry'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tmpdir } from 'node:os'

const build = (raw: Record<string, unknown>) => buildNodeConfig(raw, 'svc-ext.yml', '/etc/svc-ext')

describe('node configuration', () => {
  test('defaults come from the registry', () => {
    const cfg = build({})
    expect(cfg.values.get('http.port')).toBe(9201)
    expect(cfg.values.get('http.host')).toEqual(['127.0.0.1'])
    expect(cfg.values.get('plugins.setup.timeout')).toBe(30)
    expect(cfg.values.get('plugins.security_analytics.max_case_management_bulk_size')).toBe(10)
    expect(cfg.values.size).toBe(SETTINGS.length)
  })

  test('flat and nested YAML keys are the same setting', () => {
    const flat = parseNodeConfig('plugins.setup.timeout: 40\nhttp.port: 9300\n', 'a.yml')
    const nested = parseNodeConfig('plugins:\n  setup:\n    timeout: 40\nhttp:\n  port: 9300\n', 'b.yml')
    expect(flat).toEqual(nested)
    expect(build(flat).values.get('plugins.setup.timeout')).toBe(40)
  })

  test('an unknown key stops the start naming the key', () => {
    expect(() => build({ 'plugins.setup.timeot': 5 })).toThrow(/unknown setting \[plugins\.setup\.timeot\]/)
  })

  test('an out-of-range value names key, value and range', () => {
    const err = (() => {
      try {
        build({ 'plugins.setup.timeout': 500 })
      } catch (e) {
        return e as Error
      }
    })()
    expect(err).toBeInstanceOf(ConfigError)
    expect(err!.message).toContain('[plugins.setup.timeout]')
    expect(err!.message).toContain('[500]')
    expect(err!.message).toContain('from 5 to 120')
  })

  test('wrong types are refused', () => {
    expect(() => build({ 'plugins.setup.settings_update.enabled': 'yes' })).toThrow(/true or false/)
    expect(() => build({ 'http.port': 'abc' })).toThrow(/http\.port/)
    expect(() => build({ 'plugins.security_analytics.index_timeout': 'sixty' })).toThrow(/time value/)
    expect(() => build({ 'log.level': 'loud' })).toThrow(/one of debug, info, warn, error/)
  })

  test('min-only ranges accept any value above the minimum and refuse below', () => {
    expect(build({ 'plugins.content_manager.max_rules': 100000 }).values.get('plugins.content_manager.max_rules')).toBe(100000)
    expect(() => build({ 'plugins.content_manager.max_rules': -1 })).toThrow(/>= 0/)
  })

  test('certificate and key go together', () => {
    expect(() => build({ 'http.tls.certificate': 'a.pem' })).toThrow(/must be set together/)
  })

  test('relative paths are relative to the config file', () => {
    expect(build({ 'path.data': 'data' }).values.get('path.data')).toBe('/etc/svc-ext/data')
  })

  test('malformed YAML names the file', () => {
    expect(() => parseNodeConfig('a: [1, 2\n', 'bad.yml')).toThrow(/bad\.yml/)
    expect(() => parseNodeConfig('- a\n- b\n', 'list.yml')).toThrow(/expected a map/)
  })

  test('environment overrides the file, with __ standing for dots', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cfg-'))
    const file = join(dir, 'svc-ext.yml')
    writeFileSync(file, 'http.port: 9300\nplugins.setup.backoff: 20\n')
    const cfg = await loadNodeConfig(file, { SVC_SETTING_http__port: '9400', 'SVC_SETTING_plugins.setup.max_retries': '3' })
    expect(cfg.values.get('http.port')).toBe(9400)
    expect(cfg.values.get('plugins.setup.backoff')).toBe(20)
    expect(cfg.values.get('plugins.setup.max_retries')).toBe(3)
    expect(cfg.configDir).toBe(dir)
  })

  test('a missing config file is an error', async () => {
    expect(loadNodeConfig('/nonexistent/svc-ext.yml', {})).rejects.toThrow(/not found/)
  })
})

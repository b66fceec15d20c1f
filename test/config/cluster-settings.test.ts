import { describe, expect, test } from 'bun:test'
import { ClusterSettings, memoryPersistence, SettingsError } from '../../src/config/cluster-settings'
import { buildNodeConfig } from '../../src/config/node-config'
import { rejectionOf } from '../helpers/thrown'

function make(raw: Record<string, unknown> = {}) {
  let now = 0
  const persistence = memoryPersistence()
  const settings = new ClusterSettings(buildNodeConfig(raw, 't.yml', '/tmp'), persistence, () => now)
  return { settings, persistence, advance: (ms: number) => (now += ms) }
}

const errorOf = (p: Promise<unknown>) => rejectionOf(SettingsError, p)

describe('dynamic settings', () => {
  test('a persistent value overrides the node file and is seen on the next operation', async () => {
    const { settings } = make({ 'plugins.security_analytics.max_detectors': 12 })
    expect((await settings.snapshot()).num('plugins.security_analytics.max_detectors')).toBe(12)
    await settings.update({ persistent: { 'plugins.security_analytics.max_detectors': 3 } })
    expect((await settings.snapshot()).num('plugins.security_analytics.max_detectors')).toBe(3)
  })

  test('transient wins over persistent; null resets', async () => {
    const { settings } = make()
    const key = 'plugins.content_manager.max_rules'
    await settings.update({ persistent: { [key]: 5 }, transient: { [key]: 7 } })
    expect((await settings.snapshot()).num(key)).toBe(7)
    await settings.update({ transient: { [key]: null } })
    expect((await settings.snapshot()).num(key)).toBe(5)
    await settings.update({ persistent: { [key]: null } })
    expect((await settings.snapshot()).num(key)).toBe(200)
  })

  test('nested bodies and string values are accepted like OpenSearch', async () => {
    const { settings } = make()
    await settings.update({ persistent: { plugins: { content_manager: { telemetry: { enabled: 'false' } } } } })
    expect((await settings.snapshot()).bool('plugins.content_manager.telemetry.enabled')).toBe(false)
  })

  test('prefix.* null resets every key under the prefix', async () => {
    const { settings } = make()
    await settings.update({ persistent: { 'plugins.content_manager.max_rules': 1, 'plugins.content_manager.max_kvdbs': 2 } })
    const state = await settings.update({ persistent: { 'plugins.content_manager.*': null } })
    expect(state.persistent).toEqual({})
  })

  test('non-dynamic, unknown, mistyped and out-of-range values are refused naming the setting, nothing written', async () => {
    const { settings, persistence } = make()
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ 'plugins.setup.timeout': 10 }, /persistent setting \[plugins\.setup\.timeout\], not dynamically updateable/],
      [{ 'plugins.nope': 1 }, /persistent setting \[plugins\.nope\], not recognized/],
      [
        { 'plugins.security_analytics.max_case_management_bulk_size': 101 },
        /\[plugins\.security_analytics\.max_case_management_bulk_size\].*from 0 to 100/,
      ],
      [
        { 'plugins.security_analytics.filter_by_backend_roles': 'maybe' },
        /\[plugins\.security_analytics\.filter_by_backend_roles\].*true or false/,
      ],
      [{ 'plugins.content_manager.max_rules': 5, 'plugins.content_manager.max_kvdbs': 'x' }, /max_kvdbs/],
    ]
    for (const [persistent, message] of cases) {
      const err = await errorOf(settings.update({ persistent }))
      expect(err).toBeInstanceOf(SettingsError)
      expect(err.message).toMatch(message)
    }
    expect((await persistence.load()).persistent).toEqual({})
  })

  test('known platform keys are accepted and echoed (rolling upgrade procedure)', async () => {
    const { settings } = make()
    const state = await settings.update({ persistent: { 'cluster.routing.allocation.enable': 'primaries' } })
    expect(state.persistent['cluster.routing.allocation.enable']).toBe('primaries')
  })

  test('a change made through another handle is seen within the cache window', async () => {
    const { settings, persistence, advance } = make()
    await settings.snapshot()
    await persistence.update((s) => ({ ...s, persistent: { 'plugins.content_manager.max_rules': 9 } }))
    expect((await settings.snapshot()).num('plugins.content_manager.max_rules')).toBe(200)
    advance(1001)
    expect((await settings.snapshot()).num('plugins.content_manager.max_rules')).toBe(9)
  })

  test('include_defaults lists every owned setting and masks secrets', async () => {
    const { settings } = make({ 'storage.platform.password': 'hunter2' })
    const all = await settings.read(true)
    expect(all.defaults!['plugins.setup.backoff']).toBe(15)
    expect(all.defaults!['storage.platform.password']).toBe('<masked>')
    expect(JSON.stringify(all)).not.toContain('hunter2')
  })
})

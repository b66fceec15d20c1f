// Setting keys are typed from the registry: a read names a declared key and gets its declared
// type. The @ts-expect-error lines are checked by `npm run typecheck`, which fails if they compile.
import { expect, test } from 'bun:test'
import { SettingsSnapshot } from '../../src/config/cluster-settings'
import { buildNodeConfig } from '../../src/config/node-config'

const snapshot = new SettingsSnapshot(buildNodeConfig({ 'plugins.content_manager.max_rules': 7 }, 'test', '.').values)

test('a declared key reads with the type the registry declares', () => {
  const max: number = snapshot.get('plugins.content_manager.max_rules')
  const hosts: readonly string[] = snapshot.get('http.host')
  expect(max).toBe(7)
  expect(hosts).toEqual(['127.0.0.1'])
  expect(snapshot.bool('plugins.content_manager.catalog.update_on_demand')).toBe(true)
  expect(snapshot.str('plugins.security_analytics.alert_history_rollover_period')).toBe('12h')
})

test('a misspelt key, or a read of the wrong type, does not compile', () => {
  // Each @ts-expect-error line holds only the read, so the expected error can only be the key's.
  const misspelt = () =>
    // @ts-expect-error: no such setting
    snapshot.get('plugins.content_manager.max_rulez')
  expect(misspelt).toThrow('unknown setting plugins.content_manager.max_rulez')
  const asBoolean: unknown =
    // @ts-expect-error: max_rules is an integer, not a boolean
    snapshot.bool('plugins.content_manager.max_rules')
  expect(asBoolean).toBe(7)
  // @ts-expect-error: an integer setting is not a string
  const asString: string = snapshot.get('plugins.content_manager.max_rules')
  expect(asString as unknown).toBe(7)
})

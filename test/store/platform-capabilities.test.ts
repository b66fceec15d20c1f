// What the platform adapter does once a stock OpenSearch refused what it lacks (the zstd codec of
// the custom-codecs plugin, the ISM plugin's index settings and API): it learns from the first
// refusal and sends what the platform takes from then on. The real clusters of the test run show
// the same in the platform suites; these cases hold where Java is missing too.
import { expect, test } from 'bun:test'
import { IllegalArgument, LifecycleUnavailable } from '../../src/store/errors'
import { PlatformCapabilities } from '../../src/store/platform/capabilities'

const template = {
  index_patterns: ['svc-x*'],
  template: {
    settings: {
      index: { codec: 'zstd', number_of_shards: 1, 'plugins.index_state_management.policy_id': 'p', refresh_interval: '5s' },
    },
  },
}

test('a refused codec, then a refused ISM setting: each learned once, the rest of the body kept', async () => {
  const caps = new PlatformCapabilities()
  const sent: unknown[] = []
  const platform = async (body: any) => {
    sent.push(body)
    const index = body.template.settings.index
    if (index.codec === 'zstd')
      throw new IllegalArgument('unknown value for [index.codec] must be one of [default, lz4, best_compression, zlib] but was: zstd')
    if ('plugins.index_state_management.policy_id' in index)
      throw new IllegalArgument(
        'unknown setting [index.plugins.index_state_management.policy_id] please check that any required plugins are installed',
      )
    return 'ok'
  }
  expect(await caps.withIndexSettings(template, platform)).toBe('ok')
  expect(sent).toHaveLength(3)
  expect((sent[2] as { template: { settings: { index: unknown } } }).template.settings.index).toEqual({
    codec: 'best_compression',
    number_of_shards: 1,
    refresh_interval: '5s',
  })
  // The caller's body is left as it was, and the next one goes adapted at once.
  expect(template.template.settings.index.codec).toBe('zstd')
  expect(await caps.withIndexSettings(template, platform)).toBe('ok')
  expect(sent).toHaveLength(4)
})

test('another refusal is the caller’s error, not a capability', async () => {
  const caps = new PlatformCapabilities()
  const refusal = new IllegalArgument('unknown setting [index.foo]')
  expect(
    await caps
      .withIndexSettings(template, async () => {
        throw refusal
      })
      .catch((e) => e),
  ).toBe(refusal)
})

test('without ISM the emulation answers, and keeps answering without asking the platform again', async () => {
  const caps = new PlatformCapabilities()
  let asked = 0
  const native = async () => {
    asked++
    throw new LifecycleUnavailable('no handler found for uri [/_plugins/_ism/policies/p] and method [GET]')
  }
  expect(await caps.withIsm(native, async () => 'emulated')).toBe('emulated')
  expect(await caps.withIsm(native, async () => 'emulated')).toBe('emulated')
  expect(asked).toBe(1)
  expect(await caps.hasIsm(native)).toBe(false)
  const withPlugin = new PlatformCapabilities()
  expect(await withPlugin.hasIsm(async () => ({ policies: [] }))).toBe(true)
  expect(
    await withPlugin.withIsm(
      async () => 'native',
      async () => 'emulated',
    ),
  ).toBe('native')
})

/**
 * The Store contract against the platform adapter: first pointed at the embedded svc-ext's REST
 * API (which speaks the platform's), then at a real OpenSearch when SVC_TEST_PLATFORM_URL is set.
 */
import { afterAll, beforeAll, describe, test } from 'bun:test'
import { openPlatformStore } from '../../src/store/platform'
import { runStoreContract } from '../store/contract'
import { startBarePlatform, type BarePlatform } from './bare-platform'

let platform: BarePlatform
beforeAll(async () => {
  platform = await startBarePlatform()
})
afterAll(() => platform.stop())

runStoreContract('platform adapter -> embedded svc-ext over HTTP', async () => {
  await platform.reset()
  return openPlatformStore({ url: platform.url, username: platform.admin.name, password: platform.admin.password })
})

const real = process.env.SVC_TEST_PLATFORM_URL
if (real) {
  runStoreContract(`platform adapter -> real OpenSearch (${new URL(real).host}; wipes its indices: use a throwaway cluster)`, async () => {
    const store = openPlatformStore({
      url: real,
      username: process.env.SVC_TEST_PLATFORM_USERNAME ?? 'admin',
      password: process.env.SVC_TEST_PLATFORM_PASSWORD ?? 'admin',
      insecure: true,
    })
    // Each test starts from an empty cluster: everything the previous one made goes (the
    // platform's own indices stay; the contract's "every index" assertions expect a bare cluster).
    await store.deleteDataStream({ name: '*' }).catch(() => {})
    const own = /^\.(opendistro|opensearch|plugins|ql-|kibana)/
    const leftovers = (await store.resolve('*', { expand_wildcards: 'all' })).filter((i) => !own.test(i))
    if (leftovers.length > 0) await store.deleteIndex({ index: leftovers }).catch(() => {})
    const templates = await store.getIndexTemplate().catch(() => ({ index_templates: [] }))
    for (const t of templates.index_templates) if (!own.test(t.name)) await store.deleteIndexTemplate({ name: t.name }).catch(() => {})
    await store.deleteAllPits().catch(() => {})
    return store
  })
} else {
  describe('Store contract: platform adapter -> real OpenSearch', () => {
    test.skip('SKIPPED: set SVC_TEST_PLATFORM_URL (and SVC_TEST_PLATFORM_USERNAME / _PASSWORD) to run the contract against a real OpenSearch', () => {})
  })
}

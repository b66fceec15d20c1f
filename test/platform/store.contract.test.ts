/**
 * The Store contract against the platform adapter: first pointed at the embedded svc-ext's REST
 * API (which speaks the platform's), then at the real OpenSearch clusters of the test run.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { LifecycleUnavailable } from '../../src/store/errors'
import { openPlatformStore } from '../../src/store/platform'
import { runStoreContract } from '../store/contract'
import { startBarePlatform, type BarePlatform } from './bare-platform'
import {
  describeOnOpenSearch,
  OPENSEARCH_START_MS,
  openSearchWithoutIsm,
  OS_SERVICE_ACCOUNT,
  realOpenSearch,
  wipeOpenSearch,
  type RunningOpenSearch,
} from '../helpers/opensearch'

let platform: BarePlatform
beforeAll(async () => {
  platform = await startBarePlatform()
})
afterAll(() => platform.stop())

runStoreContract('platform adapter -> embedded svc-ext over HTTP', async () => {
  await platform.reset()
  return openPlatformStore({ url: platform.url, username: platform.admin.name, password: platform.admin.password })
})

/** A store on a real cluster, emptied first: the contract's "every index" assertions expect a bare cluster. */
async function bareStore(os: RunningOpenSearch, account: { name: string; password: string }) {
  await wipeOpenSearch(os)
  return openPlatformStore({ url: os.url, username: account.name, password: account.password, ca: os.ca })
}

const noIsm = { secure: await openSearchWithoutIsm('secure'), dev: await openSearchWithoutIsm('dev') }

// The secure three-node cluster as svc-ext's service account would use it (TLS checked against
// the cluster's CA), and the development node without the security plugin.
describeOnOpenSearch('real OpenSearch', () => {
  for (const kind of ['secure', 'dev'] as const) {
    describe(kind === 'secure' ? 'three nodes with the security plugin' : 'one node without the security plugin', () => {
      let os: RunningOpenSearch
      beforeAll(async () => {
        os = await realOpenSearch(kind)
      }, OPENSEARCH_START_MS)
      // What the bootstrap and the retention job tell a platform without ISM by.
      test.if(noIsm[kind] !== undefined)('without the index-management plugin the ISM calls are LifecycleUnavailable', async () => {
        const store = openPlatformStore({ url: os.url, username: os.admin.name, password: os.admin.password, ca: os.ca })
        try {
          expect(await store.getLifecyclePolicies().catch((e) => e)).toBeInstanceOf(LifecycleUnavailable)
          expect(await store.getLifecyclePolicy({ id: 'x' }).catch((e) => e)).toBeInstanceOf(LifecycleUnavailable)
        } finally {
          await store.close()
        }
      })
      runStoreContract(`platform adapter -> real OpenSearch (${kind})`, () => bareStore(os, os.serviceAccount ?? os.admin), {
        noIsm: noIsm[kind],
      })
    })
  }
})

/**
 * The Store contract against the platform adapter: first pointed at the embedded svc-ext's REST
 * API (which speaks the platform's), then at the real OpenSearch clusters of the test run.
 */
import { afterAll, beforeAll, describe } from 'bun:test'
import { openPlatformStore } from '../../src/store/platform'
import { runStoreContract } from '../store/contract'
import { startBarePlatform, type BarePlatform } from './bare-platform'
import {
  describeOnOpenSearch,
  OPENSEARCH_START_MS,
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

// The secure three-node cluster as svc-ext's service account would use it (TLS checked against
// the cluster's CA), and the development node without the security plugin.
describeOnOpenSearch('real OpenSearch', () => {
  for (const kind of ['secure', 'dev'] as const) {
    describe(kind === 'secure' ? 'three nodes with the security plugin' : 'one node without the security plugin', () => {
      let os: RunningOpenSearch
      // The first wipe may meet what earlier suites left (thousands of documents in many indices).
      beforeAll(async () => {
        os = await realOpenSearch(kind)
        await wipeOpenSearch(os)
      }, OPENSEARCH_START_MS)
      // No ISM on these clusters (the plugin is not on Maven Central): the lifecycle tests meet
      // the adapter's emulation over a service index of the platform (src/store/platform/capabilities.ts).
      runStoreContract(`platform adapter -> real OpenSearch (${kind})`, () => bareStore(os, os.serviceAccount ?? os.admin), {
        dataNodes: kind === 'secure' ? 3 : 1,
      })
    })
  }
})

/**
 * The real OpenSearch of a test run: a three-node cluster with the security plugin (TLS, users and
 * roles on the platform) and a one-node development cluster without it, each started at its first
 * use and shared by every test file of the `bun test` process (files run one after the other), then
 * gone with the process (the launchers stop when their standard input closes).
 *
 * Without Java 21+, Maven or openssl the platform suites are skipped with one line naming what is
 * missing; SVC_TEST_OPENSEARCH_REQUIRED=1 (CI) turns that into a failure.
 */
import { describe, test } from 'bun:test'
import { join } from 'node:path'
import { PLATFORM_OWN } from '../store/contract'
import { SETUP_DEFINITIONS } from '../../src/setup/indices'
import { tmpdir } from 'node:os'
import { ADMIN } from './server'
import {
  attachOpenSearch,
  missingPrerequisites,
  startOpenSearch,
  type OpenSearchState,
  type RunningOpenSearch,
} from '../../scripts/opensearch/cluster'

export type { RunningOpenSearch } from '../../scripts/opensearch/cluster'
export type OpenSearchKind = 'secure' | 'dev'

/** How long a suite waits for its cluster in beforeAll (a first start also resolves Maven artifacts). */
export const OPENSEARCH_START_MS = 600_000

/** The service account svc-ext nodes use on the secure cluster (all_access plus the system-index grant). */
export const OS_SERVICE_ACCOUNT = { name: 'svc-service', password: 'Svc-service-pass-1' }

const missing = missingPrerequisites()
const required = process.env.SVC_TEST_OPENSEARCH_REQUIRED === '1'
let announced = false

/** Why the real OpenSearch cannot run here, or null when it can. */
export function openSearchUnavailable(): string | null {
  if (!missing) return null
  if (required) throw new Error(`SVC_TEST_OPENSEARCH_REQUIRED=1 but a real OpenSearch cannot start here: ${missing}`)
  return missing
}

const clusters = new Map<OpenSearchKind, Promise<RunningOpenSearch>>()

/**
 * The shared cluster of that kind, started at its first use (about a minute), or, with
 * SVC_TEST_OPENSEARCH_<KIND>_STATE naming the --state file of a running `npm run opensearch`, that
 * cluster (quicker runs while developing; tests that stop nodes need a cluster of their own).
 */
export function realOpenSearch(kind: OpenSearchKind = 'secure'): Promise<RunningOpenSearch> {
  let c = clusters.get(kind)
  const stateFile = process.env[`SVC_TEST_OPENSEARCH_${kind.toUpperCase()}_STATE`]
  if (!c && stateFile) {
    c = Bun.file(stateFile)
      .json()
      .then((state: OpenSearchState) => attachOpenSearch(state))
    clusters.set(kind, c)
  }
  if (!c) {
    c = startOpenSearch({
      basePath: join(tmpdir(), `opensearch-${kind}`),
      nodes: kind === 'secure' ? 3 : 1,
      secure: kind === 'secure',
      clusterName: `svc-test-${kind}`,
      serviceAccount: kind === 'secure' ? OS_SERVICE_ACCOUNT : undefined,
      // The same admin as the embedded test servers', so a suite's default caller exists on both platforms.
      adminPassword: ADMIN.password,
      log: (line) => process.stderr.write(line + '\n'),
    })
    clusters.set(kind, c)
  }
  return c
}

/**
 * `describe` that runs only where a real OpenSearch can start; elsewhere one skipped test says why
 * (once per file), so a machine without Java still passes and tells what it did not run.
 */
export function describeOnOpenSearch(name: string, body: () => void): void {
  const why = openSearchUnavailable()
  if (why === null) return describe(name, body)
  describe(name, () => {
    test.skip(`SKIPPED (real OpenSearch: ${why})`, () => {})
  })
  if (!announced) {
    announced = true
    process.stderr.write(`platform suites on a real OpenSearch skipped: ${why}\n`)
  }
}

/** The test clusters' system indices (scripts/opensearch/cluster.ts lists them). */
const SYSTEM_INDEX = /^(\.opendistro-ism-|\.svc-internal-state$)/

/**
 * The index templates every svc-ext bootstrap writes (create = false): a node's bootstrap puts each
 * of them again, so they are what a bare cluster holds once a node has started, whatever a test
 * did to them. Recreating them cost each test file about 20 s of the three-node cluster's time
 * (3.2 MB of templates, the global metadata rewritten on every node at each of 56 puts).
 */
const BOOTSTRAP_TEMPLATES = new Set(SETUP_DEFINITIONS.flatMap((d) => (d.template ? [d.template.name] : [])))

/**
 * Everything svc-ext or a test made goes (indices, data streams, PITs, templates other than
 * BOOTSTRAP_TEMPLATES): each test file starts on a cluster as bare as a new deployment's, its
 * node's bootstrap creating every index and stream.
 */
export async function wipeOpenSearch(os: RunningOpenSearch): Promise<void> {
  // OpenSearch's data stream delete takes no expand_wildcards (a 400 that left every stream in place).
  const ds = await os.request('DELETE', '/_data_stream/*')
  if (ds.status >= 300) throw new Error(`wiping the cluster: DELETE /_data_stream/*: ${ds.status} ${JSON.stringify(ds.body)}`)
  const templates = await os.request('GET', '/_index_template')
  for (const t of templates.body.index_templates ?? [])
    if (!PLATFORM_OWN.test(t.name) && !BOOTSTRAP_TEMPLATES.has(t.name))
      await os.request('DELETE', `/_index_template/${encodeURIComponent(t.name)}`)
  // Then what the index templates were composed of, and legacy templates.
  const components = await os.request('GET', '/_component_template')
  for (const t of components.body.component_templates ?? [])
    if (!PLATFORM_OWN.test(t.name)) await os.request('DELETE', `/_component_template/${encodeURIComponent(t.name)}`)
  const legacy = await os.request('GET', '/_template')
  for (const name of Object.keys(legacy.body ?? {}))
    if (!PLATFORM_OWN.test(name)) await os.request('DELETE', `/_template/${encodeURIComponent(name)}`)
  const indices = await os.request('GET', '/_cat/indices?format=json&expand_wildcards=all&h=index')
  const names = (indices.body as Array<{ index: string }>).map((i) => i.index).filter((n) => !PLATFORM_OWN.test(n))
  // The security plugin refuses a list that holds a system index as a whole: those go by the
  // service account (the holder of their grant), the rest by the admin, 50 names a request. An
  // index gone meanwhile (a 404) is what the wipe wants.
  const system = names.filter((n) => SYSTEM_INDEX.test(n))
  const others = names.filter((n) => !SYSTEM_INDEX.test(n))
  const drop = async (batch: string[], as?: { name: string; password: string }) => {
    const path = `/${batch.map(encodeURIComponent).join(',')}?expand_wildcards=all&ignore_unavailable=true`
    const r = await os.request('DELETE', path, undefined, 0, as)
    if (r.status >= 300 && r.status !== 404)
      throw new Error(`wiping the cluster: DELETE ${batch.join(',')}: ${r.status} ${JSON.stringify(r.body)}`)
  }
  for (let i = 0; i < others.length; i += 50) await drop(others.slice(i, i + 50))
  for (const name of system) await drop([name], os.serviceAccount ?? os.admin)
  await os.request('DELETE', '/_search/point_in_time/_all')
}

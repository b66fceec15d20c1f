/**
 * Lifecycle (ISM) policies in platform mode: the node's bootstrap writes the six policies of
 * reference 1.5 to the platform through its ISM API (here an embedded svc-ext, which serves
 * that API), as retried tasks whose failure stops the bootstrap like any other; the ISM API
 * reaches the platform with the caller's credentials, so the platform's rights decide.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ClusterSettings, memoryPersistence } from '../../src/config/cluster-settings'
import { buildNodeConfig } from '../../src/config/node-config'
import { createLogger } from '../../src/http/log'
import { runBootstrap } from '../../src/setup/bootstrap'
import { LIFECYCLE_POLICIES, SETUP_STATUS_DOC_ID, SETUP_STATUS_INDEX } from '../../src/setup/indices'
import { openPlatformStore } from '../../src/store/platform'
import type { TestServer } from '../helpers/server'
import { startBarePlatform, type BarePlatform } from './bare-platform'
import { SERVICE_ACCOUNT, SERVICE_ROLE, SERVICE_ROLE_DEF, startNode, startPlatform, type PlatformUnderTest } from './cluster-helpers'
import { basicAuth } from '../helpers/calls'
import { editPolicyAge, policyPath } from '../helpers/ism'

const DAVE = { name: 'dave', password: 'Dave-pass-1' }
const LIMITED = { name: 'svc-limited', password: 'Svc-limited-pass-1' }
const quiet = () => createLogger({ write: () => {} })

const ageIn = (policy: any) => policy.states.find((s: { name: string }) => s.name === 'hot').transitions[0].conditions.min_index_age

describe('a platform-mode node', () => {
  let platform: PlatformUnderTest
  let node: TestServer
  let nodeStarted = 0
  let editedVersion = 0

  beforeAll(async () => {
    platform = await startPlatform({ users: [{ ...DAVE, backend_roles: ['analyst'] }] })
    // An operator's edit on the platform before the node starts: the node's bootstrap must revert it.
    const put = await editPolicyAge(platform, 'stream-metrics-policy', '400d')
    expect(put.status).toBe(200)
    editedVersion = put.body._version
    nodeStarted = Date.now()
    node = await startNode(platform)
  }, 60_000)

  afterAll(async () => {
    await node?.stop()
    await platform?.stop()
  })

  test('writes the six policies to the platform on boot, reverting an edit (read back on the platform)', async () => {
    expect(node.server.app.storeKind).toBe('platform')
    for (const p of LIFECYCLE_POLICIES) {
      const r = await platform.request('GET', policyPath(p.id))
      expect(r.status).toBe(200)
      expect(ageIn(r.body.policy)).toBe(p.deleteAfter)
      expect(r.body.policy.ism_template.map((t: { index_patterns: string[] }) => t.index_patterns)).toEqual([p.ismPatterns])
      // Stamped by the node's boot, not by the platform's own earlier one.
      expect(r.body.policy.ism_template[0].last_updated_time).toBeGreaterThanOrEqual(nodeStarted)
    }
    const metrics = await platform.request('GET', policyPath('stream-metrics-policy'))
    expect(metrics.body._version).toBe(editedVersion + 1)
    // Where they live on the platform: its policies index, not the node.
    const stored = await platform.store.getLifecyclePolicy({ id: 'stream-metrics-policy' })
    expect(stored._version).toBe(metrics.body._version)
  })

  test('the ISM API goes to the platform with the caller’s credentials: the platform’s rights decide', async () => {
    const admin = await node.request('GET', policyPath('stream-events-policy'))
    expect(admin.status).toBe(200)
    expect(admin.body.policy.policy_id).toBe('stream-events-policy')
    const refused = await node.request('GET', policyPath('stream-events-policy'), { user: DAVE })
    expect(refused.status).toBe(403)
    expect(refused.body.error.reason).toContain('cluster:admin/opendistro/ism/policy/get')
    const write = await node.request('DELETE', policyPath('stream-events-policy'), { user: DAVE })
    expect(write.status).toBe(403)
    expect((await platform.request('GET', policyPath('stream-events-policy'))).status).toBe(200)
  })
})

describe('a node whose service account may not write ISM policies', () => {
  let platform: PlatformUnderTest
  let node: TestServer
  const logLines: string[] = []

  beforeAll(async () => {
    platform = await startPlatform({
      users: [{ ...LIMITED, roles: ['limited_service'] }],
      roles: {
        // Everything the bootstrap needs but the ISM actions.
        limited_service: {
          cluster_permissions: ['cluster_monitor', 'cluster_composite_ops', 'cluster_manage_index_templates'],
          index_permissions: [{ index_patterns: ['*'], allowed_actions: ['indices_all'] }],
        },
      },
    })
    node = await startNode(platform, {
      settings: {
        'storage.platform.username': LIMITED.name,
        'storage.platform.password': LIMITED.password,
        'plugins.setup.max_retries': 0,
      },
      logLines,
    })
  }, 60_000)

  afterAll(async () => {
    await node?.stop()
    await platform?.stop()
  })

  test('fails its bootstrap at the first policy task (the platform’s 403), skipping the later tasks', async () => {
    const marker = await platform.request('GET', `/${SETUP_STATUS_INDEX}/_doc/${SETUP_STATUS_DOC_ID}`)
    expect(marker.body._source.status).toBe('failed')
    const failure = logLines.map((l) => JSON.parse(l)).find((l) => l.msg === 'setup task failed, later tasks skipped')
    expect(failure?.task).toBe(`policy:${LIFECYCLE_POLICIES[0].id}`)
    expect(JSON.stringify(failure?.error)).toContain('cluster:admin/opendistro/ism/policy')
    expect(failure?.skipped).toBeGreaterThan(50)
  })
})

describe('the bootstrap over the platform adapter', () => {
  let bare: BarePlatform
  beforeAll(async () => {
    bare = await startBarePlatform([{ ...SERVICE_ACCOUNT, roles: ['all_access', SERVICE_ROLE] }], { [SERVICE_ROLE]: SERVICE_ROLE_DEF })
  })
  afterAll(() => bare.stop())

  const bootstrapDeps = (node: Record<string, unknown> = {}) => ({
    store: openPlatformStore({ url: bare.url, username: SERVICE_ACCOUNT.name, password: SERVICE_ACCOUNT.password }),
    settings: new ClusterSettings(buildNodeConfig(node, 'test', '.'), memoryPersistence()),
    log: quiet(),
    now: Date.now,
  })

  const onPlatform = async (id: string) => {
    const r = await fetch(`${bare.url}${policyPath(id)}`, {
      headers: { authorization: basicAuth(bare.admin) },
    })
    return { status: r.status, body: (await r.json()) as any }
  }

  test('puts the six policies on an empty platform, then rewrites them on the next boot', async () => {
    await bare.reset()
    const deps = bootstrapDeps()
    try {
      expect((await runBootstrap(deps)).status).toBe('ready')
      for (const p of LIFECYCLE_POLICIES) {
        const r = await onPlatform(p.id)
        expect(r.status).toBe(200)
        expect(r.body._version).toBe(1)
        expect(ageIn(r.body.policy)).toBe(p.deleteAfter)
      }
      expect((await runBootstrap(deps)).status).toBe('ready')
      for (const p of LIFECYCLE_POLICIES) expect((await onPlatform(p.id)).body._version).toBe(2)
    } finally {
      await deps.store.close()
    }
  }, 60_000)

  test('an injected failure of a policy task leads to failed, with the later policies, streams and indices skipped', async () => {
    await bare.reset()
    const deps = bootstrapDeps({ 'plugins.setup.max_retries': 0 })
    try {
      const failing = 'policy:stream-findings-policy'
      const r = await runBootstrap(deps, {
        wrapTask: (t) => (t.name === failing ? { ...t, run: () => Promise.reject(new Error('injected failure')) } : t),
      })
      expect(r).toMatchObject({ status: 'failed', failedTask: failing })
      expect(r.skipped[0]).toBe('policy:stream-metrics-policy')
      const statuses = Object.fromEntries(
        await Promise.all(LIFECYCLE_POLICIES.map(async (p) => [p.id, (await onPlatform(p.id)).status] as const)),
      )
      expect(statuses).toEqual({
        'stream-events-policy': 200,
        'stream-raw-events-policy': 200,
        'stream-findings-policy': 404,
        'stream-metrics-policy': 404,
        'stream-active-responses-policy': 404,
        'ai-assistant-sessions-policy': 404,
      })
      const marker = await bare.store.get({ index: SETUP_STATUS_INDEX, id: SETUP_STATUS_DOC_ID })
      expect(marker.found && marker._source?.status).toBe('failed')
      expect((await bare.store.getDataStream()).data_streams).toEqual([])
    } finally {
      await deps.store.close()
    }
  })
})

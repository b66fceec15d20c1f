import { describe, expect, test } from 'bun:test'
import { ClusterSettings, memoryPersistence } from '../../src/config/cluster-settings'
import { buildNodeConfig } from '../../src/config/node-config'
import { BOOTSTRAP_LEASE_ID, runBootstrap, TaskTimeout, type BootstrapDeps, type BootstrapTask } from '../../src/setup/bootstrap'
import {
  backingIndex,
  CONTENT,
  CONTENT_ALIASES,
  INTERNAL_STATE_INDEX,
  LIFECYCLE_POLICIES,
  RESOURCE_LOCKS_INDEX,
  SESSIONS_STREAM,
  SETTINGS_DOC_ID,
  SETTINGS_INDEX,
  SETUP_DEFINITIONS,
  SETUP_STATUS_DOC_ID,
  SETUP_STATUS_INDEX,
} from '../../src/setup/indices'
import { readSetupStatus } from '../../src/setup/status'
import { openEmbeddedStore } from '../../src/store/embedded'
import { PolicyNotFound, VersionConflict } from '../../src/store/errors'
import type { Store } from '../../src/store/port'
import { quietLog } from './harness'
import { heldLock } from '../helpers/locks'

function deps(store: Store = openEmbeddedStore(':memory:'), node: Record<string, unknown> = {}): BootstrapDeps {
  const settings = new ClusterSettings(buildNodeConfig(node, 'test', '.'), memoryPersistence())
  return { store, settings, log: quietLog(), now: Date.now }
}

/** Everything a bootstrap can change, uuids and creation dates included (a recreated index would differ). */
async function snapshot(store: Store) {
  const indices = await store.getIndex({ index: '*', expand_wildcards: 'all' })
  const templates = (await store.getIndexTemplate()).index_templates.sort((a, b) => a.name.localeCompare(b.name))
  const streams = await store.getDataStream()
  const aliases = await store.getAlias({ expand_wildcards: 'all' })
  const counts = (await store.stats({ expand_wildcards: 'all' })).map((s) => [s.index, s.docs_count])
  const settingsDoc = await store.get({ index: SETTINGS_INDEX, id: SETTINGS_DOC_ID })
  return JSON.stringify({ indices, templates, streams, aliases, counts, settingsDoc })
}

const expectedTemplates = () =>
  SETUP_DEFINITIONS.flatMap((d) => (d.kind === 'index' ? (d.template ? [d.template.name] : []) : [d.template.name])).sort()

describe('a fresh store', () => {
  test('becomes ready with every index, template, data stream and alias present', async () => {
    const d = deps()
    const r = await runBootstrap(d)
    expect(r).toMatchObject({ status: 'ready', ranHere: true, skipped: [] })
    expect(await readSetupStatus(d.store)).toBe('ready')

    const templates = (await d.store.getIndexTemplate()).index_templates.map((t) => t.name).sort()
    expect(templates).toEqual(expectedTemplates())
    const streams = (await d.store.getDataStream()).data_streams
    const indices = new Set((await d.store.stats({ expand_wildcards: 'all' })).map((s) => s.index))
    for (const def of SETUP_DEFINITIONS) {
      if (def.kind === 'stream') {
        const ds = streams.find((s) => s.name === def.name)
        expect(ds?.indices.map((i) => i.index_name)).toEqual([backingIndex(def.name)])
        expect(ds?.template).toBe(def.template.name)
      } else if (def.kind === 'index') {
        expect(indices.has(def.name)).toBe(true)
      } else {
        expect(indices.has(def.index)).toBe(true)
        expect(indices.has(def.alias)).toBe(false)
        const alias = await d.store.getAlias({ name: def.alias, expand_wildcards: 'all' })
        expect(Object.keys(alias)).toEqual([def.index])
        expect(alias[def.index].aliases[def.alias].is_write_index).toBe(true)
      }
    }
    expect(streams).toHaveLength(SETUP_DEFINITIONS.filter((x) => x.kind === 'stream').length)
    expect((await d.store.get({ index: SETTINGS_INDEX, id: SETTINGS_DOC_ID })) as unknown).toMatchObject({
      found: true,
      _source: { engine: { index_raw_events: false } },
    })
    // The lease is released once the run is over.
    expect((await d.store.get({ index: RESOURCE_LOCKS_INDEX, id: BOOTSTRAP_LEASE_ID })).found).toBe(false)
  })

  test('the shapes the spec names: lock index, sessions stream, settings, internal state', async () => {
    const d = deps()
    await runBootstrap(d)
    const locks = (await d.store.getIndex({ index: RESOURCE_LOCKS_INDEX }))[RESOURCE_LOCKS_INDEX]
    expect(locks.mappings).toMatchObject({ dynamic: 'strict', properties: { acquired_at: { type: 'long' } } })
    expect(Object.keys(locks.mappings.properties ?? {})).toEqual(['acquired_at'])
    expect(locks.aliases).toEqual({})
    const flat = JSON.stringify(locks.settings)
    for (const needle of ['"hidden":"true"', '"number_of_replicas":"0"', '"auto_expand_replicas":"0-1"', '"refresh_interval":"-1"'])
      expect(flat).toContain(needle)

    const sessions = (await d.store.getMapping({ index: SESSIONS_STREAM }))[backingIndex(SESSIONS_STREAM)].mappings
    expect(sessions.dynamic).toBe('strict')
    expect(sessions.properties?.messages).toEqual({ type: 'object', enabled: false })
    expect(sessions.properties?.title).toEqual({ type: 'keyword', ignore_above: 1024 })

    const hidden = await d.store.stats({ expand_wildcards: 'all' })
    for (const name of [
      SETUP_STATUS_INDEX,
      SETTINGS_INDEX,
      INTERNAL_STATE_INDEX,
      RESOURCE_LOCKS_INDEX,
      '.svc-cti-consumers',
      '.svc-content-manager-jobs',
    ]) {
      expect(hidden.find((s) => s.index === name)?.hidden).toBe(true)
    }
    // A strict mapping refuses unknown fields where the spec says so.
    await expect(
      d.store.index({ index: SETTINGS_INDEX, id: 'x', body: { engine: { index_raw_events: true, other: 1 } } }),
    ).rejects.toMatchObject({ status: 400 })
    await expect(
      d.store.index({ index: SESSIONS_STREAM, op_type: 'create', body: { '@timestamp': new Date().toISOString(), bogus: 1 } }),
    ).rejects.toMatchObject({ status: 400 })
  })

  test("tasks run in the reference's order: marker first, settings last", async () => {
    const d = deps()
    const r = await runBootstrap(d)
    expect(r.completed.slice(0, 3)).toEqual(['template:setup-status', `index:${SETUP_STATUS_INDEX}`, 'marker:running'])
    // Reference 1.2 step 2: the six policies, in the order of its table, before any stream.
    expect(r.completed.slice(3, 9)).toEqual(LIFECYCLE_POLICIES.map((p) => `policy:${p.id}`))
    expect(r.completed[9]).toBe('template:svc-events-v5-access-management-template')
    expect(r.completed.slice(-3)).toEqual(['template:settings', `index:${SETTINGS_INDEX}`, `document:${SETTINGS_INDEX}/1`])
    const pos = (name: string) => r.completed.indexOf(name)
    expect(pos('stream:svc-events-v5-unclassified')).toBeLessThan(pos('stream:svc-findings-v5-access-management'))
    expect(pos(`stream:${SESSIONS_STREAM}`)).toBeLessThan(pos('index:svc-agent-config'))
    expect(pos('index:svc-states-vulnerabilities')).toBeLessThan(pos(`content:${CONTENT_ALIASES.enrichments}`))
    expect(pos(`content:${CONTENT_ALIASES.vulnerabilities}`)).toBeLessThan(pos(`index:${SETTINGS_INDEX}`))
  })
})

describe('a second bootstrap', () => {
  test('changes nothing, and invalidates a stale ready marker while it runs', async () => {
    const d = deps()
    await runBootstrap(d)
    const before = await snapshot(d.store)
    const seen: string[] = []
    const r = await runBootstrap(d, {
      wrapTask: (t) =>
        t.name === `stream:${SESSIONS_STREAM}` ? { ...t, run: async () => (seen.push(await readSetupStatus(d.store)), t.run()) } : t,
    })
    expect(r.status).toBe('ready')
    expect(seen).toEqual(['running'])
    expect(await snapshot(d.store)).toBe(before)
  })

  test("keeps an operator's settings document", async () => {
    const d = deps()
    await runBootstrap(d)
    await d.store.index({ index: SETTINGS_INDEX, id: SETTINGS_DOC_ID, body: { engine: { index_raw_events: true } }, refresh: true })
    await runBootstrap(d)
    const doc = await d.store.get({ index: SETTINGS_INDEX, id: SETTINGS_DOC_ID })
    expect(doc.found && doc._source).toEqual({ engine: { index_raw_events: true } })
  })
})

describe('failures', () => {
  const failing = (name: string, times = Infinity) => {
    let calls = 0
    const runs: string[] = []
    return {
      runs,
      get calls() {
        return calls
      },
      wrapTask: (t: BootstrapTask): BootstrapTask => ({
        name: t.name,
        run: async () => {
          runs.push(t.name)
          if (t.name === name && calls++ < times) throw new Error(`injected failure of ${name}`)
          return t.run()
        },
      }),
    }
  }

  test('a task that exhausts its retries marks setup failed and skips every later task', async () => {
    const d = deps(undefined, { 'plugins.setup.max_retries': 2, 'plugins.setup.backoff': 7 })
    const sleeps: number[] = []
    const inject = failing('stream:svc-events-raw-v5')
    const r = await runBootstrap(d, { wrapTask: inject.wrapTask, sleep: async (ms) => void sleeps.push(ms) })
    expect(r.status).toBe('failed')
    expect(r.failedTask).toBe('stream:svc-events-raw-v5')
    expect(inject.calls).toBe(3)
    expect(sleeps).toEqual([7000, 7000])
    expect(await readSetupStatus(d.store)).toBe('failed')
    expect(r.skipped[0]).toBe('template:svc-active-responses-template')
    expect(r.skipped.at(-1)).toBe(`document:${SETTINGS_INDEX}/1`)
    // Nothing after the failed task ran or exists.
    expect(inject.runs.slice(inject.runs.indexOf('stream:svc-events-raw-v5'))).toEqual(new Array(3).fill('stream:svc-events-raw-v5'))
    expect(await d.store.existsIndex({ index: SETTINGS_INDEX, expand_wildcards: 'all' })).toBe(false)
    expect(await d.store.existsIndex({ index: CONTENT[0].index, expand_wildcards: 'all' })).toBe(false)
    expect((await d.store.getDataStream({ name: 'svc-*' })).data_streams.map((s) => s.name)).not.toContain(SESSIONS_STREAM)
    // Earlier tasks did their work.
    expect((await d.store.getDataStream({ name: 'svc-findings-v5-*' })).data_streams).toHaveLength(8)
    expect((await d.store.getIndexTemplate({ name: 'svc-events-raw-v5-template' })).index_templates).toHaveLength(1)
  })

  test('max_retries 0 means a single attempt and no backoff', async () => {
    const d = deps(undefined, { 'plugins.setup.max_retries': 0 })
    const sleeps: number[] = []
    const inject = failing(`index:${INTERNAL_STATE_INDEX}`)
    const r = await runBootstrap(d, { wrapTask: inject.wrapTask, sleep: async (ms) => void sleeps.push(ms) })
    expect(r).toMatchObject({ status: 'failed', failedTask: `index:${INTERNAL_STATE_INDEX}` })
    expect(inject.calls).toBe(1)
    expect(sleeps).toEqual([])
  })

  test('a task that fails within its budget is retried after the backoff and setup becomes ready', async () => {
    const d = deps(undefined, { 'plugins.setup.max_retries': 1 })
    const sleeps: number[] = []
    const inject = failing(`content:${CONTENT_ALIASES.rules}`, 1)
    const r = await runBootstrap(d, { wrapTask: inject.wrapTask, sleep: async (ms) => void sleeps.push(ms) })
    expect(r.status).toBe('ready')
    expect(sleeps).toEqual([15_000])
    expect(await readSetupStatus(d.store)).toBe('ready')
  })

  test('a task that outlives plugins.setup.timeout fails with a timeout', async () => {
    const d = deps(undefined, { 'plugins.setup.timeout': 5, 'plugins.setup.max_retries': 0 })
    const r = await runBootstrap(d, {
      wrapTask: (t) => (t.name === 'template:svc-metrics-agents-template' ? { ...t, run: () => new Promise<void>(() => {}) } : t),
    })
    expect(r).toMatchObject({ status: 'failed', failedTask: 'template:svc-metrics-agents-template' })
    expect(await readSetupStatus(d.store)).toBe('failed')
  }, 10_000)

  test('TaskTimeout names the task and the limit', () => {
    expect(new TaskTimeout('index:x', 30).message).toBe('setup task index:x did not finish within 30s')
  })
})

describe('content aliases', () => {
  test('a concrete index squatting an alias name is replaced by <alias>-a behind the alias', async () => {
    const d = deps()
    await d.store.createIndex({ index: CONTENT_ALIASES.rules })
    await d.store.index({ index: CONTENT_ALIASES.rules, id: '1', body: { anything: 'dynamic' }, refresh: true })
    await runBootstrap(d)
    expect(await d.store.resolve(CONTENT_ALIASES.rules)).toEqual([`${CONTENT_ALIASES.rules}-a`])
  })

  test('an existing -a without the alias gets it; its documents stay', async () => {
    const d = deps()
    const idx = `${CONTENT_ALIASES.decoders}-a`
    await d.store.createIndex({ index: idx })
    await d.store.index({ index: idx, id: 'd1', body: { document: { name: 'kept' } }, refresh: true })
    await runBootstrap(d)
    const r = await d.store.get({ index: CONTENT_ALIASES.decoders, id: 'd1' })
    expect(r.found).toBe(true)
  })

  test('an alias already on its -b slot (after a swap) is left alone', async () => {
    const d = deps()
    const b = `${CONTENT_ALIASES.kvdbs}-b`
    await d.store.createIndex({ index: b, body: { aliases: { [CONTENT_ALIASES.kvdbs]: { is_write_index: true } } } })
    await runBootstrap(d)
    expect(await d.store.resolve(CONTENT_ALIASES.kvdbs)).toEqual([b])
    expect(await d.store.existsIndex({ index: `${CONTENT_ALIASES.kvdbs}-a` })).toBe(false)
  })
})

/** A bootstrapped store whose bootstrap lease another (live) node holds right now. */
async function bootstrappedWithLiveLease() {
  const d = deps()
  await runBootstrap(d)
  await heldLock(d.store, BOOTSTRAP_LEASE_ID)
  return d
}

describe('several nodes', () => {
  test('only one runs the tasks; the other waits and reports the outcome', async () => {
    const store = openEmbeddedStore(':memory:')
    const ran: Record<string, number> = {}
    const count = (t: BootstrapTask): BootstrapTask => ({ name: t.name, run: () => ((ran[t.name] = (ran[t.name] ?? 0) + 1), t.run()) })
    const [a, b] = await Promise.all([
      runBootstrap(deps(store), { wrapTask: count, pollMillis: 5 }),
      runBootstrap(deps(store), { wrapTask: count, pollMillis: 5 }),
    ])
    expect([a.ranHere, b.ranHere].sort()).toEqual([false, true])
    expect(a.status).toBe('ready')
    expect(b.status).toBe('ready')
    expect(Object.values(ran).every((n) => n === 1)).toBe(true)
  })

  test('a waiting node reports failed when the runner fails', async () => {
    const store = openEmbeddedStore(':memory:')
    const d1 = deps(store, { 'plugins.setup.max_retries': 0 })
    const boom = (t: BootstrapTask): BootstrapTask =>
      t.name === `index:${SETTINGS_INDEX}` ? { ...t, run: async () => Promise.reject(new Error('boom')) } : t
    const [a, b] = await Promise.all([
      runBootstrap(d1, { wrapTask: boom, pollMillis: 5 }),
      runBootstrap(deps(store, { 'plugins.setup.max_retries': 0 }), { wrapTask: boom, pollMillis: 5 }),
    ])
    expect([a.status, b.status]).toEqual(['failed', 'failed'])
    expect([a.ranHere, b.ranHere].sort()).toEqual([false, true])
  })

  test('a stale lease left by a dead node is taken over', async () => {
    const d = deps()
    await d.store.createIndex({
      index: RESOURCE_LOCKS_INDEX,
      body: { mappings: { dynamic: 'strict', properties: { acquired_at: { type: 'long' } } } },
    })
    await heldLock(d.store, BOOTSTRAP_LEASE_ID, { ageMillis: 11 * 60_000 })
    const r = await runBootstrap(d, { pollMillis: 5 })
    expect(r).toMatchObject({ status: 'ready', ranHere: true })
  })

  test('a node stopping while it waits for a live lease (a node killed mid-bootstrap) stops waiting at once', async () => {
    const d = await bootstrappedWithLiveLease()
    const stopping = new AbortController()
    const started = performance.now()
    // Polls once a minute: only the stop can end this wait within the test.
    const waiting = runBootstrap(d, { pollMillis: 60_000, signal: stopping.signal })
    await Bun.sleep(20)
    stopping.abort()
    expect(await waiting).toMatchObject({ status: 'stopped', ranHere: false })
    expect(performance.now() - started).toBeLessThan(5_000)
  })

  test('a fresh lease held by another node makes this one wait', async () => {
    const d = await bootstrappedWithLiveLease()
    let polls = 0
    const waiting = runBootstrap(d, {
      pollMillis: 1,
      sleep: async () => {
        // The other node finishes on our third look.
        if (++polls === 3) await d.store.delete({ index: RESOURCE_LOCKS_INDEX, id: BOOTSTRAP_LEASE_ID, refresh: true })
      },
    })
    const r = await waiting
    expect(r).toMatchObject({ status: 'ready', ranHere: false })
    expect(polls).toBe(3)
    const marker = await d.store.get({ index: SETUP_STATUS_INDEX, id: SETUP_STATUS_DOC_ID })
    expect(marker.found && marker._source?.status).toBe('ready')
  })
})

describe('lifecycle policies', () => {
  const ageOf = async (store: Store, id: string) => {
    const p = (await store.getLifecyclePolicy({ id })).policy
    return p.states.find((s) => s.name === 'hot')!.transitions![0].conditions!.min_index_age
  }

  test('the bootstrap writes the six policies through the store, the boot time stamped in each template', async () => {
    const d = deps(undefined)
    const now = Date.parse('2026-09-09T13:50:39.861Z')
    await runBootstrap({ ...d, now: () => now })
    const listed = await d.store.getLifecyclePolicies({ size: 100 })
    expect(listed.policies.map((p) => p._id)).toEqual(LIFECYCLE_POLICIES.map((p) => p.id).sort())
    for (const p of LIFECYCLE_POLICIES) {
      const stored = (await d.store.getLifecyclePolicy({ id: p.id })).policy
      expect(stored.ism_template).toEqual([{ index_patterns: p.ismPatterns, priority: 0, last_updated_time: now }])
      expect(await ageOf(d.store, p.id)).toBe(p.deleteAfter)
    }
  })

  test("a second bootstrap rewrites an operator's edit of a shipped policy and leaves the operator's own policies alone", async () => {
    const d = deps()
    await runBootstrap(d)
    const current = await d.store.getLifecyclePolicy({ id: 'stream-findings-policy' })
    const edited = structuredClone(current.policy)
    edited.states[0].transitions![0].conditions = { min_index_age: '365d' }
    await d.store.putLifecyclePolicy({
      id: 'stream-findings-policy',
      body: { policy: edited },
      if_seq_no: current._seq_no,
      if_primary_term: current._primary_term,
    })
    const own = structuredClone(edited)
    own.ism_template = [{ index_patterns: ['svc-findings-v5-security'], priority: 10 }]
    await d.store.putLifecyclePolicy({ id: 'operator-findings', body: { policy: own } })
    expect(await ageOf(d.store, 'stream-findings-policy')).toBe('365d')

    await runBootstrap(d)
    const after = await d.store.getLifecyclePolicy({ id: 'stream-findings-policy' })
    expect(after._version).toBe(current._version + 2)
    expect(await ageOf(d.store, 'stream-findings-policy')).toBe('90d')
    expect(await ageOf(d.store, 'operator-findings')).toBe('365d')
  })

  test('a policy someone deleted is created again', async () => {
    const d = deps()
    await runBootstrap(d)
    await d.store.deleteLifecyclePolicy({ id: 'stream-metrics-policy' })
    await expect(d.store.getLifecyclePolicy({ id: 'stream-metrics-policy' })).rejects.toBeInstanceOf(PolicyNotFound)
    expect((await runBootstrap(d)).status).toBe('ready')
    expect(await ageOf(d.store, 'stream-metrics-policy')).toBe('30d')
  })

  test('a write that loses to a concurrent one reads again and wins the next round', async () => {
    const inner = openEmbeddedStore(':memory:')
    let interfered = 0
    // Another writer gets in between our read and our write, twice.
    const racing = new Proxy(inner, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver)
        if (prop !== 'getLifecyclePolicy') return typeof value === 'function' ? value.bind(target) : value
        return async (params: { id: string }) => {
          const read = await target.getLifecyclePolicy(params)
          if (params.id === 'stream-events-policy' && interfered < 2) {
            interfered++
            await target.putLifecyclePolicy({
              id: params.id,
              body: { policy: read.policy },
              if_seq_no: read._seq_no,
              if_primary_term: read._primary_term,
            })
          }
          return read
        }
      },
    }) as Store
    const d = deps(racing)
    await runBootstrap(deps(inner))
    const before = await inner.getLifecyclePolicy({ id: 'stream-events-policy' })
    const r = await runBootstrap(d)
    expect(r.status).toBe('ready')
    expect(interfered).toBe(2)
    // Two interfering writes, then ours.
    expect((await inner.getLifecyclePolicy({ id: 'stream-events-policy' }))._version).toBe(before._version + 3)
  })

  test('an injected failure of a policy task marks setup failed; later policies, streams and indices are skipped', async () => {
    const d = deps(undefined, { 'plugins.setup.max_retries': 1, 'plugins.setup.backoff': 5 })
    const sleeps: number[] = []
    let calls = 0
    const r = await runBootstrap(d, {
      sleep: async (ms) => void sleeps.push(ms),
      wrapTask: (t) =>
        t.name === 'policy:stream-findings-policy'
          ? {
              ...t,
              run: async () => (
                calls++,
                Promise.reject(new VersionConflict('[stream-findings-policy]: version conflict', '.svc-ism-config'))
              ),
            }
          : t,
    })
    expect(r).toMatchObject({ status: 'failed', failedTask: 'policy:stream-findings-policy' })
    expect(calls).toBe(2)
    expect(sleeps).toEqual([5000])
    expect(r.skipped.slice(0, 3)).toEqual([
      'policy:stream-metrics-policy',
      'policy:stream-active-responses-policy',
      'policy:ai-assistant-sessions-policy',
    ])
    expect(await readSetupStatus(d.store)).toBe('failed')
    const present = (await d.store.getLifecyclePolicies({ size: 100 })).policies.map((p) => p._id).sort()
    expect(present).toEqual(['stream-events-policy', 'stream-raw-events-policy'])
    expect((await d.store.getDataStream()).data_streams).toEqual([])
    expect(await d.store.existsIndex({ index: SETTINGS_INDEX, expand_wildcards: 'all' })).toBe(false)
  })
})

import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { creationLockId } from '../../src/content/resources/creation-lock'
import { CONTENT_ALIASES, RESOURCE_LOCKS_INDEX } from '../../src/setup/indices'
import { createContentManager } from '../../src/content/manager'
import { basic } from '../security/helpers'
import { filterBody, integrationBody, kvdbBody, PREFIX, ruleBody, startHarness, USERS, type Harness } from './harness'
import { heldLock } from '../helpers/locks'

let h: Harness

beforeAll(async () => {
  h = await startHarness({ engine: 'mock' })
})
afterAll(() => h.stop())

const lockDocs = async () => (await h.store.count({ index: RESOURCE_LOCKS_INDEX, expand_wildcards: 'all' })).count

describe('creation limits', () => {
  test('30 parallel creations against a limit of 5 store exactly 5 and refuse the rest', async () => {
    await h.set({ 'plugins.content_manager.max_integrations': 5 })
    const before = (await h.content.repo.count(CONTENT_ALIASES.integrations, 'draft'))!
    expect(before).toBe(0)
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => h.request('POST', `${PREFIX}/integrations`, { body: integrationBody(`parallel-${i}`) })),
    )
    const created = results.filter((r) => r.status === 201)
    const refused = results.filter((r) => r.status !== 201)
    expect(created).toHaveLength(5)
    expect(refused).toHaveLength(25)
    for (const r of refused) {
      // A refusal is either the limit (400) or, under contention, the lock timeout (503); never a 5xx crash.
      expect([400, 503]).toContain(r.status)
      if (r.status === 400) expect(r.body.message).toContain('plugins.content_manager.max_integrations')
      else expect(r.body.message).toContain('Too many concurrent requests')
    }
    expect(refused.some((r) => r.status === 400)).toBe(true)
    expect(await h.content.repo.count(CONTENT_ALIASES.integrations, 'draft')).toBe(5)
    expect((await h.content.repo.policy('draft'))!.document.integrations).toHaveLength(5)
    expect(await lockDocs()).toBe(0)
  })

  test('lowering a limit leaves existing resources alone; 0 blocks every new creation', async () => {
    await h.set({ 'plugins.content_manager.max_integrations': 2 })
    expect(await h.content.repo.count(CONTENT_ALIASES.integrations, 'draft')).toBe(5)
    const over = await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('over') })
    expect(over.status).toBe(400)
    const existing = (await h.content.repo.list(CONTENT_ALIASES.integrations, 'draft'))[0]
    // Updates and deletes are not creations.
    const upd = await h.request('PUT', `${PREFIX}/integrations/${existing._id}`, {
      body: { resource: { ...existing.document, category: 'security' } },
    })
    expect(upd.status).toBe(200)
    expect(await h.content.repo.count(CONTENT_ALIASES.integrations, 'draft')).toBe(5)

    await h.set({ 'plugins.content_manager.max_integrations': 100, 'plugins.content_manager.max_rules': 0 })
    const parent = existing._id
    const title = String((existing.document.metadata as { title: string }).title)
    const zero = await h.request('POST', `${PREFIX}/rules`, { body: ruleBody(parent, 'blocked', title) })
    expect(zero.status).toBe(400)
    expect(zero.body.message).toContain('plugins.content_manager.max_rules')
    await h.set({ 'plugins.content_manager.max_rules': 200 })
    expect((await h.request('POST', `${PREFIX}/rules`, { body: ruleBody(parent, 'allowed', title) })).status).toBe(201)
  })

  test('two nodes sharing the store still store exactly the limit (the lock document, not the node queue, decides)', async () => {
    await h.set({ 'plugins.content_manager.max_kvdbs': 4 })
    const other = createContentManager({
      store: h.store,
      settings: h.settings,
      security: h.security,
      log: h.log,
      now: Date.now,
      journal: h.journal,
    })
    const admin = await h.security.authenticate(
      new Request('http://x/', { headers: { authorization: basic('admin', USERS.admin.password) } }),
    )
    const parent = (await h.content.repo.list(CONTENT_ALIASES.integrations, 'draft'))[0]
    const attempts = Array.from({ length: 20 }, (_, i) => {
      const node = i % 2 === 0 ? h.content : other
      return node.resources.create('kvdb', kvdbBody(parent._id, `kv-${i}`), admin).then(
        () => 201,
        (e: { status?: number }) => e.status ?? 500,
      )
    })
    const statuses = await Promise.all(attempts)
    expect(statuses.filter((s) => s === 201)).toHaveLength(4)
    expect(statuses.every((s) => s === 201 || s === 400 || s === 503)).toBe(true)
    expect(await h.content.repo.count(CONTENT_ALIASES.kvdbs, 'draft')).toBe(4)
    expect(((await h.content.repo.getById(CONTENT_ALIASES.integrations, parent._id))!.document.kvdbs as string[]).length).toBe(4)
    expect(await lockDocs()).toBe(0)
  })

  test('filters are limited per space', async () => {
    await h.set({ 'plugins.content_manager.max_filters': 1 })
    await h.content.repo.put(CONTENT_ALIASES.policies, 'standard-policy', {
      document: { id: 'std-policy', metadata: { title: 'Standard' }, integrations: [], filters: [], enrichments: [], enabled: true },
      hash: { sha256: 'x' },
      space: { name: 'standard' },
    })
    expect((await h.request('POST', `${PREFIX}/filters`, { body: filterBody('draft', 'filter/a/0') })).status).toBe(201)
    expect((await h.request('POST', `${PREFIX}/filters`, { body: filterBody('draft', 'filter/b/0') })).status).toBe(400)
    expect((await h.request('POST', `${PREFIX}/filters`, { body: filterBody('standard', 'filter/c/0') })).status).toBe(201)
    expect((await h.request('POST', `${PREFIX}/filters`, { body: filterBody('standard', 'filter/d/0') })).status).toBe(400)
    await h.set({ 'plugins.content_manager.max_filters': 100 })
  })
})

describe('the creation lock', () => {
  const lockId = creationLockId('integration', 'draft')

  test('is a name-based UUID per (type, space)', () => {
    expect(lockId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-3[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(creationLockId('integration', 'draft')).toBe(lockId)
    expect(creationLockId('rule', 'draft')).not.toBe(lockId)
    expect(creationLockId('filter', 'standard')).not.toBe(creationLockId('filter', 'draft'))
  })

  test('a fresh lock held elsewhere makes creation give up with 503 after max_retries attempts', async () => {
    await h.set({
      'plugins.content_manager.resource_lock.max_retries': 3,
      'plugins.content_manager.resource_lock.retry_backoff_millis': 10,
    })
    await heldLock(h.store, lockId)
    try {
      const r = await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('while-locked') })
      expect(r).toMatchObject({ status: 503, body: { status: 503 } })
      expect(r.body.message).toContain('Too many concurrent requests are creating')
      expect(await h.content.repo.findByTitle(CONTENT_ALIASES.integrations, 'draft', 'while-locked')).toEqual([])
      // The foreign lock is not ours to release.
      expect(await lockDocs()).toBe(1)
    } finally {
      await h.store.delete({ index: RESOURCE_LOCKS_INDEX, id: lockId, refresh: true })
    }
  })

  test('a lock left by a dead holder is stolen once older than the threshold, and the steal is journaled', async () => {
    await h.set({
      'plugins.content_manager.resource_lock.stale_threshold_millis': 5000,
      'plugins.content_manager.resource_lock.max_retries': 3,
    })
    await heldLock(h.store, lockId, { ageMillis: 6000 })
    const r = await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('after-steal') })
    expect(r.status).toBe(201)
    expect(await lockDocs()).toBe(0)
    const kinds = h.journal.entries('lock.', 10).map((e) => `${e.kind} ${e.subject}`)
    expect(kinds.slice(0, 2)).toEqual(['lock.release integration/draft', 'lock.steal integration/draft'])
  })

  test('every acquire and release is journaled, and the lock index is empty when no creation runs', async () => {
    const before = h.journal.entries('lock.', 10_000).length
    expect((await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('journaled') })).status).toBe(201)
    const fresh = h.journal.entries('lock.', 10_000).slice(0, h.journal.entries('lock.', 10_000).length - before)
    expect(fresh.map((e) => e.kind).reverse()).toEqual(['lock.acquire', 'lock.release'])
    expect(fresh[0].detail).toMatchObject({ index: RESOURCE_LOCKS_INDEX, id: lockId })
    expect(await lockDocs()).toBe(0)
  })

  test('a failed creation releases the lock too', async () => {
    const dup = await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('journaled') })
    expect(dup.status).toBe(400)
    expect(await lockDocs()).toBe(0)
  })

  test('a deleted lock index is recreated (at start-up, and on demand)', async () => {
    await h.store.deleteIndex({ index: RESOURCE_LOCKS_INDEX, expand_wildcards: 'all' })
    await h.content.start()
    expect(await h.store.existsIndex({ index: RESOURCE_LOCKS_INDEX, expand_wildcards: 'all' })).toBe(true)
    const mapping = await h.store.getMapping({ index: RESOURCE_LOCKS_INDEX, expand_wildcards: 'all' })
    expect(mapping[RESOURCE_LOCKS_INDEX].mappings).toMatchObject({ dynamic: 'strict', properties: { acquired_at: { type: 'long' } } })
    await h.store.deleteIndex({ index: RESOURCE_LOCKS_INDEX, expand_wildcards: 'all' })
    expect((await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('no-lock-index') })).status).toBe(201)
    expect(await lockDocs()).toBe(0)
  })
})

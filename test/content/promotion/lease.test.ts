// The promotion lease on its own, over the embedded store: the wait bound and the release on failure.
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { RESOURCE_LOCKS_INDEX } from '../../../src/content/indices'
import { lockLeases } from '../../../src/content/resource-locks'
import { promotionLeaseId, withPromotionLease } from '../../../src/content/promotion/lease'
import { ApiError } from '../../../src/http/errors'
import { Journal } from '../../../src/journal/journal'
import { EmbeddedStore } from '../../../src/store/embedded/store'

let store: EmbeddedStore
let journal: Journal
let dir: string
const settings = { waitMillis: 120, backoffMillis: 20, staleMillis: 60_000 }

beforeEach(() => {
  store = new EmbeddedStore(':memory:')
  dir = mkdtempSync(join(tmpdir(), 'promotion-lease-'))
  journal = new Journal(join(dir, 'journal.db'))
})
afterEach(async () => {
  await store.close()
  journal.close()
  rmSync(dir, { recursive: true, force: true })
})

const deps = () => ({ journal, leases: lockLeases({ store, now: Date.now }) })

test('a promotion that cannot get the lease within the wait bound answers 503 and runs nothing', async () => {
  let ran = false
  const started = Date.now()
  await withPromotionLease(deps(), settings, 'test', async () => {
    const inner = withPromotionLease(deps(), settings, 'test', async () => {
      ran = true
    })
    const error = await inner.catch((e) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ status: 503, message: "Another promotion into the 'test' space is in progress. Please retry." })
  })
  expect(ran).toBe(false)
  expect(Date.now() - started).toBeGreaterThanOrEqual(settings.waitMillis)
})

test('the lease is released when the promotion fails, and the next one proceeds at once', async () => {
  const failed = withPromotionLease(deps(), settings, 'custom', async () => {
    throw new Error('boom')
  })
  await expect(failed).rejects.toThrow('boom')
  expect((await store.get({ index: RESOURCE_LOCKS_INDEX, id: promotionLeaseId('custom') })).found).toBe(false)
  expect(await withPromotionLease(deps(), settings, 'custom', async () => 'second')).toBe('second')
  expect(journal.entries('lock.').map((e) => [e.kind, e.subject])).toEqual([
    ['lock.release', 'promotion/custom'],
    ['lock.acquire', 'promotion/custom'],
    ['lock.release', 'promotion/custom'],
    ['lock.acquire', 'promotion/custom'],
  ])
})

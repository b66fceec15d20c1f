// Issue 12, item 5: password guessing costs the node at most what the limits allow. Real HTTP
// against the full composition; bcrypt runs are read from the security layer's counters.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { MAX_CONCURRENT_HASH_CHECKS, type SecurityService } from '../../src/security/service'
import { startTestServer, type TestServer } from '../helpers/server'

const MAX_ATTEMPTS = 5
let s: TestServer
let security: SecurityService

beforeAll(async () => {
  s = await startTestServer({ settings: { 'security.auth_failures.max_attempts': MAX_ATTEMPTS } })
  security = s.server.app.deps.security as SecurityService
})

afterAll(async () => {
  await s?.stop()
})

test('40 parallel wrong passwords from one address: the attempts beyond the limit get 429 without running bcrypt', async () => {
  const before = security.stats.verifications
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, i) => s.request('GET', '/', { user: { name: 'admin', password: `guess-${i}` } })),
  )
  const statuses = answers.map((a) => a.status)
  expect(statuses.filter((x) => x !== 401 && x !== 429)).toEqual([])
  expect(statuses.filter((x) => x === 401).length).toBeLessThanOrEqual(MAX_ATTEMPTS)
  expect(statuses.filter((x) => x === 429).length).toBeGreaterThanOrEqual(40 - MAX_ATTEMPTS)
  expect(security.stats.verifications - before).toBeLessThanOrEqual(MAX_ATTEMPTS)
  for (const a of answers.filter((x) => x.status === 429)) expect(Number(a.headers.get('retry-after'))).toBeGreaterThan(0)
  // The address is now blocked for everyone, the right password included, still without bcrypt.
  const right = await s.request('GET', '/', { user: { name: 'admin', password: 'Admin-pass-1' } })
  expect(right.status).toBe(429)
  expect(security.stats.verifications - before).toBeLessThanOrEqual(MAX_ATTEMPTS)
})

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from './server'

let s: TestServer
beforeAll(async () => {
  s = await startTestServer({ users: [{ name: 'alice', password: 'Alice-pass-1', backend_roles: ['analyst'] }] })
})
afterAll(() => s.stop())

test('the test server answers the admin and a configured user, and refuses a wrong password', async () => {
  expect((await s.request('GET', '/')).status).toBe(200)
  const who = await s.request('GET', '/_plugins/_security/authinfo', { user: { name: 'alice', password: 'Alice-pass-1' } })
  expect(who.status).toBe(200)
  expect(who.body.user_name).toBe('alice')
  expect(who.body.backend_roles).toEqual(['analyst'])
  expect((await s.request('GET', '/', { user: { name: 'alice', password: 'nope' } })).status).toBe(401)
})

test('start-up work is done when the helper returns: the setup marker is ready', async () => {
  const r = await s.request('GET', '/.svc-setup-status/_search')
  expect(r.status).toBe(200)
  expect(r.body.hits.hits[0]._source.status).toBe('ready')
})

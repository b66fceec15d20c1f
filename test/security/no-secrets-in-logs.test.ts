// No password, hash or CTI token reaches the log, whatever the request does with it.
import { expect, test } from 'bun:test'
import { startCtiServer } from '../fixtures/cti/server'
import { startTestServer } from '../helpers/server'

test('passwords, bcrypt hashes and the CTI token never appear in the log, even at debug level', async () => {
  const lines: string[] = []
  const cti = startCtiServer()
  const token = 'cti-token-Zq7pW3xY9'
  const userPassword = 'Us3r-Secret-pass'
  const wrongPassword = 'Wr0ng-Guess-pass'
  const s = await startTestServer({
    logLines: lines,
    users: [{ name: 'carol', password: userPassword }],
    settings: { 'log.level': 'debug', 'plugins.content_manager.cti.api': cti.base },
  })
  try {
    await s.request('GET', '/', { user: { name: 'carol', password: wrongPassword } })
    await s.request('GET', '/', { user: { name: 'carol', password: userPassword } })
    await s.request('GET', '/', { user: { name: 'nobody', password: wrongPassword } })
    await s.request('POST', '/_plugins/_content_manager/subscription', { body: { access_token: token } })
    await s.request('GET', '/_plugins/_content_manager/subscription')
    // The token is stored, but no read path hands it out.
    const direct = await s.request('GET', '/.svc-internal-state/_search')
    expect(direct.status).toBe(403)
    expect(direct.text).not.toContain(token)
    await s.request('PUT', '/_cluster/settings', { body: { persistent: { 'storage.platform.password': userPassword } } })
    await s.request('POST', '/_plugins/_setup/ai_assistant/sessions', {
      body: { title: token, messages: [{ content: userPassword }] },
      user: { name: 'carol', password: wrongPassword },
    })
  } finally {
    await s.stop()
    await cti.stop()
  }
  // The log did record these events (so the check below looks at real lines).
  expect(lines.some((l) => l.includes('authentication failed'))).toBe(true)
  const all = lines.join('\n')
  for (const secret of [token, btoa(token), userPassword, wrongPassword, s.admin.password, '$2b$04$']) {
    expect(all).not.toContain(secret)
  }
})

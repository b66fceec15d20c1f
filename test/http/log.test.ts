import { expect, test } from 'bun:test'
import { createLogger } from '../../src/http/log'

test('log lines are one JSON object each, secrets masked at any depth, below-level lines dropped', () => {
  const lines: string[] = []
  const log = createLogger({ level: 'info', write: (l) => lines.push(l) })
  log.debug('hidden')
  log.info('login', { user: 'bob', password: 'hunter2', nested: { access_token: 'tok-123', ok: 1 } })
  log.child({ module: 'cti' }).warn('retry', { authorization: 'Basic abc' })
  expect(lines.length).toBe(2)
  const [a, b] = lines.map((l) => JSON.parse(l))
  expect(a.msg).toBe('login')
  expect(a.user).toBe('bob')
  expect(a.nested.ok).toBe(1)
  expect(b.module).toBe('cti')
  const all = lines.join('\n')
  for (const secret of ['hunter2', 'tok-123', 'Basic abc']) expect(all).not.toContain(secret)
})

// The Engine double knows the whole common schema svc-ext ships (issue 29 item 8c), over real HTTP:
// a realistic decoder (thread, target user and syslog fields the old slice lacked) is accepted,
// promoted and run by logtest, while a field outside the schema is still refused.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startEngineServer, type EngineServer } from '../../fixtures/engine/server'
import { startTestServer, type TestServer } from '../../helpers/server'
import { decoderBody } from '../harness'

const CM = '/_plugins/_content_manager'
let engine: EngineServer
let s: TestServer
let integration = ''

beforeAll(async () => {
  engine = startEngineServer()
  s = await startTestServer({
    logLines: [],
    settings: { 'plugins.content_manager.engine.mock': false, 'plugins.content_manager.engine.socket_path': engine.socketPath },
  })
  const r = await s.request('POST', `${CM}/integrations`, {
    body: { resource: { metadata: { title: 'win-threads', author: 'ACME' }, category: 'applications' } },
  })
  expect(r.status).toBe(201)
  integration = r.body.message
})
afterAll(async () => {
  await s?.stop()
  await engine?.stop()
})

const decoder = (name: string, pattern: string) =>
  decoderBody(integration, name, {
    metadata: { title: name, author: 'ACME' },
    'parse|event.original': [pattern],
    normalize: [{ map: [{ 'log.syslog.appname': 'winlogbeat' }] }],
  })

describe('the Engine double checks decoders against the shipped schema', () => {
  test('a decoder parsing process.thread.name and other fields of the schema is accepted, promoted and run', async () => {
    const created = await s.request('POST', `${CM}/decoders`, {
      body: decoder('decoder/win-threads/0', '<process.pid> <process.thread.name> <process.thread.id> <user.target.name>'),
    })
    expect({ status: created.status, body: created.body }).toMatchObject({ status: 201, body: { status: 201 } })
    const preview = await s.request('GET', `${CM}/promote?space=draft`)
    const promoted = await s.request('POST', `${CM}/promote`, { body: { space: 'draft', changes: preview.body.changes } })
    expect({ status: promoted.status, body: promoted.body }).toMatchObject({ status: 200 })

    const r = await s.request('POST', `${CM}/logtest/normalization`, {
      body: { space: 'test', queue: 1, location: 'winlog', event: '4242 worker-3 4625 alice', trace_level: 'NONE' },
    })
    expect(r.status).toBe(200)
    expect(r.body.message.output).toMatchObject({
      process: { pid: 4242, thread: { name: 'worker-3', id: 4625 } },
      log: { syslog: { appname: 'winlogbeat' } },
      user: { target: { name: 'alice' } },
    })
  })

  test('a field outside the schema is still refused', async () => {
    const r = await s.request('POST', `${CM}/decoders`, { body: decoder('decoder/win-threads/1', '<process.thread.nickname>') })
    expect(r.status).toBe(400)
    expect(JSON.stringify(r.body)).toContain('process.thread.nickname')
  })
})

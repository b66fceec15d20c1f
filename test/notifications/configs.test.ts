// The Notifications channel config API over real HTTP (reference 2.1, 2.2): create, get, list with
// the peer's filters, update, delete, the test send, 4xx answers for bad input, and secrets masked
// for readers without the update permission.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startReceiver, type Receiver } from '../fixtures/webhook/receiver'
import { createLogger } from '../../src/http/log'
import { type AlertingServer, detectorWith, eventually, linuxRules, NOTIFY, startAlertingServer } from './harness'

let s: AlertingServer
let receiver: Receiver

beforeAll(async () => {
  s = await startAlertingServer({ 'opensearch.notifications.core.allowed_config_types': 'webhook,slack,microsoft_teams' })
  receiver = startReceiver()
})
afterAll(async () => {
  await s.stop()
  await receiver.stop()
})

const create = (body: unknown, user = 'admin') => s.request('POST', `${NOTIFY}/configs`, { body, user })

describe('configs', () => {
  test('create, get, update, delete', async () => {
    const c = await create({
      config_id: 'ops-hook',
      config: {
        name: 'Ops',
        config_type: 'webhook',
        webhook: { url: `${receiver.url}/ops?token=s3cr3t`, header_params: { Authorization: 'Bearer abc' }, method: 'GET' },
      },
    })
    expect(c.status).toBe(200)
    expect(c.body).toEqual({ config_id: 'ops-hook' })
    const g = await s.request('GET', `${NOTIFY}/configs/ops-hook`)
    expect(g.status).toBe(200)
    expect(g.body).toMatchObject({ start_index: 0, total_hits: 1, total_hit_relation: 'eq' })
    expect(g.body.config_list[0]).toMatchObject({
      config_id: 'ops-hook',
      config: {
        name: 'Ops',
        description: '',
        is_enabled: true,
        config_type: 'webhook',
        webhook: { url: `${receiver.url}/ops?token=s3cr3t`, method: 'POST' },
      },
    })
    expect(typeof g.body.config_list[0].created_time_ms).toBe('number')

    expect(
      (await create({ config_id: 'ops-hook', config: { name: 'x', config_type: 'webhook', webhook: { url: receiver.url } } })).status,
    ).toBe(409)
    const u = await s.request('PUT', `${NOTIFY}/configs/ops-hook`, {
      body: { config: { name: 'Ops 2', config_type: 'webhook', is_enabled: false, webhook: { url: `${receiver.url}/ops2` } } },
    })
    expect(u.body).toEqual({ config_id: 'ops-hook' })
    expect((await s.request('GET', `${NOTIFY}/configs/ops-hook`)).body.config_list[0].config).toMatchObject({
      name: 'Ops 2',
      is_enabled: false,
    })
    const change = await s.request('PUT', `${NOTIFY}/configs/ops-hook`, {
      body: { config: { name: 'x', config_type: 'slack', slack: { url: receiver.url } } },
    })
    expect(change.status).toBe(409)
    expect(
      (
        await s.request('PUT', `${NOTIFY}/configs/nope`, {
          body: { config: { name: 'x', config_type: 'slack', slack: { url: receiver.url } } },
        })
      ).status,
    ).toBe(404)

    const d = await s.request('DELETE', `${NOTIFY}/configs/ops-hook`)
    expect(d.body).toEqual({ delete_response_list: { 'ops-hook': 'OK' } })
    expect((await s.request('GET', `${NOTIFY}/configs/ops-hook`)).status).toBe(404)
    expect((await s.request('DELETE', `${NOTIFY}/configs/ops-hook`)).status).toBe(404)
    expect((await s.request('DELETE', `${NOTIFY}/configs`)).status).toBe(400)
  })

  test('bad input: unknown type, e-mail, type/data mismatch, bad URL, bad id, unknown key, type not allowed', async () => {
    const cases: Array<[unknown, string]> = [
      [{ config: { name: 'x', config_type: 'pager', webhook: { url: receiver.url } } }, 'Unknown config_type [pager]'],
      [{ config: { name: 'x', config_type: 'email', email: { email_account_id: 'a' } } }, 'not supported by svc-ext'],
      [{ config: { name: 'x', config_type: 'slack', webhook: { url: receiver.url } } }, "ConfigType: slack and data doesn't match"],
      [{ config: { name: 'x', config_type: 'webhook', webhook: { url: 'ftp://example.org/x' } } }, 'must be http or https'],
      [{ config: { name: 'x', config_type: 'webhook', webhook: { url: 'not a url' } } }, 'Invalid URL'],
      [
        { config_id: 'bad id!', config: { name: 'x', config_type: 'webhook', webhook: { url: receiver.url } } },
        'Invalid notification config: field [config_id]',
      ],
      [
        { config: { name: 'x', config_type: 'webhook', webhook: { url: receiver.url }, colour: 1 } },
        'Invalid notification config: field [config.colour]',
      ],
      [{ config: { name: 'x', config_type: 'chime', chime: { url: receiver.url } } }, 'not allowed on this cluster'],
    ]
    for (const [body, message] of cases) {
      const r = await create(body)
      expect({ status: r.status, body: r.body.status, has: String(r.body.message).includes(message) }).toEqual({
        status: 400,
        body: 400,
        has: true,
      })
    }
    expect((await s.request('POST', `${NOTIFY}/configs`, { body: 'not json' })).status).toBe(400)
  })

  test('list: paging, sort, filters; 406 for an unknown sort field, 400 for an unknown parameter', async () => {
    for (const [id, name, type] of [
      ['l-1', 'alpha hook', 'webhook'],
      ['l-2', 'beta chat', 'slack'],
      ['l-3', 'gamma teams', 'microsoft_teams'],
    ])
      expect(
        (
          await create({
            config_id: id,
            config: { name, config_type: type, description: `${name} desc`, [type]: { url: `${receiver.url}/${id}` } },
          })
        ).status,
      ).toBe(200)
    const list = async (q: string) => (await s.request('GET', `${NOTIFY}/configs?${q}`)).body
    expect((await list('config_id_list=l-1,l-3&sort_field=config_id&sort_order=asc')).config_list.map((c: any) => c.config_id)).toEqual([
      'l-1',
      'l-3',
    ])
    expect((await list('config_type=slack')).config_list.map((c: any) => c.config_id)).toEqual(['l-2'])
    expect((await list('name=gamma')).config_list.map((c: any) => c.config_id)).toEqual(['l-3'])
    expect((await list('text_query=beta')).config_list.map((c: any) => c.config_id)).toEqual(['l-2'])
    const page = await list('sort_field=name&sort_order=desc&from_index=1&max_items=1')
    expect(page).toMatchObject({ start_index: 1, total_hits: 3, total_hit_relation: 'eq' })
    expect(page.config_list.map((c: any) => c.config_id)).toEqual(['l-2'])
    expect((await list(`last_updated_time_ms=${Date.now() + 60_000}..`)).total_hits).toBe(0)
    expect((await s.request('GET', `${NOTIFY}/configs?sort_field=colour`)).status).toBe(406)
    expect((await s.request('GET', `${NOTIFY}/configs?colour=red`)).status).toBe(400)
    const multi = await s.request('DELETE', `${NOTIFY}/configs?config_id_list=l-1,l-2,l-3`)
    expect(multi.body).toEqual({ delete_response_list: { 'l-1': 'OK', 'l-2': 'OK', 'l-3': 'OK' } })
  })

  test('secrets are masked for a reader without the update permission, and kept when sent back masked', async () => {
    await create({
      config_id: 'secret',
      config: {
        name: 'secret',
        config_type: 'webhook',
        webhook: { url: `${receiver.url}/path/tok-999?key=k`, header_params: { 'X-Api-Key': 'key-123' } },
      },
    })
    const seen = await s.request('GET', `${NOTIFY}/configs/secret`, { user: 'reader' })
    expect(seen.status).toBe(200)
    const hook = seen.body.config_list[0].config.webhook
    expect(hook.url).toBe(`${receiver.url}/*****`)
    expect(hook.header_params).toEqual({ 'X-Api-Key': '*****' })
    expect(seen.text).not.toContain('tok-999')
    expect(seen.text).not.toContain('key-123')
    const listed = await s.request('GET', `${NOTIFY}/configs`, { user: 'reader' })
    expect(listed.text).not.toContain('key-123')
    expect((await create({ config: { name: 'x', config_type: 'webhook', webhook: { url: receiver.url } } }, 'reader')).status).toBe(403)
    // An admin updating with what a reader saw keeps the secrets.
    await s.request('PUT', `${NOTIFY}/configs/secret`, { body: { config: { ...seen.body.config_list[0].config, name: 'renamed' } } })
    const after = (await s.request('GET', `${NOTIFY}/configs/secret`)).body.config_list[0].config
    expect(after.webhook).toEqual({ url: `${receiver.url}/path/tok-999?key=k`, header_params: { 'X-Api-Key': 'key-123' }, method: 'POST' })
    expect(after.name).toBe('renamed')
  })
})

describe('feature/test', () => {
  test('sends the peer test message and answers its delivery status', async () => {
    await create({ config_id: 'test-hook', config: { name: 'T', config_type: 'slack', slack: { url: `${receiver.url}/test-slack` } } })
    const r = await s.request('POST', `${NOTIFY}/feature/test/test-hook`)
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      event_source: { title: 'Test Message Title-test-hook', reference_id: 'test-hook', severity: 'info', tags: [] },
      status_list: [
        {
          config_id: 'test-hook',
          config_type: 'slack',
          config_name: 'T',
          email_recipient_status: [],
          delivery_status: { status_code: '200', status_text: '{"ok":true}' },
        },
      ],
    })
    const got = receiver.received.find((x) => x.path === '/test-slack')!
    expect(JSON.parse(got.body)).toEqual({ text: 'Test Message Title-test-hook\n\nTest message content body for config id test-hook' })
  })

  test('a failing channel answers its status; a muted one LOCKED; an unknown one 404', async () => {
    await create({ config_id: 'failing', config: { name: 'F', config_type: 'webhook', webhook: { url: `${receiver.url}/failing` } } })
    receiver.fail({ status: 500 })
    const r = await s.request('POST', `${NOTIFY}/feature/test/failing`)
    expect(r.status).toBe(500)
    expect(r.body.status).toBe(500)
    expect(r.body.event_status_list[0].delivery_status.status_text).toContain('500')
    await create({
      config_id: 'muted',
      config: { name: 'M', config_type: 'webhook', is_enabled: false, webhook: { url: `${receiver.url}/muted` } },
    })
    const m = await s.request('POST', `${NOTIFY}/feature/test/muted`)
    expect(m.status).toBe(500)
    expect(m.body.event_status_list[0].delivery_status).toEqual({ status_code: 'LOCKED', status_text: 'The channel is muted' })
    expect(receiver.received.some((x) => x.path === '/muted')).toBe(false)
    expect((await s.request('POST', `${NOTIFY}/feature/test/none`)).status).toBe(404)
    expect((await s.request('POST', `${NOTIFY}/feature/test/failing`, { user: 'reader' })).status).toBe(403)
  })
})

describe('bounds and secrets', () => {
  test('a host that cannot be connected to fails within the connection timeout, not the socket timeout', async () => {
    // Documentation address space (TEST-NET-1): nothing answers there (unreachable at once, or silent until the timeout).
    await create({ config_id: 'blackhole', config: { name: 'B', config_type: 'webhook', webhook: { url: 'http://192.0.2.1:9/x' } } })
    const started = Date.now()
    const r = await s.request('POST', `${NOTIFY}/feature/test/blackhole`)
    expect(Date.now() - started).toBeLessThan(1400)
    expect(r.status).toBe(500)
    expect(r.body.event_status_list[0].delivery_status.status_text).toContain('could not connect')
  })

  test('with an allow list, only its hosts are reached; a CIDR entry matches the resolved address', async () => {
    const other = await startAlertingServer({ 'plugins.notifications.http.host_allow_list': 'hooks.example.org, 127.0.0.0/30' })
    try {
      const make = (id: string, url: string) =>
        other.request('POST', `${NOTIFY}/configs`, {
          body: { config_id: id, config: { name: id, config_type: 'webhook', webhook: { url } } },
        })
      await make('allowed', `http://localhost:${receiver.port}/allowed`)
      await make('outside', `http://127.0.0.9:${receiver.port}/outside`)
      expect((await other.request('POST', `${NOTIFY}/feature/test/allowed`)).status).toBe(200)
      const refused = await other.request('POST', `${NOTIFY}/feature/test/outside`)
      expect(refused.status).toBe(403)
      expect(refused.body.event_status_list[0].delivery_status.status_text).toBe('Host [127.0.0.9] is not in the allow list')
      expect(receiver.received.some((r) => r.path === '/outside')).toBe(false)
    } finally {
      await other.stop()
    }
  })

  test('channel URLs and header values never reach the log', async () => {
    const lines: string[] = []
    const other = await startAlertingServer({}, { log: createLogger({ level: 'debug', write: (l) => lines.push(l) }) })
    try {
      const hook = { url: `${receiver.url}/tok-path-secret?token=tok-query-secret`, header_params: { 'X-Api-Key': 'hdr-value-secret' } }
      const r = await other.request('POST', `${NOTIFY}/configs`, {
        body: { config_id: 'logged', config: { name: 'L', config_type: 'webhook', webhook: hook } },
      })
      expect(r.status).toBe(200)
      receiver.fail({ status: 500 })
      await other.request('POST', `${NOTIFY}/feature/test/logged`)
      await receiver.down()
      await other.request('POST', `${NOTIFY}/feature/test/logged`)
      receiver.up()
      await linuxRules(other, [{ action: 'sudo', level: 'high' }])
      receiver.failAll({ status: 500 })
      const d = await detectorWith(
        other,
        ['r-sudo'],
        [
          {
            id: 't',
            name: 't',
            severity: '1',
            ids: ['r-sudo'],
            detection_types: ['rules'],
            actions: [{ name: 'a', destination_id: 'logged', message_template: 'm' }],
          },
        ],
      )
      await other.index([{ event: { action: 'sudo' } }])
      await other.run(d)
      await eventually(
        async () => (lines.some((l) => l.includes('notification dead-lettered')) ? true : undefined),
        10_000,
        'dead letter logged',
      )
      expect(lines.some((l) => l.includes('notification delivery failed'))).toBe(true)
      for (const secret of ['tok-path-secret', 'tok-query-secret', 'hdr-value-secret'])
        expect(lines.filter((l) => l.includes(secret))).toEqual([])
      for (const l of lines) expect(() => JSON.parse(l)).not.toThrow()
    } finally {
      receiver.heal()
      receiver.up()
      await other.stop()
    }
  }, 30_000)
})

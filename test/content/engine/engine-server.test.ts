// The Engine test server must behave like the Engine, or tests built on it prove nothing: these
// pin its validation, session and fault-injection behaviour by talking raw HTTP to its socket.
import { describe, expect, test } from 'bun:test'
import { accessLine, decoder, fullPolicy, integration, useEngineServer } from './helpers'

const engine = useEngineServer()

async function post(path: string, body: unknown, method = 'POST') {
  const response = await fetch(`http://localhost${path}`, {
    unix: engine.socketPath,
    method,
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

const validate = (type: string, resource: unknown) => post('/content/validate/resource', { type, resource })

describe('temporary fields', () => {
  const notTemporary = (field: string) => `Field '${field}' is not defined in the common schema and is not a temporary field`

  test.each([
    ['a check key', { check: [{ 'tmp_json.event.action': 'string_equal("x")' }] }, 'tmp_json.event.action'],
    ['a parse capture', { 'parse|event.original': ['<tmp_ip> <user.name>'] }, 'tmp_ip'],
    ['a parse source', { 'parse|tmp.raw': ['<user.name>'] }, 'tmp.raw'],
    ['a map target', { normalize: [{ map: [{ 'tmp.kind': 'event' }] }] }, 'tmp.kind'],
    ['a map reference', { normalize: [{ map: [{ 'event.action': '$tmp.action' }] }] }, 'tmp.action'],
    ['a helper argument', { normalize: [{ check: [{ 'event.kind': 'string_equal($tmp.kind)' }] }] }, 'tmp.kind'],
    ['a string check', { check: "$tmp.os == 'ubuntu'" }, 'tmp.os'],
  ])('an undefined field without `_` in %s is refused with the Engine text', async (_, overrides, field) => {
    const { status, body } = await validate('decoder', decoder(overrides))
    expect(status).toBe(400)
    expect(body.status).toBe('ERROR')
    expect(body.error).toStartWith("Failed to validate resource of type 'decoder': Validation failed for 'decoder': ")
    expect(body.error).toContain(notTemporary(field))
  })

  test('the same fields with `_` everywhere they are used are accepted', async () => {
    const resource = decoder({
      check: [{ '_tmp_json.event.action': 'string_equal("x")' }],
      'parse|event.original': ['<_tmp_ip> <user.name>'],
      normalize: [{ check: [{ 'event.kind': 'string_equal($_tmp.kind)' }], map: [{ 'event.action': '$_tmp_json.event.action' }] }],
    })
    expect(await validate('decoder', resource)).toEqual({ status: 200, body: { status: 'OK' } })
  })

  test('schema fields and definitions need no prefix', async () => {
    const resource = decoder({ definitions: { PORT: '22' }, check: "$host.os.platform == 'ubuntu' AND $PORT == '22'" })
    expect((await validate('decoder', resource)).status).toBe(200)
  })

  test('a filter check expression is checked the same way', async () => {
    const filter = { name: 'filter/prefilter/0', enabled: true, type: 'pre-filter', check: "$tmp.platform == 'ubuntu'" }
    const { status, body } = await validate('filter', filter)
    expect(status).toBe(400)
    expect(body.error).toContain(notTemporary('tmp.platform'))
    expect((await validate('filter', { ...filter, check: "$host.os.platform == 'ubuntu'" })).status).toBe(200)
  })
})

describe('resource shape', () => {
  test.each([
    ['decoder', decoder({ name: 'x' }), "Invalid name 'x'"],
    ['decoder', decoder({ enabled: 'yes' }), 'enabled must be a boolean'],
    ['decoder', decoder({ normalize: [{ map: [{ 'source.port': 'not-a-number' }] }] }), "value does not fit the type of 'source.port'"],
    ['kvdb', { content: 'flat' }, 'content is required and must be an object'],
    ['filter', { name: 'filter/f/0', type: 'middle-filter', check: '$event.kind == "x"' }, "Invalid filter type 'middle-filter'"],
    ['integration', integration({ metadata: { author: 'ACME' } }), 'metadata.title is required'],
    ['integration', integration({ category: '' }), 'category is required'],
    ['rule', {}, "Invalid resource type 'rule'"],
  ])('%s %j is refused: %s', async (type, resource, error) => {
    const answer = await validate(type, resource)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toContain(error)
  })

  test('valid kvdb and integration are accepted', async () => {
    expect((await validate('kvdb', { content: { k: 'v' }, enabled: true })).status).toBe(200)
    expect((await validate('integration', integration())).status).toBe(200)
  })
})

describe('policy import and tester sessions', () => {
  const load = (space: string, full: unknown, load_in_tester = true) =>
    post('/content/validate/policy', { load_in_tester, space, full_policy: full })

  test.each([
    [{ space: 'test' }, 'Missing full policy'],
    [{ space: '  ', full_policy: fullPolicy() }, 'Field /space cannot be empty'],
  ])('%j is refused with %s', async (body, error) => {
    expect(await post('/content/validate/policy', body)).toEqual({ status: 400, body: { status: 'ERROR', error } })
  })

  test.each([
    ['an unknown integration', fullPolicy({ integrations: ['nope'] }), "Integration 'nope'"],
    ['an unknown filter', fullPolicy({ filters: ['f-9'] }), "Filter 'f-9'"],
    ['an unknown root decoder', fullPolicy({ root_decoder: 'd-9' }), "Root decoder 'd-9'"],
    ['a decoder missing from its integration', fullPolicy({}, { decoders: [] }), "Decoder 'd-1'"],
    ['an unknown parent', fullPolicy({}, { decoders: [decoder({ parents: ['decoder/ghost/0'] })] }), "unknown parent 'decoder/ghost/0'"],
    ['an invalid resource', fullPolicy({}, { decoders: [decoder({ check: [{ 'tmp.x': 'exists()' }] })] }), 'not a temporary field'],
  ])('%s fails the import', async (_, full, error) => {
    const answer = await load('test', full)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toContain(error)
    expect(engine.sessions.has('test')).toBe(false)
  })

  test('load_in_tester replaces the session; an empty or disabled policy removes it; draft never loads', async () => {
    expect((await load('test', fullPolicy())).status).toBe(200)
    expect(engine.sessions.get('test')?.resources.decoders).toHaveLength(1)
    await load('test', fullPolicy({ enabled: false }))
    expect(engine.sessions.has('test')).toBe(false)
    await load('test', fullPolicy())
    await load('test', fullPolicy({ integrations: [] }))
    expect(engine.sessions.has('test')).toBe(false)
    await load('draft', fullPolicy(), false)
    expect(engine.sessions.has('draft')).toBe(false)
  })
})

describe('logtest', () => {
  const run = (overrides: Record<string, unknown> = {}) =>
    post('/logtest', { space: 'test', queue: 1, location: '/var/log/app.log', event: accessLine, ...overrides })

  test.each([
    [{ queue: 0 }, 'queue is required and must be non-zero (1..255)'],
    [{ queue: 256 }, 'Invalid queue: 256 (must be 1..255)'],
    [{ trace_level: 'FULL' }, 'Invalid trace level: FULL. Only support: NONE, ASSET_ONLY, ALL'],
    [{ event: '' }, 'event is required and cannot be empty'],
    [{ space: '' }, 'space is required and cannot be empty'],
    [{ metadata: { 'not.a.field': 1 } }, "Field 'not.a.field' is not defined in the common schema"],
    [{ space: 'custom' }, "Session 'custom' does not exist"],
  ])('%j is refused: %s', async (overrides, error) => {
    await post('/content/validate/policy', { load_in_tester: true, space: 'test', full_policy: fullPolicy() })
    const answer = await run(overrides)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toContain(error)
  })

  test('normalises through the loaded decoders and drops temporary fields', async () => {
    await post('/content/validate/policy', { load_in_tester: true, space: 'test', full_policy: fullPolicy() })
    const { status, body } = await run({ metadata: { host: { name: 'web-1' } } })
    expect(status).toBe(200)
    const output = body.result.output
    expect(output.source.ip).toBe('10.0.0.7')
    expect(output.user.name).toBe('alice')
    expect(output.http.response.status_code).toBe(200)
    expect(output.event).toEqual({ original: accessLine, kind: 'event', category: ['web'], action: 'GET' })
    expect(output.host.name).toBe('web-1')
    expect(output.svc).toEqual({
      protocol: { queue: 1, location: '/var/log/app.log' },
      space: { name: 'test' },
      integration: { name: 'app', category: 'applications' },
      decoders: ['decoder/app-access/0'],
    })
    expect(output._when).toBeUndefined()
    expect(body.result.validation).toEqual({ valid: true, errors: [] })
  })

  test('an event no decoder matches is returned undecoded, with traces on request', async () => {
    await post('/content/validate/policy', { load_in_tester: true, space: 'test', full_policy: fullPolicy() })
    const { body } = await run({ event: 'garbage', trace_level: 'ALL' })
    expect(body.result.output.svc.integration).toBeUndefined()
    expect(body.result.asset_traces).toEqual([
      { asset: 'decoder/app-access/0', success: false, traces: ['@check -> success', 'parse|event.original -> failure'] },
    ])
    const assetOnly = await run({ trace_level: 'ASSET_ONLY' })
    expect(assetOnly.body.result.asset_traces).toEqual([{ asset: 'decoder/app-access/0', success: true, traces: [] }])
  })
})

describe('fault injection and recording', () => {
  test('refuseAll limited to a path leaves other paths alone until heal', async () => {
    engine.refuseAll(503, 'busy', '/content/validate/policy')
    expect(await post('/content/validate/policy', {})).toEqual({ status: 503, body: { status: 'ERROR', error: 'busy' } })
    expect(await post('/content/validate/policy', {})).toMatchObject({ status: 503 })
    expect((await validate('kvdb', { content: {} })).status).toBe(200)
    engine.heal()
    expect((await post('/content/validate/policy', {})).body.error).toBe('Missing full policy')
  })

  test('stall delays answers', async () => {
    engine.stall(150)
    const started = performance.now()
    await validate('kvdb', { content: {} })
    expect(performance.now() - started).toBeGreaterThanOrEqual(140)
  })

  test('records every request, including refused and unknown ones', async () => {
    engine.refuseNext(400, 'no')
    await validate('kvdb', { content: {} })
    expect((await post('/nope', {})).status).toBe(404)
    expect((await post('/content/validate/resource', {}, 'PUT')).status).toBe(405)
    expect((await post('/content/validate/resource', '{not json')).body.error).toBe('Invalid JSON body')
    expect(engine.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /content/validate/resource',
      'POST /nope',
      'PUT /content/validate/resource',
      'POST /content/validate/resource',
    ])
    expect(engine.requests[0].body).toEqual({ type: 'kvdb', resource: { content: {} } })
    expect(engine.requests[3].raw).toBe('{not json')
  })

  test('speaks the exact HTTP/1.1 exchange of reference 3.1, including GET with a {} body', async () => {
    const chunks: string[] = []
    const closed = Promise.withResolvers<void>()
    const socket = await Bun.connect({
      unix: engine.socketPath,
      socket: { data: (_, data) => void chunks.push(data.toString()), close: () => closed.resolve(), error: () => closed.resolve() },
    })
    socket.write(
      'GET /content/ioc/state HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\n' +
        'Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
    )
    await closed.promise
    const [head, body] = chunks.join('').split('\r\n\r\n')
    expect(head).toStartWith('HTTP/1.1 200')
    expect(JSON.parse(body)).toEqual({ hash: '', updating: false })
  })

  test('vanish removes the socket and restart brings it back with its sessions', async () => {
    await post('/content/validate/policy', { load_in_tester: true, space: 'test', full_policy: fullPolicy() })
    await engine.vanish()
    expect(await Bun.file(engine.socketPath).exists()).toBe(false)
    engine.restart()
    expect((await post('/logtest', { space: 'test', queue: 1, event: accessLine })).status).toBe(200)
  })
})

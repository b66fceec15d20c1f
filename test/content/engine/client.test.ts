import { describe, expect, test } from 'bun:test'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  createEngineClient,
  EngineRefused,
  EngineTimeout,
  EngineUnavailable,
  engineValidationMessage,
  type EngineClientOptions,
} from '../../../src/content/engine'
import { interpret } from '../../../src/content/engine/transport'
import { startEngineServer } from '../../fixtures/engine/server'
import { accessLine, decoder, fullPolicy, recordingLog, useEngineServer } from './helpers'
import { rejectionOf } from '../../helpers/thrown'

const engine = useEngineServer()

const client = (overrides: Partial<EngineClientOptions> = {}) =>
  createEngineClient({
    socketPath: engine.socketPath,
    mock: false,
    reloadTimeoutMinutes: 10,
    notReadyGraceMinutes: 5,
    log: recordingLog(),
    ...overrides,
  })

describe('resource validation', () => {
  test('sends the reference request over the socket and succeeds on 200', async () => {
    const reply = await client().validateResource('decoder', decoder())
    expect(reply.status).toBe(200)
    // No message/error/result in the Engine's answer: the whole body is the message (reference 3.2).
    expect(JSON.parse(reply.message)).toEqual({ status: 'OK' })
    const [request] = engine.requests
    expect(engine.requests).toHaveLength(1)
    expect(request.method).toBe('POST')
    expect(request.path).toBe('/content/validate/resource')
    expect(request.headers['content-type']).toBe('application/json')
    expect(request.headers.accept).toBe('application/json')
    expect(request.headers.connection).toBe('close')
    expect(request.body).toEqual({ type: 'decoder', resource: decoder() })
  })

  test('an Engine 400 becomes EngineRefused with its status and reason', async () => {
    const error = await rejectionOf(
      EngineRefused,
      client().validateResource('decoder', decoder({ check: [{ 'tmp_json.event.action': 'string_equal("x")' }] })),
    )
    expect(error.status).toBe(400)
    expect(error.reason).toContain("Field 'tmp_json.event.action' is not defined in the common schema and is not a temporary field")
    const message = engineValidationMessage('decoder', error)
    expect(message.startsWith('Engine validation failed')).toBe(true)
    expect(message).toContain('decoder')
    expect(message).toContain('not a temporary field')
  })

  test('an underscore temporary field passes', async () => {
    const reply = await client().validateResource('decoder', decoder({ check: [{ '_tmp_json.event.action': 'string_equal("x")' }] }))
    expect(reply.status).toBe(200)
  })

  test('an injected refusal passes the status and reason on', async () => {
    engine.refuseNext(500, 'internal engine failure')
    const error = await rejectionOf(EngineRefused, client().validateResource('kvdb', { content: {} }))
    expect(error.status).toBe(500)
    expect(error.reason).toBe('internal engine failure')
    // One-shot: the next call is answered normally.
    expect((await client().validateResource('kvdb', { content: {} })).status).toBe(200)
  })
})

describe('policy validation and load', () => {
  test('loads a space with load_in_tester and the full policy', async () => {
    const policy = fullPolicy()
    const reply = await client().validatePolicy('standard', policy)
    expect(reply.status).toBe(200)
    const [request] = engine.requestsTo('/content/validate/policy')
    expect(request.body).toEqual({ load_in_tester: true, space: 'standard', full_policy: policy })
    expect(engine.sessions.get('standard')?.policy.id).toBe('p-1')
  })

  test('draft is validated without loading it into the tester', async () => {
    await client().validatePolicy('draft', fullPolicy())
    expect((engine.requestsTo('/content/validate/policy')[0].body as { load_in_tester: boolean }).load_in_tester).toBe(false)
    expect(engine.sessions.has('draft')).toBe(false)
  })

  test('an import error is refused with the Engine message', async () => {
    const error = await rejectionOf(EngineRefused, client().validatePolicy('test', fullPolicy({ integrations: ['missing'] })))
    expect(error.status).toBe(400)
    expect(error.reason).toContain("Integration 'missing'")
  })

  test('the policy call is bounded by reload_timeout_minutes', async () => {
    engine.stall(400)
    const started = performance.now()
    // 0.002 minutes = 120 ms: the bound comes from the setting, not from a separate knob.
    const error = await rejectionOf(EngineTimeout, client({ reloadTimeoutMinutes: 0.002 }).validatePolicy('standard', fullPolicy()))
    expect(error.message).toBe('Timed out communicating with the Engine.')
    expect(performance.now() - started).toBeLessThan(390)
  })
})

describe('logtest', () => {
  test('returns the normalised output of a loaded space', async () => {
    await client().validatePolicy('test', fullPolicy())
    const reply = await client().logtest({ space: 'test', queue: 1, location: '/var/log/app.log', event: accessLine, trace_level: 'NONE' })
    expect(reply.status).toBe(200)
    expect(reply.result?.validation).toEqual({ valid: true, errors: [] })
    expect(reply.result?.asset_traces).toEqual([])
    const output = reply.result?.output as Record<string, any>
    expect(output.source.ip).toBe('10.0.0.7')
    expect(output.event.action).toBe('GET')
    expect(output.svc.space.name).toBe('test')
    expect(JSON.parse(reply.message)).toEqual(reply.result as object)
  })

  test('Engine validation errors come back as EngineRefused 400 with the Engine text', async () => {
    const error = await rejectionOf(EngineRefused, client().logtest({ space: 'test', queue: 1, location: 'x', event: '  ' }))
    expect(error.status).toBe(400)
    expect(error.reason).toBe('event is required and cannot be empty')
  })

  test('a stalled Engine times out at the per-call limit', async () => {
    engine.stall(500)
    const error = await rejectionOf(
      EngineTimeout,
      client({ timeouts: { logtestMs: 100 } }).logtest({ space: 'test', queue: 1, location: 'x', event: 'e' }),
    )
    expect(error.timeoutMs).toBe(100)
  })
})

describe('IoC calls', () => {
  test('update then state reflects the asynchronous load', async () => {
    const path = join(engine.dir, 'ioc.ndjson')
    writeFileSync(path, '{"type":"ip","value":"10.0.0.1"}\n{"type":"ip","value":"10.0.0.2"}\n')
    const c = client()
    expect(await c.iocState()).toEqual({ hash: '', updating: false })
    expect((await c.iocUpdate(path, 'abc')).status).toBe(200)
    expect((await c.iocState()).updating).toBe(true)
    await Bun.sleep(120)
    expect(await c.iocState()).toEqual({ hash: 'abc', updating: false })
    expect(engine.ioc.lines).toBe(2)
    expect(engine.requestsTo('/content/ioc/state').every((r) => r.method === 'GET')).toBe(true)
    expect(engine.requestsTo('/content/ioc/update')[0].body).toEqual({ path, hash: 'abc' })
  })

  test('a file outside the Engine input root is refused', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'ioc-outside-'))
    writeFileSync(join(outside, 'x.ndjson'), '{}\n')
    const error = await client()
      .iocUpdate(join(outside, 'x.ndjson'), 'h')
      .catch((e) => e)
    rmSync(outside, { recursive: true, force: true })
    expect(error).toBeInstanceOf(EngineRefused)
    expect(error.reason).toContain('outside the input root')
  })
})

describe('unreachable Engine', () => {
  test('a vanished socket gives the spec message and no request reaches anyone', async () => {
    await engine.vanish()
    const error = await rejectionOf(EngineUnavailable, client().validateResource('decoder', decoder()))
    expect(error.kind).toBe('absent')
    expect(error.status).toBe(500)
    expect(error.message).toContain('The Engine cannot be reached because its API socket is not available')
    expect(error.message).toContain(engine.socketPath)
    expect(engineValidationMessage('decoder', error)).toStartWith('Engine validation failed for decoder: The Engine cannot be reached')
    engine.restart()
    expect((await client().validateResource('decoder', decoder())).status).toBe(200)
  })

  test('a stale socket file left by a dead Engine is also unavailable', async () => {
    await engine.vanish({ stale: true })
    const error = await rejectionOf(EngineUnavailable, client().iocState())
    expect(error.kind).toBe('refused')
    expect(error.message).toContain('API socket is not available')
  })

  // Root ignores file modes, so as root the call is made by a child running as `nobody`.
  const asRoot = process.getuid?.() === 0
  test.skipIf(asRoot && !Bun.which('setpriv'))('a socket the process may not open is unavailable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'engine-denied-'))
    const locked = startEngineServer({ dir })
    chmodSync(dir, 0o700)
    if (!asRoot) chmodSync(dir, 0o000)
    try {
      const probe = [process.execPath, join(import.meta.dir, 'denied-probe.ts'), locked.socketPath]
      const command = asRoot ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...probe] : probe
      const child = Bun.spawnSync(command, { stderr: 'pipe' })
      const outcome = JSON.parse(child.stdout.toString())
      expect(outcome).toMatchObject({ name: 'EngineUnavailable', kind: 'denied' })
      expect(outcome.message).toContain('The Engine cannot be reached because its API socket is not available')
      expect(locked.requests).toHaveLength(0)
    } finally {
      chmodSync(dir, 0o700)
      await locked.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('mock mode', () => {
  test('answers every call with the reference mock and never touches the socket', async () => {
    const mock = client({ mock: true, socketPath: join(tmpdir(), 'no-such-engine.sock') })
    expect(await mock.validateResource('decoder', { not: 'valid' })).toMatchObject({ status: 200, message: 'OK' })
    expect((await mock.validatePolicy('test', fullPolicy({ integrations: ['missing'] }))).message).toBe('OK')
    const logtest = await mock.logtest({ space: 'test', queue: 0, event: '' })
    expect(logtest).toMatchObject({ status: 200, message: 'OK' })
    expect(logtest.result).toBeUndefined()
    expect(await mock.iocState()).toEqual({ hash: '', updating: false })
    expect((await mock.iocUpdate('/nowhere', 'h')).status).toBe(200)
    expect(engine.requests).toHaveLength(0)
  })
})

describe('reading Engine answers (reference 3.2)', () => {
  test.each([
    [200, '{"status":"OK","message":"m","error":"e"}', 'm'],
    [400, '{"status":"ERROR","error":"bad"}', 'bad'],
    [200, '{"status":"OK","result":{"a":1}}', '{"a":1}'],
    [200, '{"status":"OK"}', '{"status":"OK"}'],
    [502, 'gateway down', 'gateway down'],
    [200, '', 'Empty body received from Engine'],
  ])('%i %s -> %s', (status, body, message) => {
    expect(interpret(status, body)).toMatchObject({ status, message })
  })

  test('a non-JSON success answer over the socket is passed through raw', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'engine-raw-'))
    const socketPath = join(dir, 'raw.sock')
    const raw = Bun.serve({ unix: socketPath, fetch: () => new Response('OK') })
    try {
      const reply = await client({ socketPath }).logtest({ space: 'test', queue: 1, event: 'e' })
      expect(reply).toMatchObject({ status: 200, message: 'OK', result: undefined })
    } finally {
      await raw.stop(true)
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

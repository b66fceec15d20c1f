import { describe, expect, test } from 'bun:test'
import { createEngineClient, createPolicyReloader, type FullPolicy } from '../../../src/content/engine'
import { fullPolicy, recordingLog, useEngineServer } from './helpers'

const engine = useEngineServer()

function setup(options: { reloadTimeoutMinutes?: number; notReadyGraceMinutes?: number; now?: () => number } = {}) {
  const log = recordingLog()
  const client = createEngineClient({
    socketPath: engine.socketPath,
    mock: false,
    reloadTimeoutMinutes: options.reloadTimeoutMinutes ?? 10,
    notReadyGraceMinutes: options.notReadyGraceMinutes ?? 5,
    log,
  })
  return { log, reloader: createPolicyReloader(client, options.now) }
}

const source =
  (hash: string, full: FullPolicy = fullPolicy()) =>
  async () => ({ hash, fullPolicy: full })
const loads = () => engine.requestsTo('/content/validate/policy')

describe('policy reload loader', () => {
  test('loads once per hash change and never for an unchanged hash', async () => {
    const { reloader } = setup()
    expect(await reloader.reload('standard', source('h1'))).toBe('loaded')
    expect(await reloader.reload('standard', source('h1'))).toBe('unchanged')
    expect(loads()).toHaveLength(1)
    expect(await reloader.reload('standard', source('h2'))).toBe('loaded')
    expect(loads()).toHaveLength(2)
    expect(reloader.loadedHash('standard')).toBe('h2')
    expect(engine.sessions.has('standard')).toBe(true)
    // Spaces are tracked separately.
    expect(await reloader.reload('test', source('h2'))).toBe('loaded')
    expect(loads()).toHaveLength(3)
  })

  test('an Engine refusal is logged, not thrown, and the same hash is retried next time', async () => {
    const { reloader, log } = setup()
    engine.refuseNext(400, 'broken policy', '/content/validate/policy')
    expect(await reloader.reload('standard', source('h1'))).toBe('failed')
    expect(reloader.loadedHash('standard')).toBeUndefined()
    expect(log.lines.find((l) => l.level === 'error')?.fields).toMatchObject({ space: 'standard', error: 'broken policy' })
    expect(await reloader.reload('standard', source('h1'))).toBe('loaded')
    expect(loads()).toHaveLength(2)
  })

  test('a 202 is not a confirmed load and is retried', async () => {
    const { reloader } = setup()
    engine.refuseNext(202, 'accepted', '/content/validate/policy')
    expect(await reloader.reload('standard', source('h1'))).toBe('failed')
    expect(await reloader.reload('standard', source('h1'))).toBe('loaded')
  })

  test('an Engine that is down makes the reload fail quietly with the socket message', async () => {
    const { reloader, log } = setup()
    await engine.vanish()
    expect(await reloader.reload('standard', source('h1'))).toBe('failed')
    expect(String(log.lines.at(-1)?.fields?.error)).toContain('API socket is not available')
  })

  test('a reload is bounded by reload_timeout_minutes', async () => {
    const { reloader, log } = setup({ reloadTimeoutMinutes: 0.002 })
    engine.stall(500)
    const started = performance.now()
    expect(await reloader.reload('standard', source('h1'))).toBe('failed')
    expect(performance.now() - started).toBeLessThan(450)
    expect(log.lines.some((l) => l.level === 'error')).toBe(true)
    // A slow source counts against the same bound.
    engine.heal()
    const slow = async () => (await Bun.sleep(500), { hash: 'h1', fullPolicy: fullPolicy() })
    expect(await reloader.reload('standard', slow)).toBe('failed')
  })

  test('one reload at a time; triggers queued behind it share one run that sees the newest hash', async () => {
    const { reloader } = setup()
    let hash = 'h1'
    const current = async () => ({ hash, fullPolicy: fullPolicy() })
    engine.stall(100)
    const first = reloader.reload('standard', current)
    await Bun.sleep(20)
    hash = 'h2'
    const second = reloader.reload('standard', current)
    const third = reloader.reload('standard', current)
    expect(third).toBe(second)
    const other = reloader.reload('test', current)
    expect(await Promise.all([first, second, third, other])).toEqual(['loaded', 'loaded', 'loaded', 'loaded'])
    expect(loads()).toHaveLength(3)
    expect(reloader.loadedHash('standard')).toBe('h2')
    // Never two loads in flight: each arrived after the previous stalled answer.
    const arrivals = loads().map((r) => r.at)
    for (let i = 1; i < arrivals.length; i++) expect(arrivals[i] - arrivals[i - 1]).toBeGreaterThanOrEqual(90)
  })

  test('unreadable content defers quietly, then warns after the grace period', async () => {
    let clock = 0
    const { reloader, log } = setup({ notReadyGraceMinutes: 5, now: () => clock })
    const notReady = async () => null
    expect(await reloader.reload('standard', notReady)).toBe('deferred')
    clock = 4 * 60_000
    expect(await reloader.reload('standard', notReady)).toBe('deferred')
    expect(log.lines.map((l) => l.level)).toEqual(['debug', 'debug'])
    clock = 5 * 60_000
    expect(await reloader.reload('standard', notReady)).toBe('deferred')
    expect(log.lines.at(-1)).toMatchObject({ level: 'warn', fields: { space: 'standard', waitedMs: 300_000 } })
    expect(loads()).toHaveLength(0)
    // Once content is readable the grace clock starts over.
    expect(await reloader.reload('standard', source('h1'))).toBe('loaded')
    clock = 20 * 60_000
    expect(await reloader.reload('standard', notReady)).toBe('deferred')
    expect(log.lines.at(-1)?.level).toBe('debug')
  })

  test('in mock mode a reload succeeds without a socket', async () => {
    const log = recordingLog()
    const client = createEngineClient({
      socketPath: '/nonexistent.sock',
      mock: true,
      reloadTimeoutMinutes: 1,
      notReadyGraceMinutes: 1,
      log,
    })
    const reloader = createPolicyReloader(client)
    expect(await reloader.reload('standard', source('h1'))).toBe('loaded')
    expect(reloader.loadedHash('standard')).toBe('h1')
    expect(engine.requests).toHaveLength(0)
  })
})

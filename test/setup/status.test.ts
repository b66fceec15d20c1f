import { describe, expect, test } from 'bun:test'
import { SETUP_STATUS, SETUP_STATUS_DOC_ID, SETUP_STATUS_INDEX } from '../../src/setup/indices'
import { readSetupStatus, waitForSetupReady, writeSetupStatus } from '../../src/setup/status'
import { openEmbeddedStore } from '../../src/store/embedded'

function fresh() {
  return openEmbeddedStore(':memory:')
}

describe('setup marker', () => {
  test('written as {status, timestamp}; missing index or document reads as running', async () => {
    const store = fresh()
    expect(await readSetupStatus(store)).toBe('running')
    await store.createIndex({ index: SETUP_STATUS_INDEX, body: SETUP_STATUS.body })
    expect(await readSetupStatus(store)).toBe('running')
    await writeSetupStatus({ store, now: () => Date.parse('2026-09-09T13:50:39.861Z') }, 'ready')
    const doc = await store.get({ index: SETUP_STATUS_INDEX, id: SETUP_STATUS_DOC_ID })
    expect(doc.found && doc._source).toEqual({ status: 'ready', timestamp: '2026-09-09T13:50:39.861Z' })
    expect(await readSetupStatus(store)).toBe('ready')
  })
})

describe('waitForSetupReady', () => {
  test('with the defaults it waits 20, 40, 80, 160 s and then gives up', async () => {
    const sleeps: number[] = []
    const r = await waitForSetupReady({ store: fresh() }, { retries: 4, baseSeconds: 20, sleep: async (ms) => void sleeps.push(ms) })
    expect(r).toBe('timeout')
    expect(sleeps).toEqual([20_000, 40_000, 80_000, 160_000])
  })

  test('ready ends the wait as soon as it is seen', async () => {
    const store = fresh()
    await store.createIndex({ index: SETUP_STATUS_INDEX, body: SETUP_STATUS.body })
    await writeSetupStatus({ store, now: Date.now }, 'running')
    const sleeps: number[] = []
    const r = await waitForSetupReady(
      { store },
      {
        retries: 4,
        baseSeconds: 1,
        sleep: async (ms) => {
          sleeps.push(ms)
          if (sleeps.length === 2) await writeSetupStatus({ store, now: Date.now }, 'ready')
        },
      },
    )
    expect(r).toBe('ready')
    expect(sleeps).toEqual([1000, 2000])
  })

  test("this node's bootstrap ending cuts a backoff short: the marker is read again at once", async () => {
    const store = fresh()
    await store.createIndex({ index: SETUP_STATUS_INDEX, body: SETUP_STATUS.body })
    await writeSetupStatus({ store, now: Date.now }, 'running')
    let bootstrapEnds!: () => void
    const settled = new Promise<void>((r) => (bootstrapEnds = r))
    const sleeps: number[] = []
    const waiting = waitForSetupReady(
      { store },
      // A backoff that would outlast the test: only the bootstrap's end can end the wait.
      { retries: 4, baseSeconds: 20, settled, sleep: (ms) => (sleeps.push(ms), new Promise(() => {})) },
    )
    await Bun.sleep(20)
    await writeSetupStatus({ store, now: Date.now }, 'ready')
    bootstrapEnds()
    expect(await waiting).toBe('ready')
    expect(sleeps).toEqual([20_000])
  })

  test('failed gives up at once, without sleeping', async () => {
    const store = fresh()
    await store.createIndex({ index: SETUP_STATUS_INDEX, body: SETUP_STATUS.body })
    await writeSetupStatus({ store, now: Date.now }, 'failed')
    const sleeps: number[] = []
    expect(await waitForSetupReady({ store }, { retries: 4, baseSeconds: 20, sleep: async (ms) => void sleeps.push(ms) })).toBe('failed')
    expect(sleeps).toEqual([])
  })

  test('zero retries checks once', async () => {
    const sleeps: number[] = []
    expect(await waitForSetupReady({ store: fresh() }, { retries: 0, baseSeconds: 20, sleep: async (ms) => void sleeps.push(ms) })).toBe(
      'timeout',
    )
    expect(sleeps).toEqual([])
  })
})

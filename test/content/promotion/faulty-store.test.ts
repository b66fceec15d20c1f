// The fault-injecting Store decorator the rollback tests rely on: what it counts, and that each
// failure mode applies exactly what it claims to.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { StoreError, VersionConflict } from '../../../src/store/errors'
import { EmbeddedStore } from '../../../src/store/embedded/store'
import { faultyStore, type FaultyStore } from '../../fixtures/faulty-store'

let store: FaultyStore

beforeEach(async () => {
  store = faultyStore(new EmbeddedStore(':memory:'))
  await store.createIndex({ index: 'a' })
  await store.createIndex({ index: 'b' })
})
afterEach(() => store.close())

const ids = async (index: string) => (await store.search({ index, body: { size: 100 } })).hits.hits.map((h) => h._id).sort()
const bulk3 = () =>
  store.bulk({
    body: [
      { index: { _index: 'a', _id: '1' } },
      { v: 1 },
      { index: { _index: 'a', _id: '2' } },
      { v: 2 },
      { delete: { _index: 'a', _id: 'x' } },
    ],
    refresh: true,
  })

describe('faulty store', () => {
  test('passes everything through until armed, and counts nothing then', async () => {
    await store.index({ index: 'a', id: '1', body: { v: 1 }, refresh: true })
    expect(store.mutations).toEqual([])
    expect((await store.get({ index: 'a', id: '1' })).found).toBe(true)
  })

  test('counts calls and bulk items in order and fails the chosen positions', async () => {
    store.arm({ failAt: [2] })
    await store.index({ index: 'a', id: '0', body: { v: 0 }, refresh: true })
    const error = await store.update({ index: 'a', id: '0', body: { doc: { v: 9 } } }).catch((e) => e)
    expect(error).toBeInstanceOf(StoreError)
    expect(error.type).toBe('injected_fault_exception')
    await bulk3()
    await store.delete({ index: 'a', id: '0', refresh: true })
    expect(store.disarm().map((m) => [m.n, m.op, m.id, m.via, m.failed])).toEqual([
      [1, 'index', '0', 'call', false],
      [2, 'update', '0', 'call', true],
      [3, 'index', '1', 'bulk', false],
      [4, 'index', '2', 'bulk', false],
      [5, 'delete', 'x', 'bulk', false],
      [6, 'delete', '0', 'call', false],
    ])
    // The failed update changed nothing.
    expect(await ids('a')).toEqual(['1', '2'])
  })

  test('bulk "item": only the failing item fails, the others apply, answers keep their positions', async () => {
    store.arm({ failAt: [1], error: () => new VersionConflict('injected', 'a') })
    const r = await bulk3()
    expect(r.errors).toBe(true)
    expect(r.items.map((i) => Object.values(i)[0]!.status)).toEqual([409, 201, 404])
    expect(r.items[0].index?.error?.type).toBe('version_conflict_engine_exception')
    expect(await ids('a')).toEqual(['2'])
  })

  test('bulk "request" applies nothing; "lost-response" applies everything and still throws', async () => {
    store.arm({ failAt: [2], bulk: 'request' })
    await expect(bulk3()).rejects.toBeInstanceOf(StoreError)
    expect(await ids('a')).toEqual([])
    store.arm({ failAt: [2], bulk: 'lost-response' })
    await expect(bulk3()).rejects.toBeInstanceOf(StoreError)
    expect(await ids('a')).toEqual(['1', '2'])
  })

  test('a predicate chooses which mutations count', async () => {
    store.arm({ failAt: [1], match: (m) => m.index === 'b' })
    await store.index({ index: 'a', id: '1', body: {}, refresh: true })
    await expect(store.index({ index: 'b', id: '1', body: {}, refresh: true })).rejects.toBeInstanceOf(StoreError)
    expect(store.disarm().map((m) => m.index)).toEqual(['b'])
    expect(await ids('a')).toEqual(['1'])
    expect(await ids('b')).toEqual([])
  })
})

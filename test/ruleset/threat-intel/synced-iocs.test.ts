/**
 * The node's IoC index against the stored IoCs: loaded once at first use; a change window the sync
 * hands over is applied without a reload; IoCs written behind its back (another writer, a restore)
 * or a wholesale replacement reload it at the next use; no CTI IoC index matches nothing.
 */
import { beforeEach, describe, expect, test } from 'bun:test'
import { createLogger } from '../../../src/http/log'
import { openEmbeddedStore } from '../../../src/store/embedded'
import type { Store } from '../../../src/store/port'
import { CHECK_MILLIS, IOC_ALIAS, SyncedIocs } from '../../../src/ruleset/threat-intel/synced-iocs'

const PHYSICAL = `${IOC_ALIAS}-a`
let store: Store
let lines: string[]
let iocs: SyncedIocs
let clock: number
const loads = () => lines.filter((l) => l.includes('IoC index loaded')).length
const doc = (name: string, type = 'ip') => ({ document: { id: name, name, type }, hash: { sha256: 'x' }, offset: 1 })

async function write(docs: Record<string, ReturnType<typeof doc> | null>) {
  const body = Object.entries(docs).flatMap(([id, d]): Array<Record<string, unknown>> =>
    d ? [{ index: { _index: PHYSICAL, _id: id } }, d] : [{ delete: { _index: PHYSICAL, _id: id } }],
  )
  await store.bulk({ body, refresh: true })
}

beforeEach(async () => {
  store = openEmbeddedStore(':memory:')
  lines = []
  clock = 1_000_000
  iocs = new SyncedIocs(store, createLogger({ level: 'info', write: (l) => lines.push(l) }), { now: () => clock })
})

describe('SyncedIocs', () => {
  test("no CTI IoC index: nothing matches; loaded once (users' uploaded sources may hold IoCs), not at every use", async () => {
    expect((await iocs.current()).size).toBe(0)
    expect(loads()).toBe(1)
    clock += CHECK_MILLIS + 1
    expect((await iocs.current()).size).toBe(0)
    expect(loads()).toBe(1)
  })

  test('loaded at first use; a change window applied in place; a write behind its back reloads it', async () => {
    await store.createIndex({ index: PHYSICAL, body: { aliases: { [IOC_ALIAS]: {} } } })
    await write({ a: doc('192.0.2.1'), b: doc('bad.example', 'domain'), __ioc_type_hashes__: null })
    // Two runs at once share one load.
    const [first, same] = await Promise.all([iocs.current(), iocs.current()])
    expect(same).toBe(first)
    expect(first.match('ipv4-addr', '192.0.2.1')).toEqual(['a'])
    expect(loads()).toBe(1)
    expect(await iocs.current()).toBe(first)

    // What the sync does: write the window, then hand it over.
    const window = new Map<string, Record<string, unknown> | null>([
      ['a', null],
      ['c', doc('198.51.100.0/24')],
    ])
    await write({ a: null, c: doc('198.51.100.0/24') })
    iocs.applied(window)
    // The figures after the window are read in the background.
    await Bun.sleep(20)
    const after = await iocs.current()
    expect(loads()).toBe(1)
    expect(after.match('ipv4-addr', '192.0.2.1')).toEqual([])
    expect(after.match('ipv4-addr', '198.51.100.9')).toEqual(['c'])

    // Another writer: the stored figures differ from what the index reflects, noticed at the first
    // use once the check interval has passed (not before: the check costs a sort of the IoCs).
    await write({ d: doc('203.0.113.7') })
    clock += CHECK_MILLIS - 1
    expect((await iocs.current()).match('ipv4-addr', '203.0.113.7')).toEqual([])
    clock += CHECK_MILLIS
    expect((await iocs.current()).match('ipv4-addr', '203.0.113.7')).toEqual(['d'])
    expect(loads()).toBe(2)
  })

  test('a replacement reloads at the next use; changes handed over before the first load are not lost', async () => {
    await store.createIndex({ index: PHYSICAL, body: { aliases: { [IOC_ALIAS]: {} } } })
    await write({ a: doc('192.0.2.1') })
    iocs.applied(new Map([['a', doc('192.0.2.1')]]))
    expect((await iocs.current()).match('ipv4-addr', '192.0.2.1')).toEqual(['a'])
    await write({ a: null, b: doc('192.0.2.2') })
    iocs.replaced()
    const next = await iocs.current()
    expect(next.match('ipv4-addr', '192.0.2.1')).toEqual([])
    expect(next.match('ipv4-addr', '192.0.2.2')).toEqual(['b'])
    expect(loads()).toBe(2)
  })
})

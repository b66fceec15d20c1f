/**
 * The IoC values of a detector's scan are gathered in the same pass as the rules, on the evaluator
 * thread (which reads the store file itself) and on the node thread alike: both give the same
 * candidates per batch, across batch boundaries, and none when the scan is not asked for them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EvaluatorThread } from '../../../src/ruleset/detection/evaluator'
import { SCAN_BATCH } from '../../../src/ruleset/detection/evaluator-protocol'
import { type Scanner, scanHere } from '../../../src/ruleset/detection/scan'
import { compileSigmaRule } from '../../../src/ruleset/sigma'
import { openEmbeddedStore } from '../../../src/store/embedded'
import type { IocFieldList } from '../../../src/ruleset/threat-intel/ioc-fields'
import { candidateIds, candidateType } from '../../../src/ruleset/threat-intel/collect'
import { IocIndex } from '../../../src/ruleset/threat-intel/ioc-index'

const dir = mkdtempSync(join(tmpdir(), 'scan-iocs-'))
const store = openEmbeddedStore(join(dir, 'store.db'))
const INDEX = 'net'
const EVENTS = SCAN_BATCH + 500
const FIELDS: IocFieldList = [
  { type: 'ipv4-addr', fields: ['source.ip', 'destination.ip'] },
  { type: 'domain-name', fields: ['dns.question.name'] },
]
const rule = {
  ...compileSigmaRule('title: t\nlogsource:\n  product: x\ndetection:\n  sel:\n    event.action: deny\n  condition: sel\n'),
  id: 'r0',
}
const thread = new EvaluatorThread()

/** Every (type, value) with its events over the whole scan. */
async function gather(scanner: Scanner): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  let after = -1
  try {
    for (;;) {
      const page = await scanner.next(after)
      const c = page.iocs
      if (c)
        for (let k = 0; k < c.values.length; k++) {
          const key = `${candidateType(c, k)} ${c.values[k]}`
          out.set(key, [...(out.get(key) ?? []), ...candidateIds(c, k)])
        }
      after = page.last
      if (!page.full) break
    }
  } finally {
    scanner.close()
  }
  return out
}

beforeAll(async () => {
  await store.createIndex({ index: INDEX, body: { mappings: { dynamic: false } } })
  const docs = Array.from({ length: EVENTS }, (_, e) => ({
    event: { action: e % 7 === 0 ? 'deny' : 'allow' },
    source: { ip: `10.0.${e % 3}.1` },
    ...(e % 2 === 0 ? { destination: { ip: `192.0.2.${e % 5}` } } : {}),
    ...(e % 100 === 0 ? { dns: { question: { name: `h${e}.example.net` } } } : {}),
  }))
  for (let at = 0; at < docs.length; at += 500)
    await store.bulk({
      body: docs.slice(at, at + 500).flatMap((d, i) => [{ index: { _index: INDEX, _id: `e${at + i}` } }, d]),
      refresh: true,
    })
})
afterAll(() => {
  thread.stop()
  store.close?.()
  rmSync(dir, { recursive: true, force: true })
})

describe('IoC values gathered by the scan', () => {
  test('the evaluator thread and the node thread gather the same values and events', async () => {
    const there = await gather(await thread.scanner({ store, index: INDEX, rules: [rule], fieldTypes: undefined, iocFields: FIELDS }))
    expect(thread.sets.sent + thread.sets.reused).toBeGreaterThan(0)
    const here = await gather(await scanHere({ store, index: INDEX, rules: [rule], fieldTypes: undefined, iocFields: FIELDS }))
    expect(there).toEqual(here)
    // 3 source addresses, 5 destination addresses, one domain per 100 events.
    expect([...here.keys()].filter((k) => k.startsWith('ipv4-addr')).length).toBe(8)
    expect([...here.keys()].filter((k) => k.startsWith('domain-name')).length).toBe(Math.ceil(EVENTS / 100))
    // Each batch names up to 100 events per value: two batches, so at most 200 here.
    expect(here.get('ipv4-addr 10.0.0.1')!.length).toBe(200)
    expect(here.get('domain-name h2000.example.net')).toEqual(['e2000'])
  })

  test("with the IoC index's filter, the values the index lists are gathered with the same events, and few others", async () => {
    const ix = new IocIndex()
    ix.put({ id: 'a', type: 'ip', value: '10.0.1.1' })
    ix.put({ id: 'n', type: 'cidr', value: '192.0.2.0/31' })
    ix.put({ id: 'd', type: 'domain', value: 'H2000.example.net' })
    for (let i = 0; i < 20_000; i++) ix.put({ id: `x${i}`, type: 'ip', value: `172.16.${i >> 8}.${i & 255}` })
    const scan = { store, index: INDEX, rules: [rule], fieldTypes: undefined, iocFields: FIELDS }
    const all = await gather(await thread.scanner(scan))
    const filtered = await gather(await thread.scanner({ ...scan, iocFilter: () => ix.filter.buffer }))
    const here = await gather(await scanHere({ ...scan, iocFilter: () => ix.filter.buffer }))
    const listed = (m: Map<string, string[]>) =>
      new Map([...m].filter(([k]) => ix.match(k.slice(0, k.indexOf(' ')) as 'ipv4-addr', k.slice(k.indexOf(' ') + 1)).length > 0))
    expect([...listed(all).keys()].sort()).toEqual([
      'domain-name h2000.example.net',
      'ipv4-addr 10.0.1.1',
      'ipv4-addr 192.0.2.0',
      'ipv4-addr 192.0.2.1',
    ])
    expect(listed(filtered)).toEqual(listed(all))
    expect(here).toEqual(filtered)
    // 8 addresses and 26 domains without the filter; a false positive is one in a thousand or so.
    expect(filtered.size).toBeLessThan(8)
  })

  test('the filter the index builds again as it grows reaches the thread: a value listed since is gathered', async () => {
    const ix = new IocIndex()
    ix.put({ id: 'a', type: 'ip', value: '10.0.1.1' })
    const scan = { store, index: INDEX, rules: [rule], fieldTypes: undefined, iocFields: FIELDS, iocFilter: () => ix.filter.buffer }
    const first = ix.filter.buffer
    expect([...(await gather(await thread.scanner(scan))).keys()]).toContain('ipv4-addr 10.0.1.1')
    // Past its capacity the filter is built again, in a new buffer; the next key goes to that one only.
    for (let i = 0; i < 40_000; i++) ix.put({ id: `x${i}`, type: 'ip', value: `172.16.${i >> 8}.${i & 255}` })
    ix.put({ id: 'b', type: 'ip', value: '10.0.2.1' })
    expect(ix.filter.buffer).not.toBe(first)
    const there = await gather(await thread.scanner(scan))
    expect(there.get('ipv4-addr 10.0.2.1')?.length).toBeGreaterThan(0)
    expect(there).toEqual(await gather(await scanHere(scan)))
  })

  test('a scan not asked for IoC values gathers none', async () => {
    const scanner = await thread.scanner({ store, index: INDEX, rules: [rule], fieldTypes: undefined })
    const page = await scanner.next(-1)
    scanner.close()
    expect(page.iocs).toBeUndefined()
    expect(page.matches.length).toBeGreaterThan(0)
  })
})

/**
 * Sigma constructs the platform's query DSL cannot say (fieldref, IPv6 cidr on a keyword field,
 * regex word boundaries and inner anchors), in both modes: the same compiled rule searched through
 * the platform adapter (the embedded node as platform, over HTTP) and evaluated by the embedded
 * evaluator finds the same documents, which are the ones the Sigma semantics name; nothing
 * private travels on the wire.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { compileSigmaRule } from '../../src/ruleset/sigma'
import { IllegalArgument } from '../../src/store/errors'
import { openPlatformStore, type PlatformStore } from '../../src/store/platform'
import { compileQuery } from '../../src/store/query'
import { startBarePlatform, type BarePlatform } from './bare-platform'
import { startRecordingProxy } from './recording-proxy'

let platform: BarePlatform
let proxy: ReturnType<typeof startRecordingProxy>
let store: PlatformStore

const DOCS: Record<string, Record<string, unknown>> = {
  same: { TargetUserName: 'bob', SubjectUserName: 'BOB', ip: 'fe80::1', cmd: 'cmd /c whoami /all' },
  differ: { TargetUserName: 'bob', SubjectUserName: 'alice', ip: 'fe80:0:0:0:0:0:0:ab', cmd: 'notwhoami' },
  half: { TargetUserName: 'bob', ip: '2001:db8::1', cmd: '-enc AAAA' },
  parent: { Image: 'C:\\Windows\\cmd.exe', ParentImage: 'c:\\windows\\', ip: '10.0.0.1', cmd: 'x -enc A' },
  none: { cmd: 'whoami.exe', ip: 'fec0::1' },
}

function rule(detection: string): Record<string, unknown> {
  return compileSigmaRule(`title: t\nlogsource: {product: test}\ndetection:\n${detection}`).query as Record<string, unknown>
}

const CASES: Array<{ name: string; query: Record<string, unknown>; expected: string[] }> = [
  { name: 'fieldref', query: rule('  s:\n    TargetUserName|fieldref: SubjectUserName\n  condition: s'), expected: ['same'] },
  {
    name: 'not fieldref',
    query: rule('  s:\n    TargetUserName|fieldref: SubjectUserName\n  condition: not s'),
    expected: ['differ', 'half', 'none', 'parent'],
  },
  { name: 'fieldref|startswith', query: rule('  s:\n    Image|fieldref|startswith: ParentImage\n  condition: s'), expected: ['parent'] },
  { name: 'IPv6 cidr on a keyword field', query: rule("  s:\n    ip|cidr: 'fe80::/10'\n  condition: s"), expected: ['differ', 'same'] },
  { name: 'not IPv6 cidr', query: rule("  s:\n    ip|cidr: 'fe80::/10'\n  condition: not s"), expected: ['half', 'none', 'parent'] },
  { name: 'regex word boundary', query: rule("  s:\n    cmd|re: '\\bwhoami\\b'\n  condition: s"), expected: ['none', 'same'] },
  {
    name: 'not regex word boundary',
    query: rule("  s:\n    cmd|re: '\\bwhoami\\b'\n  condition: not s"),
    expected: ['differ', 'half', 'parent'],
  },
  { name: 'regex inner anchor', query: rule("  s:\n    cmd|re: '(^|\\s)-enc\\s'\n  condition: s"), expected: ['half', 'parent'] },
  {
    name: 'mixed with a platform-exact clause',
    query: rule('  a:\n    TargetUserName: bob\n  b:\n    TargetUserName|fieldref: SubjectUserName\n  condition: a and not b'),
    expected: ['differ', 'half'],
  },
]

beforeAll(async () => {
  platform = await startBarePlatform()
  proxy = startRecordingProxy(platform.url)
  store = openPlatformStore({ url: proxy.url, username: platform.admin.name, password: platform.admin.password })
  // Keyword fields, as a Sigma source index maps them (no `ip` type: the cidr cannot be a term query).
  const properties = Object.fromEntries(
    ['TargetUserName', 'SubjectUserName', 'ip', 'cmd', 'Image', 'ParentImage'].map((f) => [f, { type: 'keyword' }]),
  )
  await store.createIndex({ index: 'events', body: { mappings: { properties } } })
  for (const [id, body] of Object.entries(DOCS)) await store.index({ index: 'events', id, body })
  await store.refresh({ index: 'events' })
})
afterAll(async () => {
  await store.close()
  proxy.stop()
  await platform.stop()
})

describe('one semantics in both modes', () => {
  for (const c of CASES)
    test(c.name, async () => {
      proxy.seen.length = 0
      const r = await store.search({ index: 'events', body: { size: 100, query: c.query } })
      const viaPlatform = r.hits.hits.map((h) => h._id).sort()
      const embedded = compileQuery(c.query)
      const inProcess = Object.keys(DOCS)
        .filter((id) => embedded(DOCS[id]))
        .sort()
      expect(viaPlatform).toEqual(c.expected)
      expect(inProcess).toEqual(c.expected)
      expect((await store.count({ index: 'events', body: { query: c.query } })).count).toBe(c.expected.length)
      for (const s of proxy.seen) {
        expect(s.body ?? '').not.toContain('_fieldref')
        expect(s.body ?? '').not.toContain('_cidr')
        expect(s.body ?? '').not.toContain('_pcre')
      }
    })

  test('source filtering and totals follow the evaluated hits', async () => {
    const r = await store.search({ index: 'events', body: { query: CASES[0].query, _source: ['cmd'], track_total_hits: true } })
    expect(r.hits.hits.map((h) => [h._id, h._source])).toEqual([['same', { cmd: 'cmd /c whoami /all' }]])
    expect(r.hits.total).toEqual({ value: 1, relation: 'eq' })
  })

  test('what cannot be re-evaluated is refused, not answered wrongly', async () => {
    const aggs = { query: CASES[0].query, aggs: { n: { terms: { field: 'cmd' } } } }
    await expect(store.search({ index: 'events', body: aggs })).rejects.toBeInstanceOf(IllegalArgument)
    const alias = { actions: [{ add: { index: 'events', alias: 'a', filter: CASES[0].query } }] }
    await expect(store.updateAliases({ body: alias })).rejects.toBeInstanceOf(IllegalArgument)
  })
})

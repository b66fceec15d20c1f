import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { DETECTORS_INDEX, ensureIndex } from '../../../src/ruleset/indices'
import { sampleFinding, startFindingsServer, type FindingsServer } from './harness'

const SEARCH = '/_plugins/_security_analytics/findings/_search'
const FILTER = 'plugins.security_analytics.filter_by_backend_roles'

let s: FindingsServer
/** blue[0..2] from det-blue (levels low, medium, high), red[0..1] from det-red. */
let blue: Array<{ _id: string; _index: string }>
let red: Array<{ _id: string; _index: string }>

const at = (second: number) => new Date(Date.UTC(2026, 8, 10, 12, 0, second)).toISOString()
const ms = (second: number) => Date.UTC(2026, 8, 10, 12, 0, second)

beforeAll(async () => {
  s = await startFindingsServer()
  await ensureIndex(s.store, DETECTORS_INDEX)
  for (const [id, roles] of [
    ['det-blue', ['blue']],
    ['det-red', ['red']],
  ] as const) {
    await s.store.index({
      index: DETECTORS_INDEX,
      id,
      body: {
        detector: {
          name: id,
          detector_type: 'linux',
          enabled: true,
          source: 'custom',
          user: { name: 'x', backend_roles: [...roles], roles: [] },
        },
      },
      refresh: true,
    })
  }
  blue = await s.addFindings([
    sampleFinding({ detector: 'det-blue', level: 'low', at: at(1), title: 'Blue low' }),
    sampleFinding({ detector: 'det-blue', level: 'medium', at: at(3), title: 'Blue medium' }),
    sampleFinding({ detector: 'det-blue', level: 'high', at: at(5), title: 'Blue high' }),
  ])
  red = await s.addFindings([
    sampleFinding({ detector: 'det-red', level: 'high', at: at(2), title: 'Red high' }),
    sampleFinding({ detector: 'det-red', level: 'critical', at: at(4), title: 'Red critical' }),
  ])
})
afterAll(() => s.stop())

const search = (query = '', user?: string) => s.request('GET', SEARCH + (query ? `?${query}` : ''), { user })
const ids = (r: { body: any }) => r.body.findings.map((x: any) => x.id)

describe('GET findings/_search: shape and parameters', () => {
  test('every finding in the upstream shape plus _index and case, ascending by timestamp by default', async () => {
    const r = await search()
    expect(r.status).toBe(200)
    expect(r.body.total_findings).toBe(5)
    expect(ids(r)).toEqual([blue[0]._id, red[0]._id, blue[1]._id, red[1]._id, blue[2]._id])
    const first = r.body.findings[0]
    expect(first).toMatchObject({
      detectorId: 'det-blue',
      id: blue[0]._id,
      index: '.ds-svc-events-v5-security-000001',
      timestamp: ms(1),
      _index: blue[0]._index,
      case: null,
    })
    expect(first.related_doc_ids).toHaveLength(1)
    expect(first.queries).toEqual([
      { id: 'rule-low', name: 'Blue low', fields: [], query: '', tags: ['low', 'linux', 'attack.credential-access'] },
    ])
    const doc = first.document_list[0]
    expect(doc).toMatchObject({ index: '.ds-svc-events-v5-security-000001', id: first.related_doc_ids[0], found: true })
    const event = JSON.parse(doc.document)
    expect(event.agent).toEqual({ id: '001', name: 'web-prod-01' })
    expect(event.svc.rule).toBeUndefined()
  })

  test("a case update shows in the finding's case", async () => {
    const u = await s.request('PUT', '/_plugins/_security_analytics/findings/_update', {
      body: { findings: [{ _id: red[1]._id, _index: red[1]._index, case: { status: 'Active', severity: 'critical' } }] },
    })
    expect(u.status).toBe(200)
    const r = await search(`findingIds=${red[1]._id}`)
    expect(r.body.findings[0].case).toEqual({ status: 'active', severity: 'critical' })
  })

  test('sortOrder, size and startIndex page through the findings', async () => {
    expect(ids(await search('sortOrder=desc&size=2'))).toEqual([blue[2]._id, red[1]._id])
    const page = await search('sortOrder=desc&size=2&startIndex=2')
    expect(ids(page)).toEqual([blue[1]._id, red[0]._id])
    expect(page.body.total_findings).toBe(5)
  })

  test('detector_id, detectorType, severity, findingIds, time window and searchString filter', async () => {
    expect(ids(await search('detector_id=det-red'))).toEqual([red[0]._id, red[1]._id])
    expect(ids(await search('detectorType=LINUX')).length).toBe(5)
    expect(ids(await search('detectorType=windows'))).toEqual([])
    expect(ids(await search('severity=high'))).toEqual([red[0]._id, blue[2]._id])
    expect(ids(await search('severity=ALL')).length).toBe(5)
    expect(ids(await search(`findingIds=${blue[1]._id},${red[0]._id}`))).toEqual([red[0]._id, blue[1]._id])
    expect(ids(await search(`startTime=${ms(2)}&endTime=${ms(4)}`))).toEqual([red[0]._id, blue[1]._id, red[1]._id])
    expect(ids(await search('searchString=medium'))).toEqual([blue[1]._id])
    expect(ids(await search(`searchString=${blue[2]._id}`))).toEqual([blue[2]._id])
    expect(ids(await search('detectionType=threat'))).toEqual([])
    expect(ids(await search('detectionType=rule')).length).toBe(5)
  })

  test('malformed parameters are 400s in the house envelope', async () => {
    for (const q of ['size=abc', 'startIndex=-1', 'sortOrder=sideways', 'startTime=yesterday', 'size=20000']) {
      const r = await search(q)
      expect(r.status).toBe(400)
      expect(r.body.status).toBe(400)
      expect(typeof r.body.message).toBe('string')
    }
  })

  test('the route needs the findings read permission', async () => {
    expect((await search('', 'nobody')).status).toBe(403)
    expect((await search('', 'viewer')).status).toBe(200)
  })
})

describe('filter_by_backend_roles on the findings search', () => {
  test('off: everyone with the permission sees every finding', async () => {
    expect((await search('', 'analyst')).body.total_findings).toBe(5)
  })

  test('on: findings of detectors sharing a backend role only; all_access unfiltered; no shared role sees nothing', async () => {
    const on = await s.request('PUT', '/_cluster/settings', { body: { persistent: { [FILTER]: true } } })
    expect(on.status).toBe(200)
    await Bun.sleep(1100)
    try {
      expect(ids(await search('', 'analyst'))).toEqual([blue[0]._id, blue[1]._id, blue[2]._id])
      const r = await search('', 'red')
      expect(ids(r)).toEqual([red[0]._id, red[1]._id])
      expect(r.body.total_findings).toBe(2)
      expect((await search('', 'viewer')).body.total_findings).toBe(0)
      expect((await search('', 'admin')).body.total_findings).toBe(5)
      // Other filters combine with the visibility filter, never widen it.
      expect(ids(await search('detector_id=det-red', 'analyst'))).toEqual([])
    } finally {
      await s.request('PUT', '/_cluster/settings', { body: { persistent: { [FILTER]: null } } })
      await Bun.sleep(1100)
    }
    expect((await search('', 'analyst')).body.total_findings).toBe(5)
  })
})

describe('filter_by_backend_roles on direct index reads of the findings streams', () => {
  test('_search with a term on svc.case.status, _count and _doc see only visible findings; other indices are untouched', async () => {
    await s.store.index({ index: 'misc-notes', id: 'n1', body: { note: 'unrelated' }, refresh: true })
    const u = await s.request('PUT', '/_plugins/_security_analytics/findings/_update', {
      body: { findings: [blue[0], red[0]].map((x) => ({ ...x, case: { status: 'acknowledged' } })) },
    })
    expect(u.status).toBe(200)
    const termSearch = (user: string) =>
      s.request('POST', '/svc-findings-v5-*/_search', { user, body: { query: { term: { 'svc.case.status': 'acknowledged' } } } })
    const hitIds = (r: { body: any }) => r.body.hits.hits.map((h: any) => h._id).sort()

    expect(hitIds(await termSearch('analyst'))).toEqual([blue[0]._id, red[0]._id].sort())
    await s.request('PUT', '/_cluster/settings', { body: { persistent: { [FILTER]: true } } })
    await Bun.sleep(1100)
    try {
      expect(hitIds(await termSearch('analyst'))).toEqual([blue[0]._id])
      expect(hitIds(await termSearch('red'))).toEqual([red[0]._id])
      expect(hitIds(await termSearch('admin'))).toEqual([blue[0]._id, red[0]._id].sort())

      const count = await s.request('GET', '/svc-findings-v5-*/_count', { user: 'analyst' })
      expect(count.body.count).toBe(3)
      const mixed = await s.request('GET', '/svc-findings-v5-*,misc-notes/_count', { user: 'analyst' })
      expect(mixed.body.count).toBe(4)

      const own = await s.request('GET', `/${blue[0]._index}/_doc/${blue[0]._id}`, { user: 'analyst' })
      expect(own.body.found).toBe(true)
      const other = await s.request('GET', `/${red[0]._index}/_doc/${red[0]._id}`, { user: 'analyst' })
      expect(other.status).toBe(404)
      expect(other.body.found).toBe(false)
    } finally {
      await s.request('PUT', '/_cluster/settings', { body: { persistent: { [FILTER]: null } } })
      await Bun.sleep(1100)
    }
  })
})

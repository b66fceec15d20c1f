// Users' threat-intel sources and the threat-intel monitor API over real HTTP: an IOC_UPLOAD source
// (the peer's payload or a STIX2 bundle) is validated, stored and fed into the node's IoC index
// without a reload, so a `threat_intel_enabled` detector's run turns a listed value into an IoC
// finding naming the source; an update changes matching to the new IoCs, a deletion removes them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../../helpers/server'
import { EVENTS, indexEvents, networkTiDetector } from './http-harness'
import { SA } from '../../helpers/calls'

const TI = `${SA}/threat_intel`
let s: TestServer
let monitorId: string
const lines: string[] = []
const loads = () => lines.filter((l) => l.includes('IoC index loaded')).length

const index = (events: Array<Record<string, unknown>>) => indexEvents(s, events)
const execute = () => s.request('POST', `/_plugins/_alerting/monitors/${monitorId}/_execute`)
/** The values found in the events indexed now (each run's new findings). */
async function foundNow(events: Array<Record<string, unknown>>): Promise<string[]> {
  const before = new Set(((await s.request('GET', `${TI}/findings/_search?size=1000`)).body.ioc_findings ?? []).map((f: any) => f.id))
  await index(events)
  expect((await execute()).status).toBe(200)
  const after = (await s.request('GET', `${TI}/findings/_search?size=1000`)).body.ioc_findings
  return after
    .filter((f: any) => !before.has(f.id))
    .map((f: any) => f.ioc_value)
    .sort()
}

const upload = (name: string, iocs: unknown, extra: Record<string, unknown> = {}) => ({
  name,
  format: 'STIX2',
  type: 'IOC_UPLOAD',
  description: 'uploaded by a test',
  enabled: false,
  ioc_types: ['ipv4-addr', 'ipv6-addr', 'domain-name', 'hashes', 'url'],
  source: { ioc_upload: { file_name: `${name}.json`, iocs } },
  ...extra,
})
const ioc = (type: string, value: string, id?: string) => ({
  ...(id ? { id } : {}),
  type,
  value,
  name: value,
  severity: 'high',
  spec_version: '2.1',
})

beforeAll(async () => {
  s = await startTestServer({
    logLines: lines,
    users: [{ name: 'analyst', password: 'Analyst-pass-1', roles: ['analyst'] }],
    roles: { analyst: { cluster_permissions: ['cluster:admin/platform/securityanalytics/detector/*'] } },
    settings: { 'log.level': 'info' },
  })
  const created = await s.request('POST', `${SA}/detectors`, {
    body: networkTiDetector('uploads-ti', []),
  })
  expect(created.status).toBe(201)
  monitorId = created.body.detector.monitor_id[0]
  await index([{ source: { ip: '10.9.9.9' } }])
  await execute()
}, 60_000)
afterAll(async () => {
  await s?.stop()
})

describe('IOC_UPLOAD sources', () => {
  let sourceId: string

  test('an upload is stored, answered in the peer shape (201 + Location), and matches at the next run', async () => {
    const r = await s.request('POST', `${TI}/sources`, {
      body: upload('my-feed', [
        ioc('ipv4-addr', '203.0.113.9', 'a'),
        ioc('ipv4-addr', '198.18.0.0/15', 'b'),
        ioc('ipv6-addr', '2001:db8:1::/48', 'c'),
      ]),
    })
    expect(r.status).toBe(201)
    sourceId = r.body._id
    expect(r.headers.get('location')).toBe(`${TI}/sources/${sourceId}`)
    expect(r.body).toMatchObject({
      _version: expect.any(Number),
      source_config: {
        name: 'my-feed',
        type: 'IOC_UPLOAD',
        state: 'AVAILABLE',
        enabled: false,
        enabled_for_scan: true,
        created_by_user: 'admin',
      },
    })
    expect(
      await foundNow([
        { source: { ip: '203.0.113.9' } },
        { destination: { ip: '198.19.4.4' } },
        { source: { ip: '2001:db8:1:2::1' } },
        { source: { ip: '10.1.1.1' } },
      ]),
    ).toEqual(['198.19.4.4', '2001:db8:1:2::1', '203.0.113.9'])
    const f = (await s.request('GET', `${TI}/findings/_search?searchString=ioc_value:203.0.113.9`)).body.ioc_findings[0]
    expect(f.ioc_feed_ids).toEqual([{ ioc_id: `${sourceId}:a`, feed_id: sourceId, feed_name: 'my-feed', index: '' }])
    expect(f.ioc_type).toBe('ipv4-addr')
    const got = await s.request('GET', `${TI}/sources/${sourceId}`)
    expect(got.body.source_config.ioc_types).toContain('hashes')
    const listed = (await s.request('GET', `${TI}/iocs?feed_ids=${sourceId}&sortString=name`)).body
    expect(listed.total).toBe(3)
    expect(listed.iocs[0]).toMatchObject({
      id: `${sourceId}:b`,
      type: 'ipv4-addr',
      value: '198.18.0.0/15',
      severity: 'high',
      feed_id: sourceId,
      feed_name: 'my-feed',
    })
    expect(listed.iocs.find((i: any) => i.value === '203.0.113.9').num_findings).toBe(1)
    // Nothing was reloaded: the upload went into the index loaded at the detector's first run (or was loaded with it).
    expect(loads()).toBe(1)
  })

  test('a STIX2 bundle: indicator patterns and observables, hashes, domains (with sub-domains) and URLs', async () => {
    const md5 = 'd41d8cd98f00b204e9800998ecf8427e'
    const sha256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
    const bundle = {
      type: 'bundle',
      id: 'bundle--1',
      objects: [
        {
          type: 'indicator',
          id: 'indicator--1',
          spec_version: '2.1',
          pattern: "[domain-name:value = 'evil.example']",
          pattern_type: 'stix',
        },
        { type: 'indicator', id: 'indicator--2', pattern: `[file:hashes.MD5 = '${md5}' OR file:hashes.'SHA-256' = '${sha256}']` },
        { type: 'url', id: 'url--1', value: 'http://bad.example/payload' },
        { type: 'identity', id: 'identity--1', name: 'not an IoC' },
      ],
    }
    const r = await s.request('POST', `${TI}/sources`, { body: upload('stix-feed', bundle) })
    expect(r.status).toBe(201)
    const listed = (await s.request('GET', `${TI}/iocs?feed_ids=${r.body._id}&sortString=type`)).body
    expect(listed.iocs.map((i: any) => [i.type, i.value])).toEqual([
      ['domain-name', 'evil.example'],
      ['hashes', md5],
      ['hashes', sha256],
      ['url', 'http://bad.example/payload'],
    ])
    // The network log type's IoC fields are addresses: only a log type naming domain fields matches domains.
    await s.request('DELETE', `${TI}/sources/${r.body._id}`)
  })

  test('an update matches the new IoCs and no longer the removed ones, without a reload', async () => {
    const r = await s.request('PUT', `${TI}/sources/${sourceId}`, {
      body: upload('my-feed', [ioc('ipv4-addr', '203.0.113.9', 'a'), ioc('ipv4-addr', '192.0.2.77', 'd')]),
    })
    expect(r.status).toBe(200)
    expect(r.body._id).toBe(sourceId)
    expect(await foundNow([{ source: { ip: '192.0.2.77' } }, { source: { ip: '198.19.4.5' } }, { source: { ip: '203.0.113.9' } }])).toEqual(
      ['192.0.2.77', '203.0.113.9'],
    )
    // Switched off for scanning: kept, listed, not matched.
    const off = await s.request('PUT', `${TI}/sources/${sourceId}`, {
      body: upload('my-feed', undefined, { enabled_for_scan: false, source: undefined }),
    })
    expect(off.status).toBe(200)
    expect((await s.request('GET', `${TI}/iocs?feed_ids=${sourceId}`)).body.total).toBe(2)
    expect(await foundNow([{ source: { ip: '192.0.2.77' } }])).toEqual([])
    await s.request('PUT', `${TI}/sources/${sourceId}`, {
      body: upload('my-feed', undefined, { enabled_for_scan: true, source: undefined }),
    })
    expect(await foundNow([{ source: { ip: '192.0.2.77' } }])).toEqual(['192.0.2.77'])
    expect(loads()).toBe(1)
  })

  test('search lists the built-in source and users’ sources; a deletion removes the IoCs from matching', async () => {
    const found = await s.request('POST', `${TI}/sources/_search`, { body: { query: { match_all: {} } } })
    expect(found.body.hits.hits.map((h: any) => h._id)).toEqual(['svc-cti-iocs', sourceId])
    const gone = await s.request('DELETE', `${TI}/sources/${sourceId}`)
    expect(gone.status).toBe(200)
    expect(gone.body).toEqual({ _id: sourceId })
    expect((await s.request('GET', `${TI}/sources/${sourceId}`)).status).toBe(404)
    expect((await s.request('GET', `${TI}/iocs?feed_ids=${sourceId}`)).body.total).toBe(0)
    expect(await foundNow([{ source: { ip: '192.0.2.77' } }, { source: { ip: '203.0.113.9' } }])).toEqual([])
    expect((await s.request('DELETE', `${TI}/sources/${sourceId}`)).status).toBe(404)
    expect(loads()).toBe(1)
  })

  test('invalid sources and IoCs are 400s naming the problem; the built-in source is read-only', async () => {
    const bad: Array<[unknown, string]> = [
      [upload('x', [ioc('ipv4-addr', '2001:db8::1')]), 'not an IPv4'],
      [upload('x', [ioc('ipv6-addr', '10.0.0.1')]), 'not an IPv6'],
      [upload('x', [ioc('ipv4-addr', '10.0.0.0/40')]), 'not an IP'],
      [upload('x', [ioc('hashes', 'abc')]), 'hash'],
      [upload('x', [ioc('domain-name', 'not a domain')]), 'domain'],
      [upload('x', [ioc('url', 'nope')]), 'URL'],
      [upload('x', [ioc('email-addr', 'a@b.c')]), 'unsupported IoC type'],
      [upload('x', [ioc('url', 'http://a.example/')], { ioc_types: ['ipv4-addr'] }), "not in the source's ioc_types"],
      [upload('x', [{ value: 'x' }]), 'type and a value'],
      [upload('x', 'text'), 'STIX2 bundle'],
      [upload('bad/name', []), 'name'],
      [upload('x', [], { enabled: true }), 'cannot be enabled'],
      [upload('x', [], { type: 'S3_CUSTOM' }), 'S3_CUSTOM'],
      [upload('x', [], { type: 'URL_DOWNLOAD' }), 'reserved'],
      [{ ...upload('x', []), source: { custom_schema_ioc_upload: { iocs: '[]' } } }, 'custom_schema'],
      [{ name: 'x', type: 'IOC_UPLOAD' }, 'ioc_upload'],
    ]
    for (const [body, why] of bad) {
      const r = await s.request('POST', `${TI}/sources`, { body })
      expect({ status: r.status, why, message: r.body.message }).toMatchObject({ status: 400, message: expect.stringContaining(why) })
    }
    expect((await s.request('POST', `${TI}/sources`, { body: 'not json' })).status).toBe(400)
    for (const method of ['PUT', 'DELETE'])
      expect((await s.request(method, `${TI}/sources/svc-cti-iocs`, { body: upload('x', []) })).status).toBe(400)
    expect((await s.request('PUT', `${TI}/sources/missing`, { body: upload('x', []) })).status).toBe(404)
  })
})

describe('threat-intel monitors', () => {
  const monitor = (name = 'ti monitor') => ({
    name,
    schedule: { period: { interval: 5, unit: 'MINUTES' } },
    enabled: true,
    indices: [EVENTS],
    per_ioc_type_scan_input_list: [{ ioc_type: 'ipv4-addr', index_to_fields_map: { [EVENTS]: ['source.ip', 'destination.ip'] } }],
    triggers: [{ name: 'ti trigger', severity: '1', data_sources: [], ioc_types: ['ipv4-addr'], actions: [] }],
  })
  let id: string

  test('create (201 + Location), a second is a 400, get, update, search, delete', async () => {
    const r = await s.request('POST', `${TI}/monitors`, { body: monitor() })
    expect(r.status).toBe(201)
    id = r.body.id
    expect(r.headers.get('location')).toBe(`${TI}/monitors/${id}`)
    // The peer answers the version in `name`.
    expect(r.body).toMatchObject({ id, name: '1', seq_no: expect.any(Number), primary_term: expect.any(Number) })
    expect(r.body.monitor).toMatchObject({ id, name: 'ti monitor', monitor_type: 'ti_doc_level_monitor', enabled: true, indices: [EVENTS] })
    expect(r.body.monitor.triggers[0].id).toEqual(expect.any(String))
    const second = await s.request('POST', `${TI}/monitors`, { body: monitor('another') })
    expect(second.status).toBe(400)
    expect(second.body.message).toBe(`Threat intel monitor ${id} already exists.`)
    expect((await s.request('GET', `${TI}/monitors/${id}`)).body.monitor.name).toBe('ti monitor')
    const updated = await s.request('PUT', `${TI}/monitors/${id}`, { body: { ...monitor('renamed'), enabled: false } })
    expect(updated.status).toBe(200)
    expect(updated.body).toMatchObject({ id, name: '2', monitor: { name: 'renamed', enabled: false, enabled_time: null } })
    const found = await s.request('POST', `${TI}/monitors/_search`, { body: { query: { match_all: {} } } })
    expect(found.body.hits.hits.map((h: any) => [h._id, h._source.monitor.name])).toEqual([[id, 'renamed']])
    const gone = await s.request('DELETE', `${TI}/monitors/${id}`)
    expect(gone.body).toMatchObject({ _id: id, _version: expect.any(Number) })
    expect((await s.request('GET', `${TI}/monitors/${id}`)).status).toBe(404)
    expect((await s.request('POST', `${TI}/monitors/_search`, { body: {} })).body.hits.hits).toEqual([])
    // Gone: another may be created.
    const again = await s.request('POST', `${TI}/monitors`, { body: monitor('again') })
    expect(again.status).toBe(201)
    await s.request('DELETE', `${TI}/monitors/${again.body.id}`)
  })

  test('a run (Alerting _execute on the monitor id) matches the mapped fields of new documents: findings, one alert per value', async () => {
    const source = await s.request('POST', `${TI}/sources`, { body: upload('monitor-feed', [ioc('ipv4-addr', '203.0.113.99', 'm')]) })
    expect(source.status).toBe(201)
    const created = await s.request('POST', `${TI}/monitors`, {
      body: {
        ...monitor('scanning'),
        per_ioc_type_scan_input_list: [{ ioc_type: 'ipv4-addr', index_to_fields_map: { [EVENTS]: ['client.address'] } }],
      },
    })
    expect(created.status).toBe(201)
    const id = created.body.id
    const run = () => s.request('POST', `/_plugins/_alerting/monitors/${id}/_execute`)
    // The first run starts after what is stored.
    await index([{ client: { address: '203.0.113.99' } }])
    expect((await run()).body.monitor_name).toBe('scanning')
    const [hit] = await index([{ client: { address: '203.0.113.99' } }, { source: { ip: '203.0.113.99' } }])
    const r = await run()
    expect(r.status).toBe(200)
    expect(r.body.input_results.results[0]['ipv4-addr']).toEqual([`${hit}:${EVENTS}`])
    const found = (await s.request('GET', `${TI}/findings/_search?searchString=monitor_id:${id}`)).body.ioc_findings
    expect(found.map((f: any) => [f.ioc_value, f.monitor_name, f.related_doc_ids])).toEqual([
      ['203.0.113.99', 'scanning', [`${hit}:${EVENTS}`]],
    ])
    const alerts = async () => (await s.request('GET', `${TI}/alerts`)).body.alerts.filter((a: any) => a.trigger_name === 'ti trigger')
    expect((await alerts()).map((a: any) => [a.ioc_value, a.state, a.finding_ids.length])).toEqual([['203.0.113.99', 'ACTIVE', 1]])
    // Nothing new: nothing found again; a new document of the value joins the value's alert.
    await run()
    expect((await alerts())[0].finding_ids.length).toBe(1)
    await index([{ client: { address: '203.0.113.99' } }])
    await run()
    expect((await alerts()).map((a: any) => a.finding_ids.length)).toEqual([2])
    await s.request('DELETE', `${TI}/monitors/${id}`)
    await s.request('DELETE', `${TI}/sources/${source.body._id}`)
  })

  test('invalid monitors are 400s; unknown ones 404s', async () => {
    const bad = [
      { ...monitor(), indices: [] },
      { ...monitor(), per_ioc_type_scan_input_list: [{ ioc_type: 'email', index_to_fields_map: {} }] },
      { ...monitor(), per_ioc_type_scan_input_list: [{ ioc_type: 'ipv4-addr', index_to_fields_map: { other: ['a'] } }] },
      { ...monitor(), schedule: { period: { interval: 0, unit: 'MINUTES' } } },
      { ...monitor(), schedule: { period: { interval: 1, unit: 'FORTNIGHTS' } } },
      { ...monitor(), triggers: [{ name: 't', ioc_types: ['nope'] }] },
    ]
    for (const body of bad) expect((await s.request('POST', `${TI}/monitors`, { body })).status).toBe(400)
    expect((await s.request('POST', `${TI}/monitors/_search`, { body: { size: -1 } })).status).toBe(400)
    for (const method of ['GET', 'DELETE']) expect((await s.request(method, `${TI}/monitors/nope`)).status).toBe(404)
    expect((await s.request('PUT', `${TI}/monitors/nope`, { body: monitor() })).status).toBe(404)
  })

  test('the routes are behind their cluster actions', async () => {
    const analyst = { name: 'analyst', password: 'Analyst-pass-1' }
    for (const [method, path, body] of [
      ['POST', 'monitors', monitor()],
      ['POST', 'monitors/_search', {}],
      ['GET', 'monitors/x', undefined],
      ['PUT', 'monitors/x', monitor()],
      ['DELETE', 'monitors/x', undefined],
      ['POST', 'sources', upload('x', [])],
      ['PUT', 'sources/x', upload('x', [])],
      ['DELETE', 'sources/x', undefined],
    ] as const)
      expect((await s.request(method, `${TI}/${path}`, { body, user: analyst })).status).toBe(403)
  })
})

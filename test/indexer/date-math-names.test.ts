// Date math index names (`<logs-{now/d}>`) wherever the index API takes index names, over real
// HTTP. Every expected answer is what a real OpenSearch 3.4 node answered to the same requests
// (with its clock's date in the names).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ndjson, ok, startIndexApi, type TestServer } from './helpers'

let api: TestServer

const pad = (n: number) => String(n).padStart(2, '0')
const today = () => {
  const d = new Date()
  return `${d.getUTCFullYear()}.${pad(d.getUTCMonth() + 1)}.${pad(d.getUTCDate())}`
}
const month = () => today().slice(0, 7)
/** The month as a clock `hours` east of UTC reads it (the next one for half of the last day of a month at +12:00). */
const monthAt = (hours: number) => {
  const d = new Date(Date.now() + hours * 3_600_000)
  return `${d.getUTCFullYear()}.${pad(d.getUTCMonth() + 1)}`
}
const path = (name: string) => `/${encodeURIComponent(name)}`

beforeAll(async () => {
  api = await startIndexApi({
    roles: `
_meta: { type: roles, config_version: 2 }
dm_only:
  index_permissions:
    - index_patterns: ["dm-*"]
      allowed_actions: ["read", "write", "create_index"]
`,
    users: { admin: { roles: ['all_access'] }, dina: { roles: ['dm_only'] } },
  })
})

afterAll(async () => {
  await api?.stop()
})

describe('date math index names', () => {
  test('create index, index and get a document, search: the resolved name', async () => {
    expect(await ok(api.call('admin', 'PUT', path('<dm-{now/d}>')))).toEqual({
      acknowledged: true,
      shards_acknowledged: true,
      index: `dm-${today()}`,
    })
    const written = await ok(api.call('admin', 'PUT', `${path('<dm2-{now/M{yyyy.MM}}>')}/_doc/1?refresh=true`, { a: 1 }), 201)
    expect(written._index).toBe(`dm2-${month()}`)
    const got = await ok(api.call('admin', 'GET', `${path('<dm2-{now/M{yyyy.MM}}>')}/_doc/1`))
    expect({ index: got._index, found: got.found }).toEqual({ index: `dm2-${month()}`, found: true })
    const east = path('<dm4-{now/M{yyyy.MM|+12:00}}>')
    expect((await ok(api.call('admin', 'PUT', `${east}/_doc/1?refresh=true`, { a: 1 }), 201))._index).toBe(`dm4-${monthAt(12)}`)
    const found = await ok(api.call('admin', 'POST', `${east}/_search`, {}))
    expect(found.hits.total.value).toBe(1)
    // Date math first, then the wildcard.
    const aliases = await ok(api.call('admin', 'GET', `${path('<dm-{now/d}*>')}/_alias`))
    expect(aliases).toEqual({ [`dm-${today()}`]: { aliases: {} } })
  })

  test('bulk and mget index fields, msearch headers and alias actions', async () => {
    const bulk = await ok(
      api.call('admin', 'POST', '/_bulk?refresh=true', ndjson([{ index: { _index: '<dm3-{now/d}>', _id: '1' } }, { a: 1 }])),
    )
    expect(bulk.items[0].index._index).toBe(`dm3-${today()}`)
    const mget = await ok(api.call('admin', 'POST', '/_mget', { docs: [{ _index: '<dm3-{now/d}>', _id: '1' }] }))
    expect({ index: mget.docs[0]._index, found: mget.docs[0].found }).toEqual({ index: `dm3-${today()}`, found: true })
    const msearch = await ok(api.call('admin', 'POST', '/_msearch', ndjson([{ index: '<dm3-{now/d}>' }, { size: 0 }])))
    expect(msearch.responses[0].hits.total.value).toBe(1)
    await ok(api.call('admin', 'POST', '/_aliases', { actions: [{ add: { index: '<dm3-{now/d}>', alias: 'dm3-alias' } }] }))
    expect(await ok(api.call('admin', 'GET', '/_alias/dm3-alias'))).toEqual({ [`dm3-${today()}`]: { aliases: { 'dm3-alias': {} } } })
  })

  test('a missing one is named resolved; malformed ones are parse errors', async () => {
    const missing = await api.call('admin', 'POST', `${path('<nope-{now/M}>')}/_search`, {})
    const first = `${month()}.01`
    expect({ status: missing.status, reason: missing.body.error.reason }).toEqual({ status: 404, reason: `no such index [nope-${first}]` })
    const reason = async (name: string) => {
      const r = await api.call('admin', 'GET', `${path(name)}/_alias`)
      expect({ name, status: r.status, type: r.body.error.type }).toEqual({ name, status: 400, type: 'parse_exception' })
      return r.body.error.reason
    }
    expect(await reason('<dm3-{now/d>')).toBe('invalid dynamic name expression [dm3-{now/d>]. date math placeholder is open ended')
    expect(await reason('<dm3-}>')).toBe(
      'invalid dynamic name expression [dm3-}>]. invalid character at position [5]. `{` and `}` are reserved characters and should be escaped when used as part of the index name using `\\` (e.g. `\\{text\\}`)',
    )
    // An escaped brace is text.
    const escaped = await api.call('admin', 'GET', `${path('<th\\{x\\}>')}/_alias`)
    expect({ status: escaped.status, reason: escaped.body.error.reason }).toEqual({ status: 404, reason: 'no such index [th{x}]' })
  })

  test('the resolved name is what is authorized: a date math name opens no index the caller may not use', async () => {
    await ok(api.call('admin', 'PUT', path('<secret-{now/d}>')))
    await ok(api.call('admin', 'PUT', `${path('<secret-{now/d}>')}/_doc/1?refresh=true`, { a: 1 }), 201)
    for (const [method, target, body] of [
      ['POST', `${path('<secret-{now/d}>')}/_search`, {}],
      ['GET', `${path('<secret-{now/d}>')}/_doc/1`, undefined],
      ['PUT', `${path('<secret-{now/d}>')}/_doc/2`, { a: 2 }],
      ['POST', '/_mget', { docs: [{ _index: '<secret-{now/d}>', _id: '1' }] }],
    ] as const) {
      const r = await api.call('dina', method, target, body)
      const denied = r.status === 403 || r.body?.docs?.[0]?.error?.type === 'security_exception'
      expect({ target, denied }).toEqual({ target, denied: true })
    }
    const bulk = await ok(api.call('dina', 'POST', '/_bulk', ndjson([{ index: { _index: '<secret-{now/d}>', _id: '3' } }, { a: 3 }])))
    expect(bulk.items[0].index.status).toBe(403)
    // Her own pattern, named by date math, is hers.
    expect((await ok(api.call('dina', 'PUT', `${path('<dm-{now/d}>')}/_doc/9?refresh=true`, { a: 9 }), 201))._index).toBe(`dm-${today()}`)
  })
})

// Terms aggregations' partitioned `include`, `missing` on unmapped fields and include/exclude
// errors, over real HTTP. Every expected value is what a real OpenSearch 3.4 node answered to the
// same documents and requests.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ndjson, startIndexApi, type TestServer } from './helpers'

let api: TestServer

const N = 20
const DOCS = Array.from({ length: N }, (_, i) => ({
  s: `term-${i}`,
  l: i * 7919 - 50,
  d: i + 0.5,
  t: 1600000000000 + i * 86400000,
  ip: `10.0.0.${i}`,
}))

async function search(body: Record<string, unknown>) {
  return api.call('admin', 'POST', '/parts/_search', { size: 0, ...body })
}

async function partition(field: string, p: number): Promise<unknown[]> {
  const r = await search({ aggs: { a: { terms: { field, size: 100, include: { partition: p, num_partitions: 3 } } } } })
  expect(r.status).toBe(200)
  return r.body.aggregations.a.buckets.map((b: { key: unknown }) => b.key)
}

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  const put = await api.call('admin', 'PUT', '/parts', {
    mappings: {
      properties: { s: { type: 'keyword' }, l: { type: 'long' }, d: { type: 'double' }, t: { type: 'date' }, ip: { type: 'ip' } },
    },
  })
  expect(put.status).toBe(200)
  const lines = [...DOCS, { s: 'é日本', ip: '::1' }].flatMap((d) => [{ index: {} }, d])
  expect((await api.call('admin', 'POST', '/parts/_bulk?refresh=true', ndjson(lines))).body.errors).toBe(false)
})

afterAll(async () => {
  await api?.stop()
})

describe('terms include partitions (OpenSearch 3.4 answers)', () => {
  test('keyword terms: murmur3 of the UTF-8 bytes', async () => {
    expect(await partition('s', 0)).toEqual(['term-15', 'term-16', 'term-4', 'term-5'])
    expect(await partition('s', 1)).toEqual(['term-11', 'term-13', 'term-18', 'term-19', 'term-8', 'term-9'])
    expect(await partition('s', 2)).toEqual([
      'term-0',
      'term-1',
      'term-10',
      'term-12',
      'term-14',
      'term-17',
      'term-2',
      'term-3',
      'term-6',
      'term-7',
      'é日本',
    ])
  })

  test('long, double, date and ip terms', async () => {
    expect(await partition('l', 1)).toEqual([-50, 23707, 47464, 79140, 110816, 134573])
    expect(await partition('d', 0)).toEqual([0.5, 1.5, 2.5, 4.5, 7.5, 10.5, 17.5])
    expect(await partition('t', 1)).toEqual([1600691200000])
    expect(await partition('ip', 0)).toEqual(['::1', '10.0.0.3', '10.0.0.5', '10.0.0.8', '10.0.0.18', '10.0.0.19'])
    // The partitions of a field cover each term once (OpenSearch: 9, 1 and 10 dates).
    const all = [...(await partition('t', 0)), ...(await partition('t', 1)), ...(await partition('t', 2))]
    expect(new Set(all).size).toBe(N)
    expect((await partition('t', 2)).length).toBe(10)
  })

  test('malformed partitions are refused as OpenSearch refuses them', async () => {
    const reason = async (include: unknown, exclude?: unknown) => {
      const r = await search({ aggs: { a: { terms: { field: 's', include, ...(exclude ? { exclude } : {}) } } } })
      expect(r.status).toBe(400)
      return r.body.error.root_cause[0].reason
    }
    expect(await reason({ partition: 3, num_partitions: 3 })).toBe('Partition must be >=0 and < numPartition which is 3')
    expect(await reason({ partition: 0 })).toBe('Missing [num_partitions] parameter for partition-based include')
    expect(await reason({ num_partitions: 2 })).toBe('Missing [partition] parameter for partition-based include')
    expect(await reason({ partition: 0, num_partitions: 2, x: 1 })).toBe('Unknown parameter in Include/Exclude clause: x')
    expect(await reason({ partition: 0, num_partitions: 2 }, ['x'])).toBe(
      'Cannot specify any excludes when using a partition-based include',
    )
  })
})

describe('terms details', () => {
  // OpenSearch fails the shard with a 500; the request is at fault, so its words with a 400 here.
  test('a regular expression on a non-string field is refused with the shard failure of OpenSearch (400)', async () => {
    const r = await search({ aggs: { a: { terms: { field: 'ip', exclude: '1.*' } } } })
    expect(r.status).toBe(400)
    expect(r.body.error.type).toBe('search_phase_execution_exception')
    expect(r.body.error.root_cause[0]).toEqual({
      type: 'aggregation_execution_exception',
      reason:
        'Aggregation [a] cannot support regular expression style include/exclude settings as they can only be applied to string fields. Use an array of values for include/exclude clauses',
    })
  })

  test('missing on an unmapped field reads as value_type says', async () => {
    const one = async (terms: Record<string, unknown>) => (await search({ aggs: { a: { terms } } })).body.aggregations.a.buckets[0]
    expect(await one({ field: 'nope_b', value_type: 'boolean', missing: true })).toEqual({
      key: 1,
      key_as_string: 'true',
      doc_count: N + 1,
    })
    expect(await one({ field: 'nope_d', value_type: 'date', missing: '2016-05-11' })).toEqual({
      key: 1462924800000,
      key_as_string: '2016-05-11T00:00:00.000Z',
      doc_count: N + 1,
    })
  })
})

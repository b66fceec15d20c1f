// A date field's Java pattern formats over real HTTP: what a document may hold, how queries,
// aggregations and doc values read and render them, and the errors of a value a format cannot
// read. Every expected value is what OpenSearch 3.4 answered to the same requests.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ok, startIndexApi, type TestServer } from './helpers'

let api: TestServer

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
})

afterAll(async () => {
  await api?.stop()
})

/** The deepest cause of a refused write, or the instant and rendering of an accepted one. */
async function write(index: string, format: string, value: string): Promise<unknown> {
  if ((await api.call('admin', 'HEAD', `/${index}`)).status === 404)
    await ok(api.call('admin', 'PUT', `/${index}`, { mappings: { properties: { d: { type: 'date', format } } } }))
  const r = await api.call('admin', 'POST', `/${index}/_doc?refresh=true`, { d: value })
  if (r.status !== 201) {
    let cause = r.body.error
    while (cause.caused_by) cause = cause.caused_by
    return [r.status, cause.type, cause.reason]
  }
  const found = await ok(
    api.call('admin', 'POST', `/${index}/_search`, {
      query: { ids: { values: [r.body._id] } },
      sort: [{ d: 'asc' }],
      docvalue_fields: ['d'],
      _source: false,
    }),
  )
  return [found.hits.hits[0].sort[0], found.hits.hits[0].fields.d[0]]
}

describe('documents under a pattern format', () => {
  test('read as Java reads them, strictly; the ISO default does not stand in', async () => {
    expect(await write('f1', 'yyyy-MM-dd', '2024-01-05')).toEqual([1704412800000, '2024-01-05'])
    expect(await write('f1', 'yyyy-MM-dd', '0024-01-01')).toEqual([-61409836800000, '0024-01-01'])
    expect(await write('f1', 'yyyy-MM-dd', '2024-1-5')).toEqual([
      400,
      'date_time_parse_exception',
      "Text '2024-1-5' could not be parsed at index 5",
    ])
    expect(await write('f1', 'yyyy-MM-dd', '2024-01-05T10:00')).toEqual([
      400,
      'date_time_parse_exception',
      "Text '2024-01-05T10:00' could not be parsed, unparsed text found at index 10",
    ])
    expect(await write('f1', 'yyyy-MM-dd', '20240105')).toEqual([
      400,
      'date_time_parse_exception',
      "Text '20240105' could not be parsed at index 0",
    ])
    expect(await write('f1', 'yyyy-MM-dd', '2024-02-30')).toEqual([400, 'date_time_exception', "Invalid date 'FEBRUARY 30'"])
    expect(await write('f1', 'yyyy-MM-dd', '2024-13-01')).toEqual([
      400,
      'date_time_exception',
      'Invalid value for MonthOfYear (valid values 1 - 12): 13',
    ])
    expect(await write('f2', 'd/M/yyyy', '5/1/2024')).toEqual([1704412800000, '5/1/2024'])
    expect(await write('f2', 'd/M/yyyy', '15/12/2024')).toEqual([1734220800000, '15/12/2024'])
    expect(await write('f3', 'dd/MM/yyyy', '5/1/2024')).toEqual([
      400,
      'date_time_parse_exception',
      "Text '5/1/2024' could not be parsed at index 0",
    ])
    expect(await write('f3', 'dd/MM/yyyy', '05/01/24')).toEqual([
      400,
      'date_time_parse_exception',
      "Text '05/01/24' could not be parsed at index 6",
    ])
  })

  test('adjacent fields leave a variable width the digits the next ones need; names, AM/PM and offsets', async () => {
    expect(await write('f4', 'yyyyMMdd', '20240105')).toEqual([1704412800000, '20240105'])
    expect(await write('f4', 'yyyyMMdd', '2024015')).toEqual([
      400,
      'date_time_parse_exception',
      "Text '2024015' could not be parsed at index 6",
    ])
    expect(await write('f4', 'yyyyMMdd', '202401055')).toEqual([
      400,
      'date_time_parse_exception',
      "Text '202401055' could not be parsed at index 0",
    ])
    // OpenSearch's root locale names months and days short, at every width.
    expect(await write('f5', 'MMMM d, yyyy', 'Jan 5, 2024')).toEqual([1704412800000, 'Jan 5, 2024'])
    expect(await write('f5', 'MMMM d, yyyy', 'January 5, 2024')).toEqual([
      400,
      'date_time_parse_exception',
      "Text 'January 5, 2024' could not be parsed at index 3",
    ])
    expect(await write('f6', 'dd-MMM-yyyy', '05-jan-2024')).toEqual([
      400,
      'date_time_parse_exception',
      "Text '05-jan-2024' could not be parsed at index 3",
    ])
    expect(await write('f7', 'EEE, dd MMM yyyy HH:mm:ss', 'Mon, 05 Jan 2024 10:11:12')).toEqual([
      1704449472000,
      'Fri, 05 Jan 2024 10:11:12',
    ])
    expect(await write('f8', 'hh:mm a', '10:11 PM')).toEqual([79860000, '10:11 PM'])
    expect(await write('f8', 'hh:mm a', '13:00 PM')).toEqual([
      400,
      'date_time_exception',
      'Invalid value for ClockHourOfAmPm (valid values 1 - 12): 13',
    ])
    expect(await write('f9', "yyyy-MM-dd'T'HH:mm:ss.SSSXXX", '2024-01-05T10:11:12.123+02:00')).toEqual([
      1704442272123,
      '2024-01-05T08:11:12.123Z',
    ])
    expect(await write('f10', "yyyy-MM-dd'T'HH:mm:ssZ", '2024-01-05T10:11:12+0200')).toEqual([1704442272000, '2024-01-05T08:11:12+0000'])
    expect(await write('f11', 'yyyy-DDD', '2024-005')).toEqual([1704412800000, '2024-005'])
    expect(await write('f12', 'yyyy-MM-dd||epoch_millis', '1704412800000')).toEqual([1704412800000, '2024-01-05'])
    expect(await write('f12', 'yyyy-MM-dd||epoch_millis', 'abc')).toEqual([
      400,
      'date_time_parse_exception',
      'Failed to parse with all enclosed parsers',
    ])
  })

  test('a refused value names the field, then the format', async () => {
    await ok(api.call('admin', 'PUT', '/f13', { mappings: { properties: { d: { type: 'date', format: 'yyyy-MM-dd' } } } }))
    const r = await api.call('admin', 'PUT', '/f13/_doc/x', { d: '2024-1-5' })
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({
      type: 'mapper_parsing_exception',
      reason: "failed to parse field [d] of type [date] in document with id 'x'. Preview of field's value: '2024-1-5'",
      caused_by: {
        type: 'illegal_argument_exception',
        reason: 'failed to parse date field [2024-1-5] with format [yyyy-MM-dd]',
        caused_by: { type: 'date_time_parse_exception', reason: "Text '2024-1-5' could not be parsed at index 5" },
      },
    })
  })
})

describe('the default format and dynamic mapping', () => {
  test("a mapping's default reads strict ISO dates and epoch milliseconds only", async () => {
    const all = 'Failed to parse with all enclosed parsers'
    await ok(api.call('admin', 'PUT', '/iso', { mappings: { properties: { d: { type: 'date' } } } }))
    for (const value of ['2024-3-29', '2024-03-29 10:15', '2024/03/29', '20240329x'])
      expect(await write('iso', '', value)).toEqual([400, 'date_time_parse_exception', all])
    expect(await write('iso', '', '2024-03-29T10:15')).toEqual([1711707300000, '2024-03-29T10:15:00.000Z'])
    expect(await write('iso', '', '2024')).toEqual([1704067200000, '2024-01-01T00:00:00.000Z'])
    expect(await write('iso', '', '20240329')).toEqual([20240329, '1970-01-01T05:37:20.329Z'])
  })

  test('a slashed date maps with the format that reads it; a space-separated one as text', async () => {
    await ok(
      api.call('admin', 'PUT', '/dyn/_doc/1?refresh=true', {
        a: '2024/01/05 10:00:00',
        b: '2024-01-05 10:00:00',
        c: '2024-01-05',
        d: '2024/01/05',
      }),
      201,
    )
    const { properties } = (await ok(api.call('admin', 'GET', '/dyn/_mapping'))).dyn.mappings
    const slashed = { type: 'date', format: 'yyyy/MM/dd HH:mm:ss||yyyy/MM/dd||epoch_millis', print_format: 'yyyy/MM/dd HH:mm:ss' }
    expect(properties.a).toEqual(slashed)
    expect(properties.b.type).toBe('text')
    expect(properties.c).toEqual({ type: 'date' })
    expect(properties.d).toEqual(slashed)
  })
})

describe('searches over a pattern format', () => {
  beforeAll(async () => {
    await ok(api.call('admin', 'PUT', '/rq', { mappings: { properties: { d: { type: 'date', format: 'dd/MM/yyyy HH:mm' } } } }))
    const days = ['01/01/2024 00:00', '01/01/2024 23:59', '02/01/2024 00:00', '31/12/2023 23:30', '15/01/2024 12:00']
    const lines = days.flatMap((d, i) => [JSON.stringify({ index: { _id: String(i) } }), JSON.stringify({ d })])
    await ok(api.call('admin', 'POST', '/rq/_bulk?refresh=true', lines.join('\n') + '\n'))
  })
  const ids = async (query: unknown) =>
    ok(api.call('admin', 'POST', '/rq/_search', { query, sort: [{ d: 'asc' }] })).then((b) => b.hits.hits.map((h: any) => h._id))

  test("a range's bounds in the field's format or its own; rounding up fills the time of day only", async () => {
    expect(await ids({ range: { d: { lte: '01/01/2024 00:00' } } })).toEqual(['3', '0'])
    expect(await ids({ range: { d: { gte: '01/01/2024', lte: '01/01/2024', format: 'dd/MM/yyyy' } } })).toEqual(['0', '1'])
    expect(await ids({ range: { d: { gt: '01/01/2024', format: 'dd/MM/yyyy' } } })).toEqual(['2', '4'])
    expect(await ids({ range: { d: { lte: '2024', format: 'yyyy' } } })).toEqual(['3', '0', '1'])
    expect(await ids({ range: { d: { lte: '01/2024', format: 'MM/yyyy' } } })).toEqual(['3', '0', '1'])
    expect(await ids({ range: { d: { gte: '01/01/2024 00:00', time_zone: '+01:00' } } })).toEqual(['3', '0', '1', '2', '4'])
    expect(await ids({ range: { d: { gte: '01/01/2024 00:00||+1d/d' } } })).toEqual(['2', '4'])
    expect(await ids({ term: { d: '01/01/2024 23:59' } })).toEqual(['1'])
  })

  test('doc values, histogram keys and date ranges in the pattern', async () => {
    const body = await ok(
      api.call('admin', 'POST', '/rq/_search', {
        query: { ids: { values: ['1'] } },
        docvalue_fields: [{ field: 'd', format: 'EEE MMM dd yyyy hh:mm a XXX' }],
        _source: false,
        aggs: {
          h: { date_histogram: { field: 'd', calendar_interval: 'day', format: 'EEE dd MMM', min_doc_count: 1 } },
          r: { date_range: { field: 'd', ranges: [{ to: '01/01/2024 12:00' }, { from: '01/01/2024 12:00' }] } },
        },
      }),
    )
    expect(body.hits.hits[0].fields.d).toEqual(['Mon Jan 01 2024 11:59 PM Z'])
    expect(body.aggregations.h.buckets.map((b: any) => b.key_as_string)).toEqual(['Mon 01 Jan'])
    expect(body.aggregations.r.buckets.map((b: any) => [b.key, b.doc_count])).toEqual([
      ['*-01/01/2024 12:00', 0],
      ['01/01/2024 12:00-*', 1],
    ])
  })
})

describe("aggregations render dates in their own format, else the field's", () => {
  beforeAll(async () => {
    await ok(
      api.call('admin', 'PUT', '/ag', { mappings: { properties: { d: { type: 'date', format: 'dd/MM/yyyy HH:mm||epoch_millis' } } } }),
    )
    const days = ['01/01/2024 00:00', '01/01/2024 23:59', '02/01/2024 00:00', '31/12/2023 23:30', '15/01/2024 12:00']
    const lines = days.flatMap((d, i) => [JSON.stringify({ index: { _id: String(i) } }), JSON.stringify({ d })])
    await ok(api.call('admin', 'POST', '/ag/_bulk?refresh=true', lines.join('\n') + '\n'))
  })
  const aggs = async (body: unknown) => (await ok(api.call('admin', 'POST', '/ag/_search', { size: 0, aggs: body }))).aggregations

  test('metrics, terms and stats', async () => {
    const m = await aggs({
      lo: { min: { field: 'd' } },
      hi: { max: { field: 'd', format: "yyyy-MM-dd'T'HH" } },
      s: { stats: { field: 'd' } },
    })
    expect(m.lo.value_as_string).toBe('31/12/2023 23:30')
    expect(m.hi.value_as_string).toBe('2024-01-15T12')
    expect([m.s.min_as_string, m.s.avg_as_string, m.s.sum_as_string]).toEqual(['31/12/2023 23:30', '04/01/2024 07:05', '17/01/2240 11:29'])
    const p = await aggs({
      avg: { avg: { field: 'd' } },
      own: { percentiles: { field: 'd', percents: [50] } },
      given: { percentiles: { field: 'd', percents: [50], format: 'yyyy' } },
      ranks: { percentile_ranks: { field: 'd', values: [1704067200000] } },
    })
    expect(p.avg.value_as_string).toBe('04/01/2024 07:05')
    expect([p.own.values['50.0_as_string'], p.given.values['50.0_as_string']]).toEqual(['01/01/2024 23:59', '2024'])
    // A rank renders as the field's dates do, as OpenSearch renders it.
    expect(p.ranks.values['1.7040672E12_as_string']).toBe('01/01/1970 00:00')
    const t = await aggs({ own: { terms: { field: 'd', size: 2 } }, given: { terms: { field: 'd', size: 2, format: 'EEE dd MMM yyyy' } } })
    expect(t.own.buckets.map((b: any) => b.key_as_string)).toEqual(['31/12/2023 23:30', '01/01/2024 00:00'])
    expect(t.given.buckets.map((b: any) => b.key_as_string)).toEqual(['Sun 31 Dec 2023', 'Mon 01 Jan 2024'])
  })

  test("a histogram's bounds read in the field's format; composite keys in the source's, and its after", async () => {
    const h = await aggs({
      h: { date_histogram: { field: 'd', calendar_interval: 'day', hard_bounds: { min: '01/01/2024 00:00', max: '02/01/2024 00:00' } } },
    })
    expect(h.h.buckets.map((b: any) => [b.key_as_string, b.doc_count])).toEqual([['01/01/2024 00:00', 2]])
    const day = { date_histogram: { field: 'd', calendar_interval: 'day', format: 'dd.MM.yy' } }
    const c = await aggs({ c: { composite: { size: 2, after: { day: '31.12.23' }, sources: [{ day }] } } })
    expect(c.c.buckets.map((b: any) => [b.key.day, b.doc_count])).toEqual([
      ['01.01.24', 2],
      ['02.01.24', 1],
    ])
    expect(c.c.after_key).toEqual({ day: '02.01.24' })
  })
})

describe('a date query value its format cannot read', () => {
  beforeAll(async () => {
    await ok(
      api.call('admin', 'PUT', '/dq', { mappings: { properties: { d: { type: 'date' }, d2: { type: 'date', format: 'yyyy-MM-dd' } } } }),
    )
    await ok(api.call('admin', 'PUT', '/dq/_doc/1?refresh=true', { d: '2024-01-01', d2: '2024-01-01' }), 201)
  })
  const refused = async (query: unknown) => {
    const r = await api.call('admin', 'POST', '/dq/_search', { query })
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({ type: 'search_phase_execution_exception', reason: 'all shards failed', phase: 'query' })
    return r.body.error
  }
  const parse = (value: string, format: string, java: string) => {
    const named = `failed to parse date field [${value}] with format [${format}]`
    return {
      type: 'parse_exception',
      reason: `${named}: [${named}]`,
      caused_by: { type: 'illegal_argument_exception', reason: named, caused_by: { type: 'date_time_parse_exception', reason: java } },
    }
  }

  test("a term's shard wraps the parse_exception, which is the root cause", async () => {
    const error = await refused({ term: { d: 'abc' } })
    const why = parse('abc', 'strict_date_optional_time||epoch_millis', 'Failed to parse with all enclosed parsers')
    expect(error.root_cause).toEqual([{ type: why.type, reason: why.reason }])
    expect(error.caused_by).toEqual(why)
    expect(error.failed_shards[0].reason).toMatchObject({
      type: 'query_shard_exception',
      reason: `failed to create query: ${why.reason}`,
      index: 'dq',
      caused_by: why,
    })
    expect((await refused({ term: { d2: '2024/01/01' } })).caused_by).toEqual(
      parse('2024/01/01', 'yyyy-MM-dd', "Text '2024/01/01' could not be parsed at index 4"),
    )
  })

  test("a range's bound fails its shard with the parse_exception itself; date math's own errors too", async () => {
    const error = await refused({ range: { d2: { gte: 'abc' } } })
    const why = parse('abc', 'yyyy-MM-dd', "Text 'abc' could not be parsed at index 0")
    expect(error.failed_shards[0].reason).toEqual(why)
    expect(error.root_cause).toEqual([{ type: why.type, reason: why.reason }])
    expect(error.caused_by).toBeUndefined()
    // Date math's anchor is what the format reads.
    expect((await refused({ range: { d: { gte: 'abc||+1d' } } })).failed_shards[0].reason).toEqual(
      parse('abc', 'strict_date_optional_time||epoch_millis', 'Failed to parse with all enclosed parsers'),
    )
    expect((await refused({ range: { d: { gte: 'now+1x' } } })).failed_shards[0].reason).toEqual({
      type: 'parse_exception',
      reason: 'unit [x] not supported for date math [+1x]',
    })
  })
})

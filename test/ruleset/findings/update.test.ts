import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { appendFindings } from '../../../src/ruleset/findings/writer'
import { sampleFinding, startFindingsServer, type FindingsServer } from './harness'

const UPDATE = '/_plugins/_security_analytics/findings/_update'
const LIMIT = 'plugins.security_analytics.max_case_management_bulk_size'
/** Settings are cached for at most 1 s per node; waiting longer shows the next request sees a change. */
const SETTINGS_CACHE_MS = 1100

let s: FindingsServer
let f: Array<{ _id: string; _index: string }>

beforeAll(async () => {
  s = await startFindingsServer()
  f = await s.addFindings(Array.from({ length: 12 }, () => sampleFinding()))
})
afterAll(() => s.stop())

const item = (i: number, kase: Record<string, unknown>) => ({ _id: f[i]._id, _index: f[i]._index, case: kase })
const update = (body: unknown, user?: string) => s.request('PUT', UPDATE, { body, user })
const caseOf = async (i: number) => (await s.source(f[i]._index, f[i]._id)).svc.case

async function setLimit(value: number | null) {
  const r = await s.request('PUT', '/_cluster/settings', { body: { persistent: { [LIMIT]: value } } })
  expect(r.status).toBe(200)
  await Bun.sleep(SETTINGS_CACHE_MS)
}

describe('findings writer', () => {
  test("writes to the security findings stream's backing index, the stored document readable through the index API", async () => {
    expect(f[0]._index).toBe('.ds-svc-findings-v5-security-000001')
    const r = await s.request('GET', `/${f[0]._index}/_doc/${f[0]._id}`)
    expect(r.status).toBe(200)
    const doc = r.body._source
    expect(doc.event).toMatchObject({ action: 'login_failed', kind: 'event', index: '.ds-svc-events-v5-security-000001' })
    expect(doc.svc.rule).toMatchObject({ id: 'rule-medium', level: 'medium', tags: ['medium', 'linux', 'attack.credential-access'] })
    expect(doc.svc.detector).toEqual({ id: 'det-blue', type: 'linux' })
    expect(doc.svc.integration).toEqual({ name: 'linux', category: 'security' })
    expect(doc.svc.case).toBeUndefined()
  })

  test('op_type create: a finding with a given id is never overwritten', async () => {
    const first = await appendFindings(s.store, [{ ...sampleFinding(), id: 'fixed-finding-id' }])
    expect(first[0]).toMatchObject({ _id: 'fixed-finding-id', status: 201 })
    const again = await appendFindings(s.store, [{ ...sampleFinding({ title: 'other' }), id: 'fixed-finding-id' }])
    expect(again[0].status).toBe(409)
    expect((await s.source(first[0]._index, 'fixed-finding-id')).svc.rule.title).toBe('SSH failed password')
  })
})

describe("validation: 400 with the reference's message, first failure wins, nothing written", () => {
  const ok = () => ({ _id: f[0]._id, _index: f[0]._index, case: { title: 'x' } })
  // Validation precedes any store access, so these elements need no real finding.
  const el = (kase: unknown) => ({ findings: [{ _id: 'some-id', _index: '.ds-svc-findings-v5-security-000001', case: kase }] })
  const cases: Array<[string, unknown, string]> = [
    ['not an object body', [1, 2], 'Request body must contain a "findings" array'],
    ['findings missing', {}, 'Request body must contain a "findings" array'],
    ['findings not an array', { findings: { a: 1 } }, 'Request body must contain a "findings" array'],
    ['findings empty', { findings: [] }, 'Findings array is empty'],
    ['element not an object', { findings: [1] }, 'Element at index 0 is not a JSON object'],
    ['_id missing', { findings: [{ _index: 'i', case: {} }] }, 'Element at index 0 is missing _id'],
    ['_id blank', { findings: [{ _id: '  ', _index: 'i', case: {} }] }, 'Element at index 0 is missing _id'],
    ['_id a number', { findings: [{ _id: 7, _index: 'i', case: {} }] }, 'Element at index 0: _id must be a string'],
    ['_id an object', { findings: [{ _id: { a: 1 }, _index: 'i', case: {} }] }, 'Element at index 0: _id must be a string'],
    ['_index missing', { findings: [{ _id: 'a', case: {} }] }, 'Element at index 0 is missing _index'],
    ['_index blank', { findings: [{ _id: 'a', _index: '', case: {} }] }, 'Element at index 0 is missing _index'],
    ['_index an array', { findings: [{ _id: 'a', _index: ['x'], case: {} }] }, 'Element at index 0: _index must be a string'],
    ['case missing', { findings: [{ _id: 'a', _index: 'i' }] }, 'Element at index 0 is missing or invalid case object'],
    ['case an array', { findings: [{ _id: 'a', _index: 'i', case: [] }] }, 'Element at index 0 is missing or invalid case object'],
    ['unknown case field', el({ title: 't', assignee: 'bob' }), 'Element at index 0: unknown case field "assignee"'],
    ['status not a string', el({ status: 3 }), 'Element at index 0: status must be a string'],
    ['severity not a string', el({ severity: true }), 'Element at index 0: severity must be a string'],
    ['priority not a string', el({ priority: [] }), 'Element at index 0: priority must be a string'],
    ['tlp not a string', el({ tlp: 1 }), 'Element at index 0: tlp must be a string'],
    ['title not a string', el({ title: 1 }), 'Element at index 0: title must be a string'],
    ['description not a string', el({ description: {} }), 'Element at index 0: description must be a string'],
    ['created_at a boolean', el({ created_at: true }), 'Element at index 0: created_at must be a string or number'],
    ['updated_at an object', el({ updated_at: {} }), 'Element at index 0: updated_at must be a string or number'],
    ['tags not an array', el({ tags: 'ssh' }), 'Element at index 0: tags must be an array of strings'],
    ['tags with a number', el({ tags: ['ssh', 1] }), 'Element at index 0: tags must be an array of strings'],
    ['user not an object', el({ user: 'bob' }), 'Element at index 0: user must be an object'],
    ['unknown user field', el({ user: { name: 'bob', email: 'b@x' } }), 'Element at index 0: unknown user field "email"'],
    ['user.name not a string', el({ user: { name: 5 } }), 'Element at index 0: user.name must be a string'],
    ['comments not an array', el({ comments: { comment: 'x' } }), 'Element at index 0: comments must be an array'],
    ['comment not an object', el({ comments: [{ comment: 'a' }, 'b'] }), 'Element at index 0: comment at index 1 must be an object'],
    [
      'unknown comment field',
      el({ comments: [{ comment: 'a', likes: 2 }] }),
      'Element at index 0: unknown comment field "likes" at index 0',
    ],
    ['comment text not a string', el({ comments: [{ comment: 1 }] }), 'Element at index 0: comment.comment at index 0 must be a string'],
    [
      'comment author not a string',
      el({ comments: [{ author: ['a'] }] }),
      'Element at index 0: comment.author at index 0 must be a string',
    ],
    [
      'comment timestamp a boolean',
      el({ comments: [{ created_at: false }] }),
      'Element at index 0: comment.created_at at index 0 must be a string or number',
    ],
    // Check order: the unknown key is reported before the bad enum of the same case.
    ['unknown key before enum', el({ status: 'open', zzz: 1 }), 'Element at index 0: unknown case field "zzz"'],
    ['enum before text', el({ title: 1, status: 2 }), 'Element at index 0: status must be a string'],
    ['limit before elements', { findings: Array.from({ length: 11 }, () => 1) }, 'Cannot update more than 10 findings at once'],
  ]
  for (const [name, body, message] of cases) {
    test(name, async () => {
      const r = await update(body)
      expect(r.status).toBe(400)
      expect(r.body).toEqual({ message, status: 400 })
    })
  }

  const enumCases: Array<[string, string]> = [
    ['status', 'open'],
    ['severity', 'severe'],
    ['priority', 'p1'],
    ['tlp', 'GREEN'],
    ['tlp', 'TLP:WHITE'],
  ]
  for (const [field, value] of enumCases) {
    test(`${field} "${value}" is outside the allowed values`, async () => {
      const r = await update(el({ [field]: value }))
      expect(r.status).toBe(400)
      expect(r.body.message).toStartWith(`Element at index 0: invalid ${field} value "${value}"; allowed values: [`)
    })
  }

  test("invalid JSON and an empty body name the parser's complaint", async () => {
    for (const raw of ['{"findings": [', '', 'not json']) {
      const r = await s.request('PUT', UPDATE, { raw })
      expect(r.status).toBe(400)
      expect(r.body.status).toBe(400)
      expect(r.body.message).toStartWith('Invalid JSON body: ')
      expect(r.body.message.length).toBeGreaterThan('Invalid JSON body: '.length)
    }
  })

  test('a bad element after good ones names its index and nothing at all is written', async () => {
    const before = await s.source(f[1]._index, f[1]._id)
    const r = await update({
      findings: [item(1, { status: 'active', title: 'first' }), item(2, { title: 'ok' }), item(3, { severity: 'huge' })],
    })
    expect(r.status).toBe(400)
    expect(r.body.message).toStartWith('Element at index 2: invalid severity value "huge"')
    expect(await s.source(f[1]._index, f[1]._id)).toEqual(before)
    expect(await caseOf(2)).toBeUndefined()
  })

  test('null values pass validation and are stored as null', async () => {
    const r = await update({ findings: [item(11, { status: 'audit', title: 't' })] })
    expect(r.status).toBe(200)
    const r2 = await update({ findings: [item(11, { status: null, user: null, comments: null, tags: null })] })
    expect(r2.status).toBe(200)
    expect(await caseOf(11)).toEqual({ status: null, title: 't', user: null, comments: null, tags: null })
  })

  test('a body over 10 MiB is refused before it is parsed', async () => {
    const r = await s.request('PUT', UPDATE, { raw: `{"findings": [], "pad": "${'x'.repeat(10 * 1024 * 1024)}"}` })
    expect(r.status).toBe(413)
    expect(r.body.status).toBe(413)
  })

  test('an unauthenticated request is a 401', async () => {
    const r = await fetch(s.url + UPDATE, { method: 'PUT', body: JSON.stringify({ findings: [ok()] }) })
    expect(r.status).toBe(401)
  })

  test('the route needs the findings update permission', async () => {
    const r = await update({ findings: [ok()] }, 'nobody')
    expect(r.status).toBe(403)
    const v = await update({ findings: [ok()] }, 'viewer')
    expect(v.status).toBe(403)
    expect(await caseOf(0)).toBeUndefined()
  })
})

describe('normalization', () => {
  test('status, severity, priority lowercased; tlp uppercased with its prefix', async () => {
    const r = await update({ findings: [item(4, { status: 'ACKNOWLEDGED', severity: 'High', priority: 'URGENT', tlp: 'tlp:amber' })] })
    expect(r.status).toBe(200)
    expect(await caseOf(4)).toEqual({ status: 'acknowledged', severity: 'high', priority: 'urgent', tlp: 'TLP:AMBER' })
  })

  test('each allowed value of every list is accepted in any case', async () => {
    const lists = {
      status: ['active', 'acknowledged', 'completed', 'error', 'deleted', 'audit'],
      severity: ['informational', 'low', 'medium', 'high', 'critical'],
      priority: ['low', 'medium', 'high', 'urgent'],
      tlp: ['TLP:RED', 'TLP:AMBER', 'TLP:GREEN', 'TLP:CLEAR'],
    }
    for (const [field, values] of Object.entries(lists)) {
      for (const v of values) {
        const sent = field === 'tlp' ? v.toLowerCase() : v.toUpperCase()
        const r = await update({ findings: [item(5, { [field]: sent })] })
        expect(r.status).toBe(200)
        expect((await caseOf(5))[field]).toBe(v)
      }
    }
  })
})

describe('merge semantics', () => {
  test('only supplied fields change; user merges; arrays replace; the rest of the finding is untouched', async () => {
    const original = await s.source(f[6]._index, f[6]._id)
    const first = {
      title: 'Suspicious SSH activity',
      description: 'Repeated failures',
      status: 'active',
      tags: ['ssh', 'triage'],
      created_at: '2026-06-10T08:00:00.000Z',
      updated_at: 1781078400000,
      user: { name: 'analyst1' },
      comments: [
        { author: 'analyst1', comment: 'Looking', created_at: '2026-06-10T08:00:00.000Z', updated_at: '2026-06-10T08:00:00.000Z' },
        { author: 'analyst2', comment: 'Me too' },
      ],
    }
    expect((await update({ findings: [item(6, first)] })).status).toBe(200)
    expect(await caseOf(6)).toEqual(first)

    const second = { severity: 'critical', tags: ['escalated'], comments: [{ author: 'lead', comment: 'Escalating' }] }
    const r = await update({ findings: [item(6, second)] })
    expect(r.status).toBe(200)
    const after = await s.source(f[6]._index, f[6]._id)
    expect(after.svc.case).toEqual({ ...first, ...second })
    expect(after.svc.case.comments).toHaveLength(1)
    const { case: _, ...svcRest } = after.svc
    expect({ ...after, svc: svcRest }).toEqual(original)
  })

  test('the same case twice is a noop the second time', async () => {
    const body = { findings: [item(7, { title: 'same' })] }
    expect((await update(body)).body.items[0].result).toBe('updated')
    const again = await update(body)
    expect(again.status).toBe(200)
    expect(again.body.items[0]).toEqual({ _id: f[7]._id, _index: f[7]._index, status: 200, result: 'noop' })
  })
})

describe('limit setting, read on every request', () => {
  test('a lower limit applies to the next request; 0 disables the endpoint; reset restores 10', async () => {
    const three = { findings: [item(8, { title: 'a' }), item(9, { title: 'b' }), item(10, { title: 'c' })] }
    expect((await update(three)).status).toBe(200)

    await setLimit(2)
    const refused = await update(three)
    expect(refused.body).toEqual({ message: 'Cannot update more than 2 findings at once', status: 400 })
    expect((await update({ findings: three.findings.slice(0, 2) })).status).toBe(200)

    await setLimit(0)
    const disabled = await update({ findings: [item(8, { title: 'z' })] })
    expect(disabled.body).toEqual({ message: 'Case management is disabled', status: 400 })
    expect((await caseOf(8)).title).toBe('a')

    await setLimit(null)
    const ten = { findings: Array.from({ length: 10 }, (_, i) => item(i % 12, { tags: [`t${i}`] })) }
    expect((await update(ten)).status).toBe(200)
    const eleven = { findings: [...ten.findings, item(0, {})] }
    expect((await update(eleven)).body.message).toBe('Cannot update more than 10 findings at once')
  })

  test('the limit setting refuses values outside 0-100', async () => {
    const r = await s.request('PUT', '/_cluster/settings', { body: { persistent: { [LIMIT]: 101 } } })
    expect(r.status).toBe(400)
  })
})

describe('partial failure: 207 with per-item statuses in request order', () => {
  test('missing document 404, data stream name 400, unknown index 404, successes 200', async () => {
    const r = await update({
      findings: [
        { _id: 'no-such-finding', _index: f[0]._index, case: { title: 'x' } },
        item(1, { status: 'completed' }),
        { _id: f[2]._id, _index: 'svc-findings-v5-security', case: { title: 'via stream' } },
        { _id: f[3]._id, _index: 'no-such-index', case: { title: 'x' } },
        item(3, { priority: 'low' }),
      ],
    })
    expect(r.status).toBe(207)
    expect(r.body.errors).toBe(true)
    expect(typeof r.body.took).toBe('number')
    const items = r.body.items
    expect(items.map((i: any) => [i._id, i._index, i.status])).toEqual([
      ['no-such-finding', f[0]._index, 404],
      [f[1]._id, f[1]._index, 200],
      [f[2]._id, 'svc-findings-v5-security', 400],
      [f[3]._id, 'no-such-index', 404],
      [f[3]._id, f[3]._index, 200],
    ])
    for (const i of [0, 2, 3]) expect(typeof items[i].error).toBe('string')
    expect(items[1].result).toBe('updated')
    expect((await caseOf(1)).status).toBe('completed')
    expect((await caseOf(3)).priority).toBe('low')
    expect((await caseOf(2))?.title).not.toBe('via stream')
    expect(await s.store.existsIndex({ index: 'no-such-index' })).toBe(false)
  })

  test('an index the caller may not write is a 403 item; the writable one is updated', async () => {
    await s.store.index({ index: 'other-findings', id: 'o1', body: { note: 'not a finding' }, refresh: true })
    const r = await update(
      { findings: [{ _id: 'o1', _index: 'other-findings', case: { title: 'x' } }, item(2, { tlp: 'TLP:RED' })] },
      'analyst',
    )
    expect(r.body).toMatchObject({ errors: true })
    expect(r.status).toBe(207)
    expect(r.body.items[0]).toMatchObject({ _id: 'o1', _index: 'other-findings', status: 403 })
    expect(r.body.items[0].error).toContain('no permissions')
    expect(r.body.items[1]).toEqual({ _id: f[2]._id, _index: f[2]._index, status: 200, result: 'updated' })
    expect((await s.source('other-findings', 'o1')).svc).toBeUndefined()
    expect((await caseOf(2)).tlp).toBe('TLP:RED')
  })

  test('an unparsable date fails its item only', async () => {
    const r = await update({ findings: [item(9, { created_at: 'not a date' }), item(10, { updated_at: '2026-06-10T08:00:00Z' })] })
    expect(r.status).toBe(207)
    expect(r.body.items[0].status).toBe(400)
    expect(r.body.items[1].status).toBe(200)
  })

  test('all successful: 200, errors false, items in request order', async () => {
    const order = [5, 0, 9, 2]
    const r = await update({ findings: order.map((i) => item(i, { description: `d${i}` })) })
    expect(r.status).toBe(200)
    expect(r.body.errors).toBe(false)
    expect(r.body.items).toEqual(order.map((i) => ({ _id: f[i]._id, _index: f[i]._index, status: 200, result: 'updated' })))
  })
})

describe('searching findings by case status through the index API', () => {
  test('a term query on svc.case.status finds the updated finding; matching is case-sensitive', async () => {
    expect((await update({ findings: [item(7, { status: 'Error' })] })).status).toBe(200)
    const search = (value: string) =>
      s.request('POST', '/svc-findings-v5-*/_search', { body: { query: { term: { 'svc.case.status': value } } } })
    const hit = await search('error')
    expect(hit.status).toBe(200)
    expect(hit.body.hits.hits.map((h: any) => [h._id, h._index])).toEqual([[f[7]._id, f[7]._index]])
    expect(hit.body.hits.hits[0]._source.svc.case.status).toBe('error')
    expect((await search('Error')).body.hits.hits).toHaveLength(0)
  })
})

describe('concurrency: no field written by a request that answered 200 is lost', () => {
  test('10 parallel updates of different findings', async () => {
    const fresh = await s.addFindings(Array.from({ length: 10 }, () => sampleFinding()))
    const answers = await Promise.all(
      fresh.map((x, i) => update({ findings: [{ _id: x._id, _index: x._index, case: { title: `t${i}`, tags: [`tag${i}`] } }] })),
    )
    for (const a of answers) expect(a.status).toBe(200)
    for (let i = 0; i < fresh.length; i++) {
      const c = (await s.source(fresh[i]._index, fresh[i]._id)).svc.case
      expect(c).toEqual({ title: `t${i}`, tags: [`tag${i}`] })
    }
  })

  test('10 parallel updates of the same finding, each writing its own field, keep every field', async () => {
    const [x] = await s.addFindings([sampleFinding()])
    const parts: Array<Record<string, unknown>> = [
      { title: 'T' },
      { description: 'D' },
      { status: 'completed' },
      { severity: 'low' },
      { priority: 'high' },
      { tlp: 'TLP:GREEN' },
      { tags: ['a', 'b'] },
      { created_at: '2026-06-10T08:00:00.000Z' },
      { user: { name: 'u1' } },
      { comments: [{ comment: 'c' }] },
    ]
    const answers = await Promise.all(parts.map((kase) => update({ findings: [{ _id: x._id, _index: x._index, case: kase }] })))
    const expected: Record<string, unknown> = {}
    answers.forEach((a, i) => {
      expect(a.status).toBe(200)
      Object.assign(expected, parts[i])
    })
    expect((await s.source(x._index, x._id)).svc.case).toEqual(expected)
  })

  test('10 parallel writers of the same field: one value wins whole, other fields stay', async () => {
    const [x] = await s.addFindings([sampleFinding()])
    const at = { _id: x._id, _index: x._index }
    expect((await update({ findings: [{ ...at, case: { title: 'keep', priority: 'low' } }] })).status).toBe(200)
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        update({ findings: [{ ...at, case: { status: 'active', comments: [{ comment: `c${i}` }, { comment: `d${i}` }] } }] }),
      ),
    )
    for (const a of answers) expect(a.status).toBe(200)
    const c = (await s.source(x._index, x._id)).svc.case
    expect(c.title).toBe('keep')
    expect(c.priority).toBe('low')
    expect(c.status).toBe('active')
    const n = c.comments[0].comment.slice(1)
    expect(c.comments).toEqual([{ comment: `c${n}` }, { comment: `d${n}` }])
  })
})

// Logtest detection keeps an integration's rules between calls (issue 29, item 1): a change
// promoted to the test space must show in the very next answer, whatever was cached before.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { promoteDraft, winRule } from '../../helpers/content-rules'
import { startTestServer, type TestServer } from '../../helpers/server'

const PREFIX = '/_plugins/_content_manager'
let s: TestServer

beforeAll(async () => {
  s = await startTestServer()
})
afterAll(() => s.stop())

test('a rule changed, disabled or added in the test space changes the next logtest answer', async () => {
  const created = await s.request('POST', `${PREFIX}/integrations`, {
    body: { resource: { metadata: { title: 'win', author: 'me' }, category: 'security' } },
  })
  const integration = (created.body as { message: string }).message
  const first = await s.request('POST', `${PREFIX}/rules`, { body: { integration, resource: winRule('evil word', 'evil') } })
  const ruleId = (first.body as { message: string }).message
  await promoteDraft(s)

  const titles = async (line: string) => {
    const r = await s.request('POST', `${PREFIX}/logtest/detection`, {
      body: { space: 'test', integration, input: { process: { command_line: line } } },
    })
    expect(r.status).toBe(200)
    const m = (r.body as { message: { matches: Array<{ rule: { title: string } }> } }).message
    return m.matches.map((x) => x.rule.title).sort()
  }
  expect(await titles('run evil now')).toEqual(['evil word'])
  expect(await titles('run evil now')).toEqual(['evil word']) // from what the first call kept

  const updated = await s.request('PUT', `${PREFIX}/rules/${ruleId}`, {
    body: { resource: { ...winRule('evil word', 'wicked'), enabled: true } },
  })
  expect(updated.status).toBe(200)
  await promoteDraft(s)
  expect(await titles('run evil now')).toEqual([])
  expect(await titles('run wicked now')).toEqual(['evil word'])

  await s.request('POST', `${PREFIX}/rules`, { body: { integration, resource: winRule('second', 'now') } })
  await promoteDraft(s)
  expect(await titles('run wicked now')).toEqual(['evil word', 'second'])

  const disabled = await s.request('PUT', `${PREFIX}/rules/${ruleId}`, {
    body: { resource: { ...winRule('evil word', 'wicked'), enabled: false } },
  })
  expect(disabled.status).toBe(200)
  await promoteDraft(s)
  expect(await titles('run wicked now')).toEqual(['second'])
})

// What logtest keeps between calls is read again after any write to where it came from: the
// integration (a lookup that found nothing included), its rules, the stored filter rules and the
// log type's field mapping.
const integrationOf = async (title: string) => {
  const created = await s.request('POST', `${PREFIX}/integrations`, {
    body: { resource: { metadata: { title, author: 'me' }, category: 'security' } },
  })
  expect(created.status).toBe(201)
  return (created.body as { message: string }).message
}

const detect = (integration: string, line: string) =>
  s.request('POST', `${PREFIX}/logtest/detection`, {
    body: { space: 'test', integration, input: { process: { command_line: line } } },
  })

const matched = async (integration: string, line: string) => {
  const r = await detect(integration, line)
  expect(r.status).toBe(200)
  const m = (r.body as { message: { matches: Array<{ rule: { title: string } }> } }).message
  return m.matches.map((x) => x.rule.title).sort()
}

test('an integration missing from the test space is found by the next logtest call once promoted', async () => {
  const integration = await integrationOf('late')
  await s.request('POST', `${PREFIX}/rules`, {
    body: { integration, resource: { ...winRule('late rule', 'late'), logsource: { product: 'late' } } },
  })
  expect((await detect(integration, 'late')).status).toBe(400)
  expect((await detect(integration, 'late')).status).toBe(400) // from what the first call kept
  await promoteDraft(s)
  expect(await matched(integration, 'late')).toEqual(['late rule'])
})

test('a rule deleted from the draft space and promoted leaves the next logtest answer', async () => {
  const integration = await integrationOf('win-delete')
  const rule = (title: string, word: string) => ({ ...winRule(title, word), logsource: { product: 'win-delete' } })
  const kept = await s.request('POST', `${PREFIX}/rules`, { body: { integration, resource: rule('kept', 'word') } })
  const gone = await s.request('POST', `${PREFIX}/rules`, { body: { integration, resource: rule('gone', 'word') } })
  expect([kept.status, gone.status]).toEqual([201, 201])
  await promoteDraft(s)
  expect(await matched(integration, 'a word')).toEqual(['gone', 'kept'])
  expect(await matched(integration, 'a word')).toEqual(['gone', 'kept'])

  expect((await s.request('DELETE', `${PREFIX}/rules/${(gone.body as { message: string }).message}`)).status).toBe(200)
  await promoteDraft(s)
  expect(await matched(integration, 'a word')).toEqual(['kept'])
})

test('a filter rule created, changed or deleted through the rules API changes the next logtest answer', async () => {
  const integration = await integrationOf('win-filter')
  const created = await s.request('POST', `${PREFIX}/rules`, {
    body: { integration, resource: { ...winRule('filtered', 'evil'), logsource: { product: 'win-filter' } } },
  })
  expect(created.status).toBe(201)
  await promoteDraft(s)
  expect(await matched(integration, 'evil quiet')).toEqual(['filtered'])
  expect(await matched(integration, 'evil quiet')).toEqual(['filtered'])

  const filter = (word: string) =>
    `title: hush\nlogsource: {product: win-filter}\nfilter:\n  rules: any\n  s: {process.command_line|contains: ${word}}\n  condition: s`
  const SAP = '/_plugins/_security_analytics/rules'
  const put = await s.request('POST', `${SAP}?category=win-filter`, { body: filter('quiet') })
  expect(put.status).toBe(201)
  const id = (put.body as { _id: string })._id
  expect(await matched(integration, 'evil quiet')).toEqual([])
  expect(await matched(integration, 'evil loud')).toEqual(['filtered'])

  expect((await s.request('PUT', `${SAP}/${id}?category=win-filter`, { body: filter('loud') })).status).toBe(200)
  expect(await matched(integration, 'evil quiet')).toEqual(['filtered'])
  expect(await matched(integration, 'evil loud')).toEqual([])

  expect((await s.request('DELETE', `${SAP}/${id}`)).status).toBe(200)
  expect(await matched(integration, 'evil loud')).toEqual(['filtered'])
})

test("a change to the log type's field mapping changes the next logtest answer", async () => {
  const integration = await integrationOf('win-mapped')
  // `CommandLine` is no field of the event: only a mapping to `process.command_line` makes it match.
  const resource = {
    ...winRule('mapped', 'evil'),
    logsource: { product: 'win-mapped' },
    detection: { s: { 'CommandLine|contains': 'evil' }, condition: 's' },
  }
  expect((await s.request('POST', `${PREFIX}/rules`, { body: { integration, resource } })).status).toBe(201)
  await promoteDraft(s)
  expect(await matched(integration, 'evil')).toEqual([])
  expect(await matched(integration, 'evil')).toEqual([])

  const LOG_TYPES = '.platform-sap-log-types-config'
  const found = await s.request('POST', `/${LOG_TYPES}/_search`, { body: { query: { term: { name: 'win-mapped' } } } })
  const hits = (found.body as { hits: { hits: Array<{ _id: string }> } }).hits.hits
  expect(hits.length).toBeGreaterThan(0)
  for (const h of hits) {
    const r = await s.request('POST', `/${LOG_TYPES}/_update/${h._id}?refresh=true`, {
      body: { doc: { mappings: [{ raw_field: 'CommandLine', ecs: 'process.command_line', ocsf: 'process.command_line' }] } },
    })
    expect(r.status).toBe(200)
  }
  expect(await matched(integration, 'evil')).toEqual(['mapped'])
})

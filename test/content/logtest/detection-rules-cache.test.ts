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

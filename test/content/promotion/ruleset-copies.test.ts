// Step 4 of a promotion writes the promoted rules into Ruleset Management's copies of the target
// space together (RulesetSync.upsertRules): after each promotion, its rules of the test space are
// exactly the promoted ones, each once, with the promoted content (an update replaces the copy
// under the same id), and a removed rule's copy is gone.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { promoteDraft, winRule } from '../../helpers/content-rules'
import { startTestServer, type TestServer } from '../../helpers/server'

const PREFIX = '/_plugins/_content_manager'
const SA = '/_plugins/_security_analytics'
let s: TestServer

beforeAll(async () => {
  s = await startTestServer()
})
afterAll(() => s.stop())

/** Ruleset Management's rules of the test space: CTI id -> [stored id, title, level]. */
async function testCopies(): Promise<Record<string, [string, string, string]>> {
  const r = await s.request('POST', `${SA}/rules/_search?pre_packaged=false`, {
    body: { size: 100, query: { term: { 'rule.space': 'test' } } },
  })
  expect(r.status).toBe(200)
  const hits = (r.body as { hits: { hits: Array<{ _id: string; _source: { document: { id: string }; title: string; level: string } }> } })
    .hits.hits
  const out: Record<string, [string, string, string]> = {}
  for (const h of hits) {
    expect(out[h._source.document.id]).toBeUndefined() // one copy per rule
    out[h._source.document.id] = [h._id, h._source.title, h._source.level]
  }
  return out
}

test('promoted rules are added, replaced and removed in the test space of Ruleset Management', async () => {
  const created = await s.request('POST', `${PREFIX}/integrations`, {
    body: { resource: { metadata: { title: 'win', author: 'me' }, category: 'security' } },
  })
  const integration = (created.body as { message: string }).message
  const rule = async (title: string, word: string) => {
    const r = await s.request('POST', `${PREFIX}/rules`, { body: { integration, resource: winRule(title, word) } })
    expect(r.status).toBe(201)
    return (r.body as { message: string }).message
  }
  const ids = [await rule('one', 'a'), await rule('two', 'b'), await rule('three', 'c')]
  await promoteDraft(s)
  const first = await testCopies()
  expect(Object.fromEntries(Object.entries(first).map(([id, [, title, level]]) => [id, [title, level]]))).toEqual({
    [ids[0]]: ['one', 'high'],
    [ids[1]]: ['two', 'high'],
    [ids[2]]: ['three', 'high'],
  })

  // One updated, one added, one removed, then promoted again.
  expect(
    (await s.request('PUT', `${PREFIX}/rules/${ids[1]}`, { body: { resource: { ...winRule('two', 'b', 'low'), enabled: true } } })).status,
  ).toBe(200)
  const added = await rule('four', 'd')
  expect((await s.request('DELETE', `${PREFIX}/rules/${ids[2]}`)).status).toBe(200)
  await promoteDraft(s)
  const second = await testCopies()
  expect(Object.fromEntries(Object.entries(second).map(([id, [, title, level]]) => [id, [title, level]]))).toEqual({
    [ids[0]]: ['one', 'high'],
    [ids[1]]: ['two', 'low'],
    [added]: ['four', 'high'],
  })
  // The updated copy is the same document, replaced.
  expect(second[ids[1]][0]).toBe(first[ids[1]][0])
})

// Issue 29 item 5: rule creation keeps what it maintains per write (integration lists, their hashes,
// the space's aggregate hash) incrementally. After many creates, updates and deletes through the
// API, and promotions, every stored integration and every space hash must still be exactly what a
// from-scratch computation over the stored documents gives.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { documentHash } from '../../src/content/hash'
import type { Harness } from './harness'
import { dump, oracleSpaceHash, startContentApi, type ContentApi, type Dump } from './promotion/scenario'

let h: Harness
let api: ContentApi

beforeAll(async () => {
  ;({ h, api } = await startContentApi({ engine: 'mock', node: { 'plugins.content_manager.max_rules': 1000 } }))
})
afterAll(() => h.stop())

/** The rule ids each integration must list, in the order they were linked. */
const expected: Record<string, string[]> = {}
let created = 0

async function rules(integration: string, product: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) expected[integration].push(await api.rule(integration, `rule ${created++}`, product))
}

async function removeRule(integration: string, at: number): Promise<void> {
  const [id] = expected[integration].splice(at < 0 ? expected[integration].length + at : at, 1)
  await api.remove('rule', id)
}

/** The space as stored, checked against the expected lists and recomputed from scratch. */
async function check(what: string, space: string): Promise<Dump> {
  const d = await dump(h, space)
  for (const [id, doc] of Object.entries(d.integrations)) {
    const source = doc._source
    expect({ what, space, id, hash: source.hash.sha256 }).toEqual({ what, space, id, hash: documentHash(source.document) })
    expect({ what, space, id, rules: source.document.rules }).toEqual({ what, space, id, rules: expected[id] ?? [] })
  }
  const policy = d.policy.policy._source
  expect({ what, space, hash: policy.space?.hash?.sha256 }).toEqual({ what, space, hash: oracleSpaceHash(d) })
  expect({ what, space, known: await h.content.spaceHash(space as 'draft') }).toEqual({ what, space, known: oracleSpaceHash(d) })
  return d
}

describe('integration lists and space hashes after many writes', () => {
  test('equal a from-scratch computation after creates, updates, deletes and promotions', async () => {
    const a = await api.integration('alpha')
    const b = await api.integration('beta')
    expected[a] = []
    expected[b] = []
    await check('two empty integrations', 'draft')

    await rules(a, 'alpha', 60)
    await rules(b, 'beta', 20)
    await check('80 rules created', 'draft')

    // Deletes at the head, the tail and the middle of a list, between creates.
    await removeRule(a, 0)
    await removeRule(a, -1)
    await removeRule(a, 25)
    await rules(a, 'alpha', 5)
    await removeRule(b, 10)
    await check('rules deleted and created in turn', 'draft')

    // A listed rule changed (its hash moves, the list does not), and a decoder listed beside the rules.
    await api.update('rule', expected[a][3], (d) => ({ ...d, level: 'high' }))
    await api.decoder(a, 'decoder/alpha/0')
    await check('a rule updated, a decoder linked', 'draft')

    const preview = await api.preview('draft')
    expect(preview.status).toBe(200)
    expect((await api.promote('draft', preview.body.changes)).status).toBe(200)
    await check('after the first promotion', 'draft')
    // Promoted copies list the same ids, in the same order (the test space keeps the draft ids).
    await check('the promoted copy', 'test')

    // Changes after the promotion, then a second one: updates, adds and removals of rules.
    await rules(b, 'beta', 15)
    await removeRule(a, 7)
    await removeRule(b, 0)
    await api.update('rule', expected[b][4], (d) => ({ ...d, level: 'low' }))
    await check('draft changed after the promotion', 'draft')
    const again = await api.preview('draft')
    expect(again.body.changes.rules.map((c: { operation: string }) => c.operation).sort()).toContain('remove')
    expect((await api.promote('draft', again.body.changes)).status).toBe(200)
    await check('after the second promotion', 'draft')
    await check('the second promoted copy', 'test')

    // Everything unlinked again: the lists are empty and the hashes still agree.
    while (expected[a].length > 0) await removeRule(a, -1)
    await check('one integration emptied', 'draft')
  }, 120_000)
})

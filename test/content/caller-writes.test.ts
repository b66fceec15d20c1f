// A caller's write that fails after Ruleset Management or a parent link already changed (a
// platform refusal in platform mode, a conflict or a store fault in either mode) leaves the
// resource as it was: its Ruleset Management copy and its links are put back.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { CONTENT_ALIASES } from '../../src/setup/indices'
import { StoreError, VersionConflict } from '../../src/store/errors'
import { faultyStore, type FaultyStore } from '../fixtures/faulty-store'
import { integrationBody, PREFIX, ruleBody, startHarness, type Harness } from './harness'

let h: Harness
let store: FaultyStore

beforeAll(async () => {
  h = await startHarness({ engine: 'mock', wrapStore: (s) => (store = faultyStore(s)) })
})
afterAll(() => h.stop())

const onRules = (m: { index: string }) => m.index.startsWith('svc-threatintel-rules')
const refused = () => new StoreError('security_exception', 403, 'no permissions for [indices:data/write/delete] and User [name=admin]')

async function integrationWithRules(title: string, rules: string[]): Promise<{ parent: string; ids: string[] }> {
  const made = await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody(title) })
  expect(made.status).toBe(201)
  const ids: string[] = []
  for (const r of rules) {
    const rule = await h.request('POST', `${PREFIX}/rules`, { body: ruleBody(made.body.message, r, title) })
    expect(rule.status).toBe(201)
    ids.push(rule.body.message)
  }
  return { parent: made.body.message, ids }
}

const rulesOf = async (parent: string) => (await h.content.repo.getById(CONTENT_ALIASES.integrations, parent))!.document.rules
const callsFor = (id: string) => h.ruleset.calls.filter((c) => c.id === id).map((c) => [c.op, c.existed])

describe('compensation of a failed caller write', () => {
  test('create: the document write fails, the Ruleset Management copy is deleted again and nothing is linked', async () => {
    const { parent } = await integrationWithRules('comp-create', [])
    store.arm({ failAt: [1], match: onRules, error: () => refused() })
    const r = await h.request('POST', `${PREFIX}/rules`, { body: ruleBody(parent, 'never', 'comp-create') })
    store.disarm()
    expect(r.status).toBe(403)
    const upserted = h.ruleset.calls.filter((c) => c.op === 'upsertRule').at(-1)!
    expect(callsFor(upserted.id)).toEqual([
      ['upsertRule', false],
      ['deleteRule', undefined],
    ])
    expect(await rulesOf(parent)).toEqual([])
  })

  test('update: the replace fails, the stored version goes back to Ruleset Management', async () => {
    const { ids } = await integrationWithRules('comp-update', ['to-update'])
    const stored = (await h.content.repo.getById(CONTENT_ALIASES.rules, ids[0]))!
    store.arm({ failAt: [1], match: onRules, error: (n) => new VersionConflict(`conflict ${n}`, 'svc-threatintel-rules') })
    const r = await h.request('PUT', `${PREFIX}/rules/${ids[0]}`, { body: { resource: { ...stored.document, level: 'high' } } })
    store.disarm()
    expect(r.status).toBe(409)
    // Created, then the new version, then the stored one again.
    expect(callsFor(ids[0])).toEqual([
      ['upsertRule', false],
      ['upsertRule', true],
      ['upsertRule', true],
    ])
    expect((await h.content.repo.getById(CONTENT_ALIASES.rules, ids[0]))!.document.level).toBe('low')
  })

  test('delete: unlinked, then the delete fails: the link is back in its place and the copy re-created', async () => {
    const { parent, ids } = await integrationWithRules('comp-delete', ['first', 'middle', 'last'])
    const before = await rulesOf(parent)
    store.arm({ failAt: [1], match: (m) => onRules(m) && m.op === 'delete', error: () => refused() })
    const r = await h.request('DELETE', `${PREFIX}/rules/${ids[1]}`)
    store.disarm()
    expect(r).toMatchObject({ status: 403, body: { message: expect.stringContaining('no permissions for [indices:data/write/delete]') } })
    expect(await rulesOf(parent)).toEqual(before)
    expect(callsFor(ids[1])).toEqual([
      ['upsertRule', false],
      ['deleteRule', undefined],
      ['upsertRule', false],
    ])
    expect(await h.content.repo.getById(CONTENT_ALIASES.rules, ids[1])).toBeDefined()
    // Without the fault the same delete goes through.
    expect((await h.request('DELETE', `${PREFIX}/rules/${ids[1]}`)).status).toBe(200)
    expect(await rulesOf(parent)).toEqual([ids[0], ids[2]])
  })
})

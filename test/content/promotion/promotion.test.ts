// Promotion draft -> test -> custom over HTTP, with realistic changesets built through the resource
// API, checked document by document against an independent oracle; and the rollback proven for a
// failure at every position of an 18-mutation changeset by comparing full dumps of the target.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { documentHash } from '../../../src/content/hash'
import { faultyStore, type FaultyStore } from '../../fixtures/faulty-store'
import type { Harness } from '../harness'
import {
  startContentApi,
  dump,
  expectDump,
  expectedTarget,
  noChanges,
  oracleSpaceHash,
  sorted,
  type ContentApi,
  type Changes,
  type Dump,
} from './scenario'

let h: Harness
let store: FaultyStore
let api: ContentApi
const ids: Record<string, string> = {}
const content = (m: { index: string }) => m.index.startsWith('svc-threatintel-')

beforeAll(async () => {
  ;({ h, api } = await startContentApi({ wrapStore: (s) => (store = faultyStore(s)) }))
})
afterAll(() => h.stop())

/** Round 1: every content type in draft, and a changed draft policy. */
async function buildDraft() {
  ids.web = await api.integration('web-access')
  ids.fw = await api.integration('firewall')
  ids.legacy = await api.integration('legacy')
  ids.d1 = await api.decoder(ids.web, 'decoder/web-access/0')
  ids.d2 = await api.decoder(ids.web, 'decoder/web-error/0')
  ids.d3 = await api.decoder(ids.fw, 'decoder/firewall/0')
  ids.k1 = await api.kvdb(ids.web, 'status-codes')
  ids.k2 = await api.kvdb(ids.fw, 'ports')
  ids.r1 = await api.rule(ids.web, 'web scan', 'web-access')
  ids.r2 = await api.rule(ids.web, 'web brute force', 'web-access')
  ids.r3 = await api.rule(ids.fw, 'port sweep', 'firewall')
  ids.r4 = await api.rule(ids.legacy, 'legacy login', 'legacy')
  ids.f1 = await api.filter('filter/prefilter/0')
  ids.f2 = await api.filter('filter/prefilter/1')
  await api.draftPolicy((p) => ({ ...p, metadata: { ...p.metadata, description: 'Round one' } }))
}

/** Round 2: updates, adds and removals of every type (18 mutations once promoted). */
async function changeDraft() {
  await api.update('integration', ids.web, (d) => ({ ...d, metadata: { ...d.metadata, description: 'web logs, v2' } }))
  await api.remove('rule', ids.r4)
  await api.remove('integration', ids.legacy)
  ids.dns = await api.integration('dns')
  ids.d4 = await api.decoder(ids.dns, 'decoder/dns/0')
  ids.k3 = await api.kvdb(ids.dns, 'tlds')
  ids.r5 = await api.rule(ids.dns, 'dns tunnel', 'dns')
  await api.update('decoder', ids.d1, (d) => ({ ...d, normalize: [{ map: [{ 'event.kind': 'event' }, { 'event.category': 'web' }] }] }))
  await api.remove('decoder', ids.d2)
  await api.update('kvdb', ids.k1, (d) => ({ ...d, content: { ...d.content, '404': 'not found' } }))
  await api.remove('kvdb', ids.k2)
  await api.update('filter', ids.f1, (d) => ({ ...d, check: "$host.os.platform == 'debian'" }), { space: 'draft' })
  await api.remove('filter', ids.f2)
  ids.f3 = await api.filter('filter/postfilter/0')
  await api.update('rule', ids.r1, (d) => ({ ...d, level: 'high' }))
  await api.remove('rule', ids.r2)
}

const round1 = (): Changes => ({
  policy: [{ operation: 'update', id: '' }],
  integrations: ['web', 'fw', 'legacy'].map((k) => ({ operation: 'add', id: ids[k] })),
  kvdbs: ['k1', 'k2'].map((k) => ({ operation: 'add', id: ids[k] })),
  decoders: ['d1', 'd2', 'd3'].map((k) => ({ operation: 'add', id: ids[k] })),
  filters: ['f1', 'f2'].map((k) => ({ operation: 'add', id: ids[k] })),
  rules: ['r1', 'r2', 'r3', 'r4'].map((k) => ({ operation: 'add', id: ids[k] })),
})

const round2 = (): Changes => {
  const c = (operation: 'add' | 'update' | 'remove', ...keys: string[]) => keys.map((k) => ({ operation, id: ids[k] }))
  return {
    policy: [{ operation: 'update', id: '' }],
    integrations: [...c('update', 'web', 'fw'), ...c('add', 'dns'), ...c('remove', 'legacy')],
    kvdbs: [...c('update', 'k1'), ...c('add', 'k3'), ...c('remove', 'k2')],
    decoders: [...c('update', 'd1'), ...c('add', 'd4'), ...c('remove', 'd2')],
    filters: [...c('update', 'f1'), ...c('add', 'f3'), ...c('remove', 'f2')],
    rules: [...c('update', 'r1'), ...c('add', 'r5'), ...c('remove', 'r2', 'r4')],
  }
}

const withPolicyId = async (c: Changes, space: string): Promise<Changes> => {
  const policy = await h.content.repo.policy(space)
  return { ...c, policy: c.policy.map((p) => ({ ...p, id: String(policy!.document.id) })) }
}
const mutationCount = (c: Changes) => Object.values(c).reduce((n, list) => n + list.length, 0)

describe('draft -> test -> custom', () => {
  let draftAfterRound1: Dump

  test('round 1: the preview lists every draft resource as an add and the changed policy as an update', async () => {
    await buildDraft()
    const expected = await withPolicyId(round1(), 'draft')
    const r = await api.preview('draft')
    expect(r.status).toBe(200)
    expect(Object.keys(r.body)).toEqual(['changes'])
    expect(sorted(r.body.changes)).toEqual(sorted(expected))
  })

  test('round 1: promoting copies every source document into test, hashes included, and recomputes the test hash', async () => {
    const changes = await withPolicyId(round1(), 'draft')
    const [before, source] = [await dump(h, 'test'), await dump(h, 'draft')]
    const calls = h.ruleset.calls.length
    const r = await api.promote('draft', changes)
    expect(r).toMatchObject({ status: 200, body: { message: 'Promotion completed successfully.', status: 200 } })
    const after = await dump(h, 'test')
    expectDump(after, expectedTarget(before, source, changes, 'test'))
    // Promoted copies keep the source hash, which is the hash of the document they carry.
    for (const key of Object.keys(source.rules)) expect(after.rules[key]._source.hash.sha256).toBe(source.rules[key]._source.hash.sha256)
    expect(after.policy.policy._source.hash.sha256).toBe(documentHash(after.policy.policy._source.document))
    expect(after.policy.policy._source.space.hash.sha256).toBe(oracleSpaceHash(after))
    // Ruleset Management received the integrations first, then the rules linked to them, as new.
    const synced = h.ruleset.calls.slice(calls)
    expect(synced.map((c) => c.op)).toEqual([...Array(3).fill('upsertIntegration'), ...Array(4).fill('upsertRule')])
    expect(synced.every((c) => c.space === 'test' && c.existed === false)).toBe(true)
    expect(synced.find((c) => c.id === ids.r3)?.parent).toBe(ids.fw)
    expect(synced.find((c) => c.id === ids.r4)?.parent).toBe(ids.legacy)
    // Nothing is left to promote; the draft is untouched.
    expect((await api.preview('draft')).body).toEqual({ changes: noChanges() })
    expect(await dump(h, 'draft')).toEqual(source)
    draftAfterRound1 = source
  })

  test('round 2: the preview lists updates, adds and removals of every type', async () => {
    await changeDraft()
    expect(await dump(h, 'draft')).not.toEqual(draftAfterRound1)
    const expected = await withPolicyId(round2(), 'draft')
    expect(mutationCount(expected)).toBeGreaterThanOrEqual(12)
    const r = await api.preview('draft')
    expect(r.status).toBe(200)
    expect(sorted(r.body.changes)).toEqual(sorted(expected))
  })

  for (const mode of ['item', 'request', 'lost-response'] as const) {
    test(`round 2, bulk failure mode "${mode}": a failure at every mutation position leaves test exactly as it was`, async () => {
      const changes = await withPolicyId(round2(), 'draft')
      const total = mutationCount(changes)
      const before = await dump(h, 'test')
      const draft = await dump(h, 'draft')
      for (let n = 1; n <= total; n++) {
        const calls = h.ruleset.calls.length
        store.arm({ failAt: [n], match: content, bulk: mode })
        const r = await api.promote('draft', changes)
        const mutations = store.disarm()
        expect({ n, status: r.status }).toEqual({ n, status: 500 })
        expect(r.body.message).toStartWith('Internal Server Error. Promotion of space [draft] into [test] failed and was rolled back')
        expect(r.body.message).not.toContain('rollback step(s) failed')
        // The injected fault was hit at position n, during step 3.
        expect(mutations.find((m) => m.failed)?.n).toBe(n)
        const after = await dump(h, 'test')
        expect({ n, after }).toEqual({ n, after: before })
        expect(await dump(h, 'draft')).toEqual(draft)
        // No forward sync reached Ruleset Management; only the reconciliation in the spec's order.
        const reconcile = h.ruleset.calls.slice(calls)
        const phase = (c: (typeof reconcile)[number]) =>
          c.op.endsWith('Rule') && c.existed !== false
            ? 1
            : c.op.endsWith('Integration') && c.existed !== false
              ? 2
              : c.op === 'upsertIntegration'
                ? 3
                : 4
        const phases = reconcile.map(phase)
        expect(phases).toEqual([...phases].sort())
      }
    })
  }

  test('a failure at the last mutation reconciles Ruleset Management in the spec order with the pre-promotion versions', async () => {
    const changes = await withPolicyId(round2(), 'draft')
    const total = mutationCount(changes)
    const before = await dump(h, 'test')
    const calls = h.ruleset.calls.length
    store.arm({ failAt: [total], match: content })
    expect((await api.promote('draft', changes)).status).toBe(500)
    store.disarm()
    expect(h.ruleset.calls.slice(calls)).toEqual([
      // revert applied rules: the update restored, the add deleted
      { op: 'upsertRule', space: 'test', id: ids.r1, existed: true, parent: ids.web },
      { op: 'deleteRule', space: 'test', id: ids.r5 },
      // revert applied integrations
      { op: 'upsertIntegration', space: 'test', id: ids.web, existed: true },
      { op: 'upsertIntegration', space: 'test', id: ids.fw, existed: true },
      { op: 'deleteIntegration', space: 'test', id: ids.dns },
      // restore deleted integrations, then deleted rules (r2 was applied; r4 was the failing item)
      { op: 'upsertIntegration', space: 'test', id: ids.legacy, existed: false },
      { op: 'upsertRule', space: 'test', id: ids.r2, existed: false, parent: ids.web },
    ])
    expect(await dump(h, 'test')).toEqual(before)
    const entry = h.journal.entries('promotion.rolled_back')[0]
    expect(entry).toMatchObject({ subject: 'test', detail: { source: 'draft', undoFailures: 0 } })
    expect(entry.detail.undone).toBe(total - 1)
  })

  test('a failing rollback step is logged and skipped; the others are undone and the hash describes what is left', async () => {
    const changes = await withPolicyId(round2(), 'draft')
    const [before, source] = [await dump(h, 'test'), await dump(h, 'draft')]
    // Positions: 1 policy, 2-4 the integration adds/updates (web, fw, dns). The dns item fails, so
    // the policy, web and fw are undone in reverse; the first undo (fw, position 5) fails as well.
    store.arm({ failAt: [4, 5], match: content })
    const r = await api.promote('draft', changes)
    const mutations = store.disarm()
    expect(r.status).toBe(500)
    expect(r.body.message).toContain('1 rollback step(s) failed')
    expect(mutations[3]).toMatchObject({ n: 4, op: 'index', via: 'bulk', failed: true })
    expect(mutations.slice(4).map((m) => [m.n, m.op, m.id, m.failed])).toEqual([
      [5, 'index', before.integrations[ids.fw]._id, true],
      [6, 'index', before.integrations[ids.web]._id, false],
      [7, 'index', before.policy.policy._id, false],
      // a partial restore: the aggregate hash is rewritten over what is really there
      [8, 'update', before.policy.policy._id, false],
    ])
    const failure = h.journal.entries('promotion.rollback_step_failed')[0]
    expect(failure).toMatchObject({
      subject: 'test',
      detail: { list: 'integrations', id: ids.fw, targetId: before.integrations[ids.fw]._id },
    })
    // fw kept its promoted version; everything else is back.
    const after = await dump(h, 'test')
    expect(after.integrations[ids.fw]._source).toEqual({ ...source.integrations[ids.fw]._source, space: { name: 'test' } })
    expect({ ...after.integrations, [ids.fw]: null }).toEqual({ ...before.integrations, [ids.fw]: null })
    for (const list of ['kvdbs', 'decoders', 'filters', 'rules'] as const) expect(after[list]).toEqual(before[list])
    expect(after.policy.policy._source.document).toEqual(before.policy.policy._source.document)
    // With a partial restore the stored aggregate hash is recomputed over what is really there.
    expect(after.policy.policy._source.space.hash.sha256).toBe(oracleSpaceHash(after))
    expect(after.policy.policy._source.space.hash.sha256).not.toBe(before.policy.policy._source.space.hash.sha256)
    // Put fw back the way an operator would, from the snapshot, and the space is whole again.
    const index = await h.content.repo.concrete('svc-threatintel-integrations')
    await h.store.index({ index, id: before.integrations[ids.fw]._id, body: before.integrations[ids.fw]._source, refresh: true })
    await h.content.recomputeSpaces(['test'])
    expect(await dump(h, 'test')).toEqual(before)
  })

  test('round 2 applied: test equals the oracle, existing copies are overwritten in place, Ruleset Management synced', async () => {
    const changes = await withPolicyId(round2(), 'draft')
    const [before, source] = [await dump(h, 'test'), await dump(h, 'draft')]
    const calls = h.ruleset.calls.length
    store.arm({ failAt: [], match: content })
    const r = await api.promote('draft', changes)
    const mutations = store.disarm()
    expect(r.status).toBe(200)
    // One bulk item per change. The copied policy carries the draft's aggregate hash, which is
    // already right for a test space that now equals the draft: the recompute writes nothing.
    expect(mutations.map((m) => m.via)).toEqual(Array(mutationCount(changes)).fill('bulk'))
    expectDump(await dump(h, 'test'), expectedTarget(before, source, changes, 'test'))
    expect(h.ruleset.calls.slice(calls)).toEqual([
      { op: 'deleteRule', space: 'test', id: ids.r2 },
      { op: 'deleteRule', space: 'test', id: ids.r4 },
      { op: 'deleteIntegration', space: 'test', id: ids.legacy },
      { op: 'upsertIntegration', space: 'test', id: ids.web, existed: true },
      { op: 'upsertIntegration', space: 'test', id: ids.fw, existed: true },
      { op: 'upsertIntegration', space: 'test', id: ids.dns, existed: false },
      { op: 'upsertRule', space: 'test', id: ids.r1, existed: true, parent: ids.web },
      { op: 'upsertRule', space: 'test', id: ids.r5, existed: false, parent: ids.dns },
    ])
    expect((await api.preview('draft')).body).toEqual({ changes: noChanges() })
  })

  test('test -> custom: the preview offers the whole test space and promoting it makes custom its copy', async () => {
    const test_ = await dump(h, 'test')
    const r = await api.preview('test')
    expect(r.status).toBe(200)
    const expected = noChanges()
    expected.policy = [{ operation: 'update', id: String(test_.policy.policy._source.document.id) }]
    for (const list of ['integrations', 'kvdbs', 'decoders', 'filters', 'rules'] as const) {
      expected[list] = Object.keys(test_[list]).map((id) => ({ operation: 'add', id }))
    }
    expect(sorted(r.body.changes)).toEqual(sorted(expected))
    const before = await dump(h, 'custom')
    expect((await api.promote('test', r.body.changes)).status).toBe(200)
    const custom = await dump(h, 'custom')
    expectDump(custom, expectedTarget(before, test_, expected, 'custom'))
    // Same documents as test, space aside; the aggregate hashes agree because the content does.
    expect(custom.policy.policy._source.space.hash.sha256).toBe(test_.policy.policy._source.space.hash.sha256)
    expect((await api.preview('test')).body).toEqual({ changes: noChanges() })
    expect(await dump(h, 'test')).toEqual(test_)
  })

  test('a later draft change flows to test as an update of the same copy, then to custom', async () => {
    await api.update('rule', ids.r3, (d) => ({ ...d, level: 'critical' }))
    const preview = await api.preview('draft')
    expect(preview.body.changes).toEqual({ ...noChanges(), rules: [{ operation: 'update', id: ids.r3 }] })
    const testBefore = await dump(h, 'test')
    expect((await api.promote('draft', preview.body.changes)).status).toBe(200)
    const testAfter = await dump(h, 'test')
    expect(testAfter.rules[ids.r3]._id).toBe(testBefore.rules[ids.r3]._id)
    expect(testAfter.rules[ids.r3]._source.document.level).toBe('critical')
    // The rule is linked into the space through its integration, so the test hash moved.
    expect(testAfter.policy.policy._source.space.hash.sha256).not.toBe(testBefore.policy.policy._source.space.hash.sha256)
    const next = await api.preview('test')
    expect(next.body.changes).toEqual({ ...noChanges(), rules: [{ operation: 'update', id: ids.r3 }] })
    expect((await api.promote('test', next.body.changes)).status).toBe(200)
    expect((await dump(h, 'custom')).rules[ids.r3]._source).toEqual({ ...testAfter.rules[ids.r3]._source, space: { name: 'custom' } })
  })
})

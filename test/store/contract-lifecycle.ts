/**
 * The Store contract for lifecycle (ISM) policies: what the index-management plugin answers to
 * `PUT/GET/DELETE _plugins/_ism/policies/<id>`, whichever adapter serves it. Registered by
 * `runStoreContract`. Ids and patterns are unique per test, and every test removes its policies,
 * because a real platform keeps them across tests (and ISM refuses two policies whose templates
 * overlap at the same priority).
 */
import { describe, expect, test as bunTest } from 'bun:test'
import { IllegalArgument, PolicyNotFound, StoreError, VersionConflict } from '../../src/store/errors'
import type { IsmPolicyBody, Store } from '../../src/store/port'

let seq = 0
const unique = (what: string) => `contract-${what}-${Date.now().toString(36)}-${++seq}`

function policyBody(pattern: string, deleteAfter = '3d', extra: Record<string, unknown> = {}): IsmPolicyBody {
  return {
    policy: {
      description: `contract ${pattern}`,
      default_state: 'hot',
      states: [
        {
          name: 'hot',
          actions: [{ rollover: { min_doc_count: 1000 } }],
          transitions: [{ state_name: 'delete', conditions: { min_index_age: deleteAfter } }],
        },
        { name: 'delete', actions: [{ delete: {} }], transitions: [] },
      ],
      ism_template: [{ index_patterns: [`${pattern}*`], priority: 7 }],
      ...extra,
    },
  }
}

/**
 * `noIsm`: why the store's platform cannot run these (a platform without the index-management
 * plugin); the tests are then skipped, named with that reason.
 */
export function storeLifecycleContract(store: () => Store, noIsm?: string): void {
  const test = noIsm === undefined ? bunTest : bunTest.skip
  const error = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (e: unknown) => e as StoreError,
    )

  async function withPolicies(ids: string[], body: () => Promise<void>) {
    try {
      await body()
    } finally {
      for (const id of ids)
        await store()
          .deleteLifecyclePolicy({ id })
          .catch(() => {})
    }
  }

  describe(noIsm === undefined ? 'lifecycle (ISM) policies' : `lifecycle (ISM) policies (SKIPPED: ${noIsm})`, () => {
    test('a PUT creates the policy (the server fills policy_id and last_updated_time); GET answers it with its version', async () => {
      const id = unique('create')
      await withPolicies([id], async () => {
        const before = Date.now()
        const put = await store().putLifecyclePolicy({ id, body: policyBody(id) })
        expect(put).toMatchObject({
          _id: id,
          _version: 1,
          policy: { policy: { policy_id: id, description: `contract ${id}`, default_state: 'hot' } },
        })
        expect(typeof put._seq_no).toBe('number')
        expect(typeof put._primary_term).toBe('number')
        const got = await store().getLifecyclePolicy({ id })
        expect(got).toMatchObject({ _id: id, _version: 1, _seq_no: put._seq_no, _primary_term: put._primary_term })
        expect(got.policy.policy_id).toBe(id)
        expect(got.policy.last_updated_time).toBeGreaterThanOrEqual(before - 1000)
        expect(got.policy.states.map((s) => s.name)).toEqual(['hot', 'delete'])
        expect(got.policy.states[0].transitions).toEqual([{ state_name: 'delete', conditions: { min_index_age: '3d' } }])
        const templates = [got.policy.ism_template].flat()
        expect(templates).toHaveLength(1)
        expect(templates[0]).toMatchObject({ index_patterns: [`${id}*`], priority: 7 })
        // ISM stamps a template that came without one, so it matches indices created from now on.
        expect(templates[0]!.last_updated_time).toBeGreaterThanOrEqual(before - 1000)
      })
    })

    test('a PUT without if_seq_no is create-only; with the current seq_no and primary term it replaces; a stale one is a conflict', async () => {
      const id = unique('update')
      await withPolicies([id], async () => {
        const first = await store().putLifecyclePolicy({ id, body: policyBody(id) })
        const again = await error(store().putLifecyclePolicy({ id, body: policyBody(id, '9d') }))
        expect(again).toBeInstanceOf(VersionConflict)
        expect(again?.status).toBe(409)

        const second = await store().putLifecyclePolicy({
          id,
          body: policyBody(id, '9d'),
          if_seq_no: first._seq_no,
          if_primary_term: first._primary_term,
        })
        expect(second._version).toBe(2)
        expect(second._seq_no).toBeGreaterThan(first._seq_no)
        const got = await store().getLifecyclePolicy({ id })
        expect(got.policy.states[0].transitions?.[0].conditions).toEqual({ min_index_age: '9d' })

        const stale = await error(
          store().putLifecyclePolicy({ id, body: policyBody(id, '1d'), if_seq_no: first._seq_no, if_primary_term: first._primary_term }),
        )
        expect(stale).toBeInstanceOf(VersionConflict)
        expect((await store().getLifecyclePolicy({ id })).policy.states[0].transitions?.[0].conditions).toEqual({ min_index_age: '9d' })
      })
    })

    test('a missing policy is PolicyNotFound (404) for GET and DELETE; DELETE removes an existing one', async () => {
      const id = unique('delete')
      const missing = await error(store().getLifecyclePolicy({ id }))
      expect(missing).toBeInstanceOf(PolicyNotFound)
      expect(missing?.status).toBe(404)
      await store().putLifecyclePolicy({ id, body: policyBody(id) })
      const deleted = await store().deleteLifecyclePolicy({ id })
      expect(deleted).toMatchObject({ _id: id, result: 'deleted' })
      expect(await error(store().getLifecyclePolicy({ id }))).toBeInstanceOf(PolicyNotFound)
      const twice = await error(store().deleteLifecyclePolicy({ id }))
      expect(twice).toBeInstanceOf(PolicyNotFound)
      expect(twice?.reason).toBe(`Policy ${id} is not found`)
    })

    test('the listing holds every policy, by policy id', async () => {
      const ids = [unique('list-b'), unique('list-a')]
      const sorted = [...ids].sort()
      await withPolicies(ids, async () => {
        for (const id of ids) await store().putLifecyclePolicy({ id, body: policyBody(id) })
        const all = await store().getLifecyclePolicies({ size: 1000 })
        expect(all.total_policies).toBeGreaterThanOrEqual(2)
        const ours = all.policies.filter((p) => ids.includes(p._id))
        expect(ours.map((p) => p._id)).toEqual(sorted)
        for (const p of ours) {
          expect(p.policy.policy_id).toBe(p._id)
          expect(typeof p._seq_no).toBe('number')
        }
      })
    })

    test('a policy ISM would refuse is a 400 naming the problem, and nothing is written', async () => {
      const id = unique('invalid')
      const dangling = policyBody(id)
      dangling.policy.states[0].transitions = [{ state_name: 'warm', conditions: { min_index_age: '1d' } }]
      const e1 = await error(store().putLifecyclePolicy({ id, body: dangling }))
      expect(e1).toBeInstanceOf(IllegalArgument)
      expect(e1?.reason).toContain('nonexistent state=warm')

      const noDefault = policyBody(id)
      noDefault.policy.default_state = 'cold'
      const e2 = await error(store().putLifecyclePolicy({ id, body: noDefault }))
      expect(e2?.status).toBe(400)
      expect(e2?.reason).toContain('default state')

      const unknown = policyBody(id, '3d', { colour: 'blue' }) as unknown as IsmPolicyBody
      const e3 = await error(store().putLifecyclePolicy({ id, body: unknown }))
      expect(e3?.status).toBe(400)
      expect(e3?.reason).toContain('[colour]')

      expect(await error(store().getLifecyclePolicy({ id }))).toBeInstanceOf(PolicyNotFound)
    })
  })
}

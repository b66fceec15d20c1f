// The platform's ISM policy API as the embedded index API serves it: ISM's statuses (201 with
// Location for a create, 200 for an update), its error shapes, and the index-management cluster
// actions, which only all_access holds among the built-in roles.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ISM_ACTIONS } from '../../src/security/actions'
import { startIndexApi, type TestServer } from './helpers'

const ROLES = `
_meta: { type: roles, config_version: 2 }
ism_reader:
  cluster_permissions: ["${ISM_ACTIONS.policyGet}"]
everything_but_ism:
  cluster_permissions: ["cluster_monitor", "cluster_composite_ops", "cluster_manage_index_templates"]
  index_permissions:
    - index_patterns: ["*"]
      allowed_actions: ["indices_all"]
`

const BASE = '/_plugins/_ism/policies'

const policy = (deleteAfter = '1h', pattern = 'logs-*') => ({
  policy: {
    description: 'logs retention',
    default_state: 'hot',
    states: [
      { name: 'hot', actions: [], transitions: [{ state_name: 'delete', conditions: { min_index_age: deleteAfter } }] },
      { name: 'delete', actions: [{ delete: {} }], transitions: [] },
    ],
    ism_template: { index_patterns: [pattern], priority: 5 },
  },
})

let api: TestServer

beforeAll(async () => {
  api = await startIndexApi({
    roles: ROLES,
    users: { admin: { roles: ['all_access'] }, reader: { roles: ['ism_reader'] }, other: { roles: ['everything_but_ism'] } },
  })
})
afterAll(() => api.stop())

describe('PUT /_plugins/_ism/policies/<id>', () => {
  test('creates with 201 and a Location; a second create is 409; the current if_seq_no/if_primary_term replace it with 200', async () => {
    const created = await api.call('admin', 'PUT', `${BASE}/logs`, policy())
    expect(created.status).toBe(201)
    expect(created.headers.get('location')).toBe(`${BASE}/logs`)
    expect(created.body).toMatchObject({ _id: 'logs', _version: 1, policy: { policy: { policy_id: 'logs', default_state: 'hot' } } })

    const again = await api.call('admin', 'PUT', `${BASE}/logs`, policy('2h'))
    expect(again.status).toBe(409)
    expect(again.body.error.type).toBe('version_conflict_engine_exception')

    const { _seq_no, _primary_term } = created.body
    const updated = await api.call('admin', 'PUT', `${BASE}/logs?if_seq_no=${_seq_no}&if_primary_term=${_primary_term}`, policy('2h'))
    expect(updated.status).toBe(200)
    expect(updated.headers.get('location')).toBeNull()
    expect(updated.body._version).toBe(2)

    const got = await api.call('admin', 'GET', `${BASE}/logs`)
    expect(got.status).toBe(200)
    expect(got.body).toMatchObject({ _id: 'logs', _version: 2, _seq_no: updated.body._seq_no, _primary_term: updated.body._primary_term })
    expect(got.body.policy.states[0].transitions[0].conditions).toEqual({ min_index_age: '2h' })
    // A single template object is answered as ISM stores it: a list, stamped with its time.
    expect(got.body.policy.ism_template).toEqual([{ index_patterns: ['logs-*'], priority: 5, last_updated_time: expect.any(Number) }])
  })

  test('malformed policies are 400s in OpenSearch’s error shape', async () => {
    const missing = await api.call('admin', 'PUT', `${BASE}/bad`)
    expect(missing.status).toBe(400)
    expect(missing.body.error).toMatchObject({ type: 'parse_exception', reason: 'request body is required' })

    const unknown = await api.call('admin', 'PUT', `${BASE}/bad`, { policy: { ...policy().policy, colour: 'blue' } })
    expect(unknown.status).toBe(400)
    expect(unknown.body.error).toMatchObject({ type: 'illegal_argument_exception', reason: 'Invalid field: [colour] found in Policy.' })

    const noDescription = await api.call('admin', 'PUT', `${BASE}/bad`, { policy: { default_state: 'hot', states: [{ name: 'hot' }] } })
    expect(noDescription.body.error.reason).toBe('description is null')

    const twoConditions = policy()
    twoConditions.policy.states[0].transitions[0].conditions = { min_index_age: '1h', min_doc_count: 5 } as never
    const two = await api.call('admin', 'PUT', `${BASE}/bad`, twoConditions)
    expect(two.body.error.reason).toBe('Cannot provide more than one Transition condition')

    const badAge = await api.call('admin', 'PUT', `${BASE}/bad`, policy('soon'))
    expect(badAge.status).toBe(400)

    const noId = await api.call('admin', 'PUT', BASE, policy())
    expect(noId.status).toBe(400)
    expect(noId.body.error.reason).toBe('Missing policy ID')

    expect((await api.call('admin', 'GET', `${BASE}/bad`)).status).toBe(404)
  })
})

describe('GET, HEAD, list and DELETE', () => {
  test('a missing policy: GET 404 "Policy not found", HEAD 404 without a body, DELETE 404 naming it', async () => {
    const get = await api.call('admin', 'GET', `${BASE}/nope`)
    expect(get.status).toBe(404)
    expect(get.body).toEqual({
      error: {
        root_cause: [{ type: 'status_exception', reason: 'Policy not found' }],
        type: 'status_exception',
        reason: 'Policy not found',
      },
      status: 404,
    })
    const head = await api.call('admin', 'HEAD', `${BASE}/nope`)
    expect(head.status).toBe(404)
    expect(head.text).toBe('')
    const del = await api.call('admin', 'DELETE', `${BASE}/nope`)
    expect(del.status).toBe(404)
    expect(del.body.error.reason).toBe('Policy nope is not found')
  })

  test('the listing pages by policy id; DELETE removes one', async () => {
    for (const id of ['list-c', 'list-a', 'list-b'])
      expect((await api.call('admin', 'PUT', `${BASE}/${id}`, policy('1d', `${id}-*`))).status).toBe(201)
    const page = await api.call('admin', 'GET', `${BASE}?size=2&from=1`)
    expect(page.status).toBe(200)
    const all = await api.call('admin', 'GET', BASE)
    const ids = all.body.policies.map((p: { _id: string }) => p._id)
    expect(ids).toEqual([...ids].sort())
    expect(page.body.total_policies).toBe(all.body.total_policies)
    expect(page.body.policies.map((p: { _id: string }) => p._id)).toEqual(ids.slice(1, 3))
    expect(all.body.policies[0]).toMatchObject({
      _seq_no: expect.any(Number),
      _primary_term: expect.any(Number),
      policy: { policy_id: ids[0] },
    })

    expect((await api.call('admin', 'HEAD', `${BASE}/list-b`)).status).toBe(200)
    const del = await api.call('admin', 'DELETE', `${BASE}/list-b`)
    expect(del.status).toBe(200)
    expect(del.body).toMatchObject({ _id: 'list-b', result: 'deleted' })
    const after = await api.call('admin', 'GET', BASE)
    expect(after.body.total_policies).toBe(all.body.total_policies - 1)
  })

  test('the policies index is a system index: not listed, not readable or writable through the document API', async () => {
    await api.call('admin', 'PUT', `${BASE}/hidden-check`, policy('1d', 'hidden-check-*'))
    const cat = await api.call('admin', 'GET', '/_cat/indices?expand_wildcards=all&format=json')
    expect(cat.body.map((r: { index: string }) => r.index)).not.toContain('.svc-ism-config')
    expect((await api.call('admin', 'GET', '/.svc-ism-config/_doc/hidden-check')).status).toBe(403)
    expect((await api.call('admin', 'PUT', '/.svc-ism-config/_doc/hidden-check', { policy: {} })).status).toBe(403)
    expect((await api.call('admin', 'GET', `${BASE}/hidden-check`)).body.policy.policy_id).toBe('hidden-check')
  })
})

describe('permissions', () => {
  test('a user without the ISM actions gets 403 naming the action on every route, whatever index rights it holds', async () => {
    await api.call('admin', 'PUT', `${BASE}/guarded`, policy('1d', 'guarded-*'))
    const cases: Array<[string, string, string, unknown?]> = [
      ['PUT', `${BASE}/guarded2`, ISM_ACTIONS.policyWrite, policy('1d', 'guarded2-*')],
      ['GET', `${BASE}/guarded`, ISM_ACTIONS.policyGet],
      ['GET', BASE, ISM_ACTIONS.policySearch],
      ['DELETE', `${BASE}/guarded`, ISM_ACTIONS.policyDelete],
    ]
    for (const [method, path, action, body] of cases) {
      const r = await api.call('other', method, path, body)
      expect({ method, path, status: r.status }).toEqual({ method, path, status: 403 })
      expect(r.body.error.type).toBe('security_exception')
      expect(r.body.error.reason).toContain(action)
    }
    expect((await api.call('admin', 'GET', `${BASE}/guarded`)).status).toBe(200)
    expect((await api.call('admin', 'GET', `${BASE}/guarded2`)).status).toBe(404)
  })

  test('policy/get lets a user read a policy, nothing more', async () => {
    await api.call('admin', 'PUT', `${BASE}/readable`, policy('1d', 'readable-*'))
    expect((await api.call('reader', 'GET', `${BASE}/readable`)).status).toBe(200)
    expect((await api.call('reader', 'PUT', `${BASE}/readable2`, policy('1d', 'readable2-*'))).status).toBe(403)
    expect((await api.call('reader', 'DELETE', `${BASE}/readable`)).status).toBe(403)
    expect((await api.call('reader', 'GET', BASE)).status).toBe(403)
    expect((await api.call(undefined, 'GET', `${BASE}/readable`)).status).toBe(401)
  })
})

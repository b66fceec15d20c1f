import { describe, expect, test } from 'bun:test'
import { INDEX_ACTIONS } from '../../src/security/actions'
import { Policy, type Identity, type SecurityConfig } from '../../src/security/policy'

const id = (name: string, backendRoles: string[] = [], extra: Partial<Identity> = {}): Identity => ({
  name,
  backendRoles,
  attributes: {},
  directRoles: [],
  ...extra,
})

function policy(extra: Partial<SecurityConfig>): Policy {
  return new Policy({ users: {}, roles: {}, mappings: {}, actionGroups: {}, ...extra })
}

describe('role mapping', () => {
  const p = policy({
    roles: { readers: { cluster_permissions: [] }, ops: {}, both: {}, local: {}, direct: {} },
    mappings: {
      readers: { users: ['alice', 'team-*'] },
      ops: { backend_roles: ['ops', 'sre-*'] },
      both: { and_backend_roles: ['a', 'b'] },
      local: { hosts: ['127.0.0.*'] },
      ghost: { users: ['*'] },
    },
  })

  test('by user name, with wildcards', () => {
    expect(p.resolveRoles(id('alice'))).toContain('readers')
    expect(p.resolveRoles(id('team-red'))).toContain('readers')
    expect(p.resolveRoles(id('bob'))).not.toContain('readers')
  })

  test('by backend role, with wildcards', () => {
    expect(p.resolveRoles(id('bob', ['ops']))).toContain('ops')
    expect(p.resolveRoles(id('bob', ['sre-eu']))).toContain('ops')
    expect(p.resolveRoles(id('bob', ['dev']))).not.toContain('ops')
  })

  test('and_backend_roles needs all of them', () => {
    expect(p.resolveRoles(id('x', ['a']))).not.toContain('both')
    expect(p.resolveRoles(id('x', ['a', 'b']))).toContain('both')
  })

  test('by host', () => {
    expect(p.resolveRoles(id('x'), '127.0.0.1')).toContain('local')
    expect(p.resolveRoles(id('x'), '10.0.0.1')).not.toContain('local')
    expect(p.resolveRoles(id('x'))).not.toContain('local')
  })

  test('`*` maps every user: the built-in svc_ai_assistant mapping', () => {
    expect(p.resolveRoles(id('anyone'))).toContain('svc_ai_assistant')
    expect(p.resolveRoles(id('anyone', ['whatever']))).toContain('svc_ai_assistant')
  })

  test('a mapping of a role that does not exist grants nothing', () => {
    expect(p.resolveRoles(id('anyone'))).not.toContain('ghost')
  })

  test('roles assigned directly in internal_users.yml', () => {
    expect(p.resolveRoles(id('x', [], { directRoles: ['direct', 'nope'] }))).toEqual(['direct', 'svc_ai_assistant'])
  })

  test("all_access follows the platform's default mapping: backend role admin", () => {
    expect(p.resolveRoles(id('root', ['admin']))).toContain('all_access')
    expect(p.resolveRoles(id('admin'))).not.toContain('all_access')
  })

  test('a mapping from the file replaces the built-in one', () => {
    const q = policy({ mappings: { svc_ai_assistant: { users: ['alice'] }, all_access: { users: ['root'] } } })
    expect(q.resolveRoles(id('bob'))).toEqual([])
    expect(q.resolveRoles(id('alice'))).toEqual(['svc_ai_assistant'])
    expect(q.resolveRoles(id('x', ['admin']))).toEqual([])
    expect(q.resolveRoles(id('root'))).toContain('all_access')
  })
})

describe('index permissions', () => {
  const p = policy({
    roles: {
      own: { index_permissions: [{ index_patterns: ['home-${user.name}-*', 'team-${attr.internal.team}'], allowed_actions: ['crud'] }] },
      events: { index_permissions: [{ index_patterns: ['svc-events-*'], allowed_actions: ['read'] }] },
    },
  })
  const alice = id('alice', [], { attributes: { team: 'blue' } })

  // [role, action, index, granted]: the action and index are named in a failure.
  const rows: Array<[string, keyof typeof INDEX_ACTIONS, string, boolean]> = [
    ['own', 'index', 'home-alice-1', true],
    ['own', 'index', 'home-bob-1', false],
    ['own', 'search', 'team-blue', true],
    ['own', 'search', 'team-red', false],
    ['events', 'search', 'svc-events-v5-x', true],
    ['events', 'get', 'svc-events-v5-x', true],
    ['events', 'index', 'svc-events-v5-x', false],
    ['events', 'deleteIndex', 'svc-events-v5-x', false],
    ['events', 'search', 'other', false],
    ['all_access', 'deleteIndex', 'anything', true],
  ]
  for (const [what, role] of [
    ['patterns with wildcards and ${user.name} / ${attr.internal.*} substitution', 'own'],
    ['index groups decide the actions', 'events'],
    ['all_access reaches every index at the policy level (system indices are refused by the service)', 'all_access'],
  ])
    test(what, () => {
      for (const [, action, index, granted] of rows.filter((r) => r[0] === role))
        expect([action, index, p.hasIndex(alice, [role], INDEX_ACTIONS[action], index)]).toEqual([action, index, granted])
    })
})

describe('document-level security', () => {
  test('${user.name} is substituted, JSON-escaped so a name cannot widen the filter', () => {
    const p = policy({})
    const [q] = p.dlsQueries(id('eve", "x": "y'), ['svc_ai_assistant'], 'svc-ai-assistant-sessions')
    expect(JSON.parse(q!)).toEqual({ term: { user: 'eve", "x": "y' } })
  })

  test('the sessions filter applies to the data stream and its backing indices, not elsewhere', () => {
    const p = policy({})
    expect(p.dlsQueries(id('a'), ['svc_ai_assistant'], '.ds-svc-ai-assistant-sessions-000001')).toHaveLength(1)
    expect(p.dlsQueries(id('a'), ['svc_ai_assistant'], 'svc-events-v5-x')).toHaveLength(0)
  })

  test('a role granting read on * without DLS does not lift the sessions filter', () => {
    const p = policy({})
    expect(p.dlsQueries(id('root'), ['all_access', 'svc_ai_assistant'], 'svc-ai-assistant-sessions')).toEqual([
      '{"term": {"user": "root"}}',
    ])
  })

  test('several roles with DLS on one index give several queries; roles and backend roles lists substitute quoted', () => {
    const p = policy({
      roles: {
        r1: {
          index_permissions: [
            { index_patterns: ['logs-*'], allowed_actions: ['read'], dls: '{"terms": {"owner_roles": [${user.roles}]}}' },
          ],
        },
        r2: {
          index_permissions: [
            { index_patterns: ['logs-*'], allowed_actions: ['read'], dls: '{"terms": {"groups": [${user.backend_roles}]}}' },
          ],
        },
      },
    })
    const qs = p.dlsQueries(id('a', ['g1', 'g2']), ['r1', 'r2'], 'logs-1').map((q) => JSON.parse(q))
    expect(qs).toEqual([{ terms: { owner_roles: ['r1', 'r2'] } }, { terms: { groups: ['g1', 'g2'] } }])
  })
})

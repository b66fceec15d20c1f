import { describe, expect, test } from 'bun:test'
import {
  CONTENT_MANAGER_ACTIONS as CM,
  CONTENT_RESOURCES,
  PLATFORM_SA_ACTIONS,
  RULESET_ACTIONS,
  SETUP_ACTIONS,
} from '../../src/security/actions'
import { BUILTIN_ACTION_GROUPS } from '../../src/security/builtin-groups'
import { ALL_ACCESS, BUILTIN_ROLES } from '../../src/security/builtin-roles'
import { Policy, type SecurityConfig } from '../../src/security/policy'

const EVALUATE = RULESET_ACTIONS.rulesEvaluate

/** A policy with one custom role per test, holding exactly the given cluster permissions. */
function grants(permissions: string[], extra: Partial<SecurityConfig> = {}): (action: string) => boolean {
  const policy = new Policy({
    users: {},
    mappings: {},
    actionGroups: {},
    ...extra,
    roles: { r: { cluster_permissions: permissions }, ...extra.roles },
  })
  return (action) => policy.hasCluster(['r'], action)
}

/** Every raw cluster action the spec defines (Setup, Content Manager, Ruleset Management). */
const isString = (v: unknown): v is string => typeof v === 'string'
const CM_SINGLE: string[] = (Object.values(CM) as unknown[]).filter(isString)
const ALL_RAW: string[] = [
  ...Object.values(SETUP_ACTIONS),
  ...CONTENT_RESOURCES.flatMap((r) => Object.values(CM[r])),
  ...CM_SINGLE,
  ...Object.values(RULESET_ACTIONS),
  ...Object.values(PLATFORM_SA_ACTIONS),
]

function grantedRaw(permissions: string[]): string[] {
  const can = grants(permissions)
  return ALL_RAW.filter(can).sort()
}

describe('action groups granting one raw action each (the spec tables of Setup and the Content Manager)', () => {
  const table: Array<[string, string]> = [
    ['plugin:svc/settings/write', SETUP_ACTIONS.settingsUpdate],
    ['plugin:svc/ai_assistant/session/write', SETUP_ACTIONS.sessionWrite],
    ['plugin:svc/ai_assistant/settings/read', SETUP_ACTIONS.aiSettingsRead],
    ['plugin:svc/ai_assistant/settings/write', SETUP_ACTIONS.aiSettingsWrite],
    ['plugin:content_manager/policy/update', 'cluster:admin/content_manager/policy/update'],
    ['plugin:content_manager/update', 'cluster:admin/content_manager/update/trigger'],
    ['plugin:content_manager/subscription/get', CM.subscriptionGet],
    ['plugin:content_manager/subscription/post', CM.subscriptionCreate],
    ['plugin:content_manager/subscription/delete', CM.subscriptionDelete],
    ['plugin:content_manager/promote/get', CM.promoteGet],
    ['plugin:content_manager/promote/post', CM.promoteCreate],
    ['plugin:content_manager/space/delete', CM.spaceDelete],
    ['plugin:content_manager/version/check', CM.versionCheck],
    ['plugin:content_manager/logtest/normalization', CM.logtestNormalization],
  ]
  for (const [group, raw] of table) {
    test(`${group} grants exactly ${raw}`, () => {
      expect(grantedRaw([group])).toEqual([raw])
    })
  }
})

describe('Content Manager action groups', () => {
  for (const resource of CONTENT_RESOURCES) {
    test(`${resource}: create/update/delete one each, ${resource}/* all three`, () => {
      for (const op of ['create', 'update', 'delete'] as const) {
        expect(grantedRaw([`plugin:content_manager/${resource}/${op}`])).toEqual([CM[resource][op]])
        expect(CM[resource][op]).toStartWith('cluster:admin/content_manager/')
      }
      expect(grantedRaw([`plugin:content_manager/${resource}/*`])).toEqual(
        [CM[resource].create, CM[resource].delete, CM[resource].update].sort(),
      )
    })
  }

  test('read-only groups resolve to cluster:monitor/, state-changing ones to cluster:admin/', () => {
    const readOnly: string[] = [
      CM.subscriptionGet,
      CM.logtest,
      CM.logtestDetection,
      CM.logtestNormalization,
      CM.promoteGet,
      CM.versionCheck,
    ]
    for (const a of readOnly) expect(a).toStartWith('cluster:monitor/content_manager/')
    const changing = CM_SINGLE.filter((v) => !readOnly.includes(v))
    for (const a of changing) expect(a).toStartWith('cluster:admin/content_manager/')
  })

  test('promote/* groups get and post', () => {
    expect(grantedRaw(['plugin:content_manager/promote/*'])).toEqual([CM.promoteCreate, CM.promoteGet].sort())
  })

  test('logtest (combined) also grants rules/evaluate', () => {
    expect(grantedRaw(['plugin:content_manager/logtest'])).toEqual([CM.logtest, EVALUATE].sort())
  })

  test('logtest/detection also grants rules/evaluate', () => {
    expect(grantedRaw(['plugin:content_manager/logtest/detection'])).toEqual([CM.logtestDetection, EVALUATE].sort())
  })

  test('logtest/normalization does not grant rules/evaluate', () => {
    expect(grants(['plugin:content_manager/logtest/normalization'])(EVALUATE)).toBe(false)
  })

  test('logtest/* groups detection and normalization (and evaluate via detection) but not the combined logtest', () => {
    const can = grants(['plugin:content_manager/logtest/*'])
    expect(can(CM.logtestDetection)).toBe(true)
    expect(can(CM.logtestNormalization)).toBe(true)
    expect(can(EVALUATE)).toBe(true)
    expect(can(CM.logtest)).toBe(false)
    expect(grantedRaw(['plugin:content_manager/logtest/*'])).toEqual([CM.logtestDetection, CM.logtestNormalization, EVALUATE].sort())
  })

  test('a group name can be checked directly: held only when every member is held', () => {
    expect(grants(['plugin:content_manager/logtest/*'])('plugin:content_manager/logtest/*')).toBe(true)
    expect(grants(['plugin:content_manager/logtest/detection'])('plugin:content_manager/logtest/*')).toBe(false)
    expect(grants([CM.subscriptionCreate])('plugin:content_manager/subscription/post')).toBe(true)
    expect(grants(['plugin:content_manager/subscription/get'])('plugin:content_manager/subscription/post')).toBe(false)
  })
})

describe('wildcards in permissions match like the security plugin', () => {
  test('cluster:admin/content_manager/* covers every state-changing Content Manager action and nothing read-only', () => {
    const can = grants(['cluster:admin/content_manager/*'])
    expect(can(CM.policyUpdate)).toBe(true)
    expect(can(CM.rule.create)).toBe(true)
    expect(can(CM.updateTrigger)).toBe(true)
    expect(can(CM.subscriptionGet)).toBe(false)
    expect(can(EVALUATE)).toBe(false)
  })

  test('? is one character, regex patterns are anchored', () => {
    expect(grants(['cluster:admin/content_manager/rule/?reate'])(CM.rule.create)).toBe(true)
    expect(grants(['cluster:admin/content_manager/rule/?reate'])(CM.rule.update)).toBe(false)
    expect(grants(['/cluster:monitor/content_manager/(logtest|version)/.*/'])(CM.versionCheck)).toBe(true)
    expect(grants(['/cluster:monitor/content_manager/(logtest|version)/.*/'])(CM.logtest)).toBe(false)
    expect(grants(['/content_manager/'])(CM.logtest)).toBe(false)
  })

  test('a pattern over group names expands the groups it matches', () => {
    const can = grants(['plugin:content_manager/*'])
    expect(can(CM.logtest)).toBe(true)
    expect(can(EVALUATE)).toBe(true)
    expect(can(CM.kvdb.delete)).toBe(true)
    expect(can(SETUP_ACTIONS.settingsUpdate)).toBe(false)
  })

  test('custom action groups nest, and cycles do not hang', () => {
    const can = grants(['g1'], {
      actionGroups: {
        g1: { allowed_actions: ['g2', 'plugin:content_manager/decoder/create'] },
        g2: { allowed_actions: ['g1', 'cluster:admin/ai_assistant/settings/read'] },
      },
    })
    expect(can(CM.decoder.create)).toBe(true)
    expect(can(SETUP_ACTIONS.aiSettingsRead)).toBe(true)
    expect(can(CM.decoder.delete)).toBe(false)
  })
})

describe('platform index action groups mirror the security plugin', () => {
  const policy = new Policy({ users: {}, mappings: {}, actionGroups: {}, roles: {} })
  const expandsTo = (g: string) => policy.expand([g]).sort()
  test('read, write, crud, search, get, delete, index, create_index, manage, indices_all, indices_monitor', () => {
    expect(expandsTo('read')).toEqual(['indices:admin/mappings/fields/get*', 'indices:admin/resolve/index', 'indices:data/read*'])
    expect(expandsTo('write')).toEqual(['indices:admin/mapping/put', 'indices:data/write*'])
    expect(expandsTo('crud')).toEqual([...expandsTo('read'), ...expandsTo('write')].sort())
    expect(expandsTo('get')).toEqual(['indices:data/read/get*', 'indices:data/read/mget*'])
    expect(expandsTo('delete')).toEqual(['indices:data/write/delete*'])
    expect(expandsTo('create_index')).toEqual(['indices:admin/create', 'indices:admin/mapping/put'])
    expect(expandsTo('manage')).toEqual(['indices:admin/*', 'indices:monitor/*'])
    expect(expandsTo('indices_all')).toEqual(['indices:*'])
    expect(expandsTo('indices_monitor')).toEqual(['indices:monitor/*'])
    expect(expandsTo('search')).toContain('indices:data/read/suggest*')
    expect(expandsTo('index')).toContain('indices:data/write/bulk*')
  })
  test('cluster groups', () => {
    expect(expandsTo('cluster_all')).toEqual(['cluster:*'])
    expect(expandsTo('cluster_monitor')).toEqual(['cluster:monitor/*'])
    expect(expandsTo('cluster_composite_ops')).toContain('indices:data/read/msearch')
    expect(expandsTo('manage_point_in_time')).toContain('indices:data/read/point_in_time/create')
  })
})

describe('built-in roles', () => {
  const policy = new Policy({ users: {}, mappings: {}, actionGroups: {}, roles: {} })
  const sensitive = [
    CM.policyUpdate,
    CM.updateTrigger,
    SETUP_ACTIONS.settingsUpdate,
    'plugin:svc/settings/write',
    PLATFORM_SA_ACTIONS.detectorWrite,
  ]

  test('all_access holds every action of the spec, including the sensitive ones', () => {
    for (const a of [...ALL_RAW, ...sensitive]) expect(policy.hasCluster([ALL_ACCESS], a)).toBe(true)
  })

  test('no other built-in role holds the sensitive permissions, the AI settings groups, or any upstream securityanalytics action', () => {
    const others = Object.keys(BUILTIN_ROLES).filter((r) => r !== ALL_ACCESS)
    expect(others.sort()).toEqual(['dashboard_server', 'svc_ai_assistant', 'svc_manager'])
    const forbidden = [
      ...sensitive,
      'plugin:svc/ai_assistant/settings/read',
      'plugin:svc/ai_assistant/settings/write',
      ...Object.values(PLATFORM_SA_ACTIONS),
    ]
    for (const role of others)
      for (const a of forbidden) expect({ role, a, held: policy.hasCluster([role], a) }).toEqual({ role, a, held: false })
    // Even all of them together.
    for (const a of forbidden) expect(policy.hasCluster(others, a)).toBe(false)
  })

  test('svc_ai_assistant holds session write and nothing else of the spec', () => {
    expect(ALL_RAW.filter((a) => policy.hasCluster(['svc_ai_assistant'], a))).toEqual([SETUP_ACTIONS.sessionWrite])
  })

  test('every built-in action group is reserved', () => {
    for (const def of Object.values(BUILTIN_ACTION_GROUPS)) expect(def.reserved).toBe(true)
  })
})

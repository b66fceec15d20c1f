import { describe, expect, test } from 'bun:test'
import { loadSecurityFiles, parseSecurityFile, SecurityConfigError, syntaxErrorLine } from '../../src/security/load-config'
import { quickHash, tempDirs, writeSecurityFile } from './helpers'
import { thrownBy } from '../helpers/thrown'

const errorOf = (fn: () => unknown) => thrownBy(SecurityConfigError, fn)

describe("security files in the platform's formats", () => {
  test('all four files load, with _meta and bookkeeping flags tolerated', async () => {
    const dirs = tempDirs()
    const hash = await quickHash('s3cret')
    writeSecurityFile(
      dirs,
      'internal_users.yml',
      `_meta:\n  type: "internalusers"\n  config_version: 2\nalice:\n  hash: "${hash}"\n  reserved: false\n  backend_roles: ["analyst"]\n  attributes:\n    team: blue\n    level: 3\n  description: "Alice"\n`,
    )
    writeSecurityFile(
      dirs,
      'roles.yml',
      `_meta:\n  type: "roles"\n  config_version: 2\nanalyst:\n  reserved: false\n  hidden: false\n  cluster_permissions:\n    - "plugin:content_manager/logtest"\n  index_permissions:\n    - index_patterns: ["svc-events-*"]\n      allowed_actions: ["read"]\n      dls: '{"term": {"team": "\${attr.internal.team}"}}'\n      fls: []\n  tenant_permissions: []\n`,
    )
    writeSecurityFile(
      dirs,
      'roles_mapping.yml',
      `_meta:\n  type: "rolesmapping"\n  config_version: 2\nanalyst:\n  backend_roles: ["analyst"]\n  users: []\n  hosts: []\n  and_backend_roles: []\n`,
    )
    writeSecurityFile(
      dirs,
      'action_groups.yml',
      `_meta:\n  type: "actiongroups"\n  config_version: 2\nmy_group:\n  allowed_actions: ["read", "indices:admin/refresh*"]\n  type: index\n  description: x\n`,
    )

    const { config, hasUsersFile } = await loadSecurityFiles(dirs.configDir)
    expect(hasUsersFile).toBe(true)
    expect(Object.keys(config.users)).toEqual(['alice'])
    expect(config.users.alice!.backend_roles).toEqual(['analyst'])
    // YAML numbers in attributes are strings, as on the platform.
    expect(config.users.alice!.attributes).toEqual({ team: 'blue', level: '3' })
    expect(config.roles.analyst!.index_permissions![0]!.dls).toContain('${attr.internal.team}')
    expect(config.mappings.analyst!.backend_roles).toEqual(['analyst'])
    expect(config.actionGroups.my_group!.allowed_actions).toEqual(['read', 'indices:admin/refresh*'])
  })

  test('missing files mean no entries; only the users file decides first start', async () => {
    const dirs = tempDirs()
    const { config, hasUsersFile } = await loadSecurityFiles(dirs.configDir)
    expect(hasUsersFile).toBe(false)
    expect(config).toEqual({ users: {}, roles: {}, mappings: {}, actionGroups: {} })
  })
})

describe('malformed files name the file and the line', () => {
  test('YAML syntax error: line of the broken construct', () => {
    const text = `_meta:\n  type: roles\n  config_version: 2\nok:\n  cluster_permissions: ["a"]\nbroken:\n  cluster_permissions: ["a", "b"\n`
    const e = errorOf(() => parseSecurityFile('roles', text, '/x/roles.yml'))
    expect(e.file).toBe('/x/roles.yml')
    expect(e.line).toBe(7)
    expect(e.message).toStartWith('/x/roles.yml:7: invalid YAML')
  })

  test('syntax error after a valid multi-line flow sequence is not blamed on the sequence', () => {
    const text = `a:\n  - [1,\n     2]\nb: 1\nc: "unterminated\n`
    expect(syntaxErrorLine(text)).toBe(5)
  })

  test('bad indentation is reported at its line', () => {
    const text = `a:\n  b: 1\n c: 2\n`
    expect(() => Bun.YAML.parse(text)).toThrow()
    expect(syntaxErrorLine(text)).toBe(3)
  })

  test("shape errors name the entry, the field and the entry's line", () => {
    const text = `_meta:\n  type: roles\n  config_version: 2\n\ngood:\n  cluster_permissions: []\n"bad role":\n  cluster_permissions: "not-a-list"\n`
    const e = errorOf(() => parseSecurityFile('roles', text, 'roles.yml'))
    expect(e.line).toBe(7)
    expect(e.message).toContain('entry [bad role]')
    expect(e.message).toContain('cluster_permissions')
  })

  test('an unknown field (a typo) is refused, not ignored', () => {
    const text = `r1:\n  cluster_permission: ["*"]\n`
    const e = errorOf(() => parseSecurityFile('roles', text, 'roles.yml'))
    expect(e.message).toBe('roles.yml:1: entry [r1]: unknown field [cluster_permission]')
  })

  test('field-level security is refused rather than silently not enforced', () => {
    const text = `r1:\n  index_permissions:\n    - index_patterns: ["*"]\n      allowed_actions: ["read"]\n      fls: ["~secret"]\n`
    const e = errorOf(() => parseSecurityFile('roles', text, 'roles.yml'))
    expect(e.message).toContain('index_permissions.0.fls')
  })

  test("a DLS that is not a JSON object is refused with the entry's line", () => {
    const text = `r0:\n  cluster_permissions: []\nr1:\n  index_permissions:\n    - index_patterns: ["*"]\n      dls: '{"term": '\n`
    const e = errorOf(() => parseSecurityFile('roles', text, 'roles.yml'))
    expect(e.line).toBe(3)
    expect(e.message).toContain('dls] is not valid JSON')
  })

  test('a user whose hash is not bcrypt is refused', () => {
    const e = errorOf(() =>
      parseSecurityFile(
        'internalUsers',
        `_meta:\n  type: internalusers\n  config_version: 2\nbob:\n  hash: "plaintext"\n`,
        'internal_users.yml',
      ),
    )
    expect(e.line).toBe(4)
    expect(e.message).toContain('hash-password')
  })

  test('platform $2y$ and $2a$ hashes are accepted', async () => {
    const hash = await quickHash('pw')
    for (const prefix of ['$2y$', '$2a$']) {
      const out = parseSecurityFile('internalUsers', `u:\n  hash: "${hash.replace('$2b$', prefix)}"\n`, 'internal_users.yml')
      expect((out.u as { hash: string }).hash).toStartWith(prefix)
    }
  })

  test('_meta of another file type is refused (swapped files)', () => {
    const e = errorOf(() => parseSecurityFile('roles', `_meta:\n  type: "rolesmapping"\n  config_version: 2\n`, 'roles.yml'))
    expect(e.line).toBe(1)
    expect(e.message).toContain('expected [roles]')
  })

  test('duplicate entries are refused at the second occurrence', () => {
    const e = errorOf(() =>
      parseSecurityFile('rolesMapping', `a:\n  users: ["x"]\nb:\n  users: []\na:\n  users: ["*"]\n`, 'roles_mapping.yml'),
    )
    expect(e.line).toBe(5)
    expect(e.message).toContain('duplicate entry [a]')
  })

  test('reserved built-in roles and action groups cannot be redefined', () => {
    expect(errorOf(() => parseSecurityFile('roles', `all_access:\n  cluster_permissions: []\n`, 'roles.yml')).message).toContain(
      'reserved built-in role',
    )
    expect(errorOf(() => parseSecurityFile('roles', `svc_ai_assistant:\n  cluster_permissions: ["*"]\n`, 'roles.yml')).message).toContain(
      'reserved',
    )
    const e = errorOf(() =>
      parseSecurityFile(
        'actionGroups',
        `"plugin:content_manager/logtest/*":\n  allowed_actions: ["plugin:content_manager/logtest"]\n`,
        'action_groups.yml',
      ),
    )
    expect(e.message).toContain('reserved built-in action group')
    expect(e.line).toBe(1)
  })

  test('a top-level list is refused', () => {
    const e = errorOf(() => parseSecurityFile('roles', `- a\n- b\n`, 'roles.yml'))
    expect(e.message).toContain('expected a map')
  })

  test("loadSecurityFiles reports the failing file's path", async () => {
    const dirs = tempDirs()
    const path = writeSecurityFile(dirs, 'action_groups.yml', `g:\n  allowed_actions: read\n`)
    const e = await loadSecurityFiles(dirs.configDir).then(
      () => undefined,
      (x) => x as SecurityConfigError,
    )
    expect(e).toBeInstanceOf(SecurityConfigError)
    expect(e!.file).toBe(path)
    expect(e!.message).toStartWith(`${path}:1: entry [g]`)
  })
})

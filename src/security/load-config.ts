import { join } from 'node:path'
import type { Logger } from '../http/log'
import { Value } from '@sinclair/typebox/value'
import type { TSchema } from '@sinclair/typebox'
import { BUILTIN_ACTION_GROUPS } from './builtin-groups'
import { BUILTIN_ROLES } from './builtin-roles'
import { Meta, SECURITY_FILES } from './config-schema'
import type { SecurityConfig } from './policy'
import { substitute } from './policy'
import { patternError } from './wildcard'
import { own, setOwn } from '../store/own'

/** A security file that cannot be used; the message names the file and, when known, the line. */
export class SecurityConfigError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly detail: string,
  ) {
    super(`${file}${line ? `:${line}` : ''}: ${detail}`)
  }
}

type FileKind = keyof typeof SECURITY_FILES

/** What was found in `<configDir>/security/`; a missing file is `undefined`. */
export interface LoadedFiles {
  config: SecurityConfig
  /** False when internal_users.yml does not exist (first start). */
  hasUsersFile: boolean
}

export function securityDir(configDir: string): string {
  return join(configDir, 'security')
}

export type ReloadResult = { ok: true } | { ok: false; error: string }

/**
 * The reload both security modes run on SIGHUP: `rebuild` re-reads the files and installs the
 * result; any failure keeps the running configuration and is logged (never thrown).
 */
export function securityReloader(configDir: string, log: Logger, rebuild: () => Promise<void>): () => Promise<ReloadResult> {
  return async () => {
    try {
      await rebuild()
      log.info('security configuration reloaded', { dir: securityDir(configDir) })
      return { ok: true }
    } catch (e) {
      const error = e instanceof SecurityConfigError ? e.message : `security configuration not reloaded: ${(e as Error).message}`
      log.error('security configuration not reloaded, keeping the previous one', { error })
      return { ok: false, error }
    }
  }
}

export async function loadSecurityFiles(configDir: string): Promise<LoadedFiles> {
  const dir = securityDir(configDir)
  const read = async (kind: FileKind) => {
    const path = join(dir, SECURITY_FILES[kind].file)
    const file = Bun.file(path)
    if (!(await file.exists())) return undefined
    return parseSecurityFile(kind, await file.text(), path)
  }
  const [users, roles, mappings, actionGroups] = await Promise.all([
    read('internalUsers'),
    read('roles'),
    read('rolesMapping'),
    read('actionGroups'),
  ])
  const config: SecurityConfig = {
    users: (users ?? {}) as SecurityConfig['users'],
    roles: (roles ?? {}) as SecurityConfig['roles'],
    mappings: (mappings ?? {}) as SecurityConfig['mappings'],
    actionGroups: (actionGroups ?? {}) as SecurityConfig['actionGroups'],
  }
  return { config, hasUsersFile: users !== undefined }
}

/**
 * Parses and validates one file. Bun.YAML's errors carry no position, so the
 * line of a syntax error is found by parsing ever shorter prefixes: the error
 * sits on the line after the longest prefix that still parses.
 */
export function parseSecurityFile(kind: FileKind, text: string, path: string): Record<string, unknown> {
  const spec = SECURITY_FILES[kind]
  let doc: unknown
  try {
    doc = Bun.YAML.parse(text)
  } catch (e) {
    throw new SecurityConfigError(path, syntaxErrorLine(text), `invalid YAML: ${(e as Error).message.replace(/^YAML Parse error:\s*/, '')}`)
  }
  if (doc === null || doc === undefined) return {}
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new SecurityConfigError(path, 1, 'expected a map of entries')

  const lines = topLevelKeyLines(text)
  for (const [key, at] of lines) {
    if (at.length > 1) throw new SecurityConfigError(path, at[1], `duplicate entry [${key}]`)
  }
  const lineOf = (key: string) => lines.get(key)?.[0]
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(doc as Record<string, unknown>)) {
    if (key === '_meta') {
      checkMeta(value, spec.metaType, path, lineOf(key))
      continue
    }
    const problem = firstError(spec.entry, value)
    if (problem) throw new SecurityConfigError(path, lineOf(key), `entry [${key}]: ${problem}`)
    const semantic = semanticError(kind, key, value as Record<string, unknown>)
    if (semantic) throw new SecurityConfigError(path, lineOf(key), `entry [${key}]: ${semantic}`)
    // A file may name an entry `__proto__`; a plain assignment would replace the prototype instead.
    setOwn(out, key, kind === 'internalUsers' ? normalizeUser(value as Record<string, unknown>) : value)
  }
  return out
}

function checkMeta(value: unknown, metaType: string, path: string, line: number | undefined): void {
  const problem = firstError(Meta, value)
  if (problem) throw new SecurityConfigError(path, line, `_meta: ${problem}`)
  const meta = value as { type: string; config_version: number }
  if (meta.type !== metaType) throw new SecurityConfigError(path, line, `_meta.type is [${meta.type}], expected [${metaType}]`)
  if (meta.config_version !== 2)
    throw new SecurityConfigError(path, line, `_meta.config_version ${meta.config_version} is not supported (expected 2)`)
}

function firstError(schema: TSchema, value: unknown): string | undefined {
  if (Value.Check(schema, value)) return undefined
  const e = Value.Errors(schema, value).First()
  if (!e) return 'invalid entry'
  const where = e.path ? e.path.slice(1).replace(/\//g, '.') : ''
  if (e.message.startsWith('Unexpected property')) return `unknown field [${where}]`
  return where ? `[${where}] ${e.message.toLowerCase()}` : e.message.toLowerCase()
}

const HASH = /^\$(2[aby]\$\d\d\$.{53}|argon2(id|i|d)\$.+)$/

function semanticError(kind: FileKind, key: string, v: Record<string, unknown>): string | undefined {
  switch (kind) {
    case 'internalUsers':
      if (!HASH.test(v.hash as string)) return '[hash] is not a bcrypt hash (make one with `svc-ext hash-password`)'
      return undefined
    case 'roles': {
      if (own(BUILTIN_ROLES, key)) return 'is a reserved built-in role and cannot be redefined'
      const perms = (v.index_permissions ?? []) as Array<{ index_patterns: string[]; allowed_actions?: string[]; dls?: string }>
      for (const [i, p] of perms.entries()) {
        for (const x of [...p.index_patterns, ...(p.allowed_actions ?? [])]) {
          const bad = patternError(x)
          if (bad) return `[index_permissions.${i}] ${bad}`
        }
        if (p.dls !== undefined) {
          const bad = dlsError(p.dls)
          if (bad) return `[index_permissions.${i}.dls] ${bad}`
        }
      }
      for (const x of (v.cluster_permissions ?? []) as string[]) {
        const bad = patternError(x)
        if (bad) return `[cluster_permissions] ${bad}`
      }
      return undefined
    }
    case 'actionGroups':
      if (BUILTIN_ACTION_GROUPS[key]) return 'is a reserved built-in action group and cannot be redefined'
      return undefined
    case 'rolesMapping':
      return undefined
  }
}

/** A DLS query must be a JSON object once variables are filled in. */
function dlsError(dls: string): string | undefined {
  const probe = substitute(dls, { name: 'u', backendRoles: ['b'], attributes: {}, directRoles: [] }, ['r'], true).replace(
    /\$\{attr\.[^}]+\}/g,
    'x',
  )
  try {
    const q = JSON.parse(probe)
    return typeof q === 'object' && q !== null && !Array.isArray(q) ? undefined : 'is not a JSON object'
  } catch (e) {
    return `is not valid JSON: ${(e as Error).message}`
  }
}

/** Attribute values may be written as YAML numbers or booleans; the platform treats them as strings. */
function normalizeUser(v: Record<string, unknown>): Record<string, unknown> {
  if (!v.attributes) return v
  const attributes = Object.fromEntries(Object.entries(v.attributes as Record<string, unknown>).map(([k, x]) => [k, String(x)]))
  return { ...v, attributes }
}

/** 1-based line numbers of each top-level key (entries start in column 0). */
export function topLevelKeyLines(text: string): Map<string, number[]> {
  const out = new Map<string, number[]>()
  const lines = text.split(/\r?\n/)
  for (const [i, line] of lines.entries()) {
    const key = topLevelKey(line)
    if (key === undefined) continue
    const at = out.get(key) ?? []
    at.push(i + 1)
    out.set(key, at)
  }
  return out
}

function topLevelKey(line: string): string | undefined {
  const dq = /^"((?:[^"\\]|\\.)*)"\s*:(?:\s|$)/.exec(line)
  if (dq) {
    try {
      return JSON.parse(`"${dq[1]}"`)
    } catch {
      return dq[1]
    }
  }
  const sq = /^'((?:[^']|'')*)'\s*:(?:\s|$)/.exec(line)
  if (sq) return sq[1]!.replace(/''/g, "'")
  const plain = /^([^\s#"'\-?:!&*|>%@`{}[\],][^#]*?)\s*:(?:\s|$)/.exec(line)
  return plain?.[1]
}

function parses(text: string): boolean {
  try {
    Bun.YAML.parse(text)
    return true
  } catch {
    return false
  }
}

export function syntaxErrorLine(text: string): number {
  const lines = text.split(/\r?\n/)
  for (let n = lines.length - 1; n > 0; n--) {
    if (parses(lines.slice(0, n).join('\n'))) return Math.min(n + 1, lines.length)
  }
  return 1
}

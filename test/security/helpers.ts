import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createLogger, type Logger } from '../../src/http/log'
import { createSecurity, type SecurityHandle } from '../../src/security'

export interface TestDirs {
  configDir: string
  dataDir: string
  securityDir: string
}

export function tempDirs(): TestDirs {
  const root = mkdtempSync(join(tmpdir(), 'svc-sec-'))
  const configDir = join(root, 'config')
  const securityDir = join(configDir, 'security')
  mkdirSync(securityDir, { recursive: true })
  return { configDir, dataDir: join(root, 'data'), securityDir }
}

export function writeSecurityFile(dirs: TestDirs, name: string, text: string): string {
  const path = join(dirs.securityDir, name)
  writeFileSync(path, text)
  return path
}

/** bcrypt at the lowest cost: the algorithm is the same, tests stay quick. */
export function quickHash(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: 'bcrypt', cost: 4 })
}

export function basic(name: string, password: string): string {
  return `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`
}

export function request(authorization?: string, path = '/'): Request {
  return new Request(`http://localhost${path}`, { headers: authorization ? { authorization } : {} })
}

/** A logger that keeps every line, to assert what was (not) logged. */
export function capturingLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = []
  return { log: createLogger({ level: 'debug', write: (l) => lines.push(l) }), lines }
}

export interface Clock {
  now: () => number
  advance(ms: number): void
}
export function manualClock(start = 1_700_000_000_000): Clock {
  let t = start
  return { now: () => t, advance: (ms) => void (t += ms) }
}

export const AUTH_DEFAULTS = {
  'security.auth_cache.ttl_seconds': 300,
  'security.auth_cache.max_entries': 10000,
  'security.auth_failures.max_attempts': 0,
  'security.auth_failures.block_seconds': 60,
}

export async function securityFor(
  dirs: TestDirs,
  opts: { settings?: Partial<typeof AUTH_DEFAULTS>; env?: Record<string, string | undefined>; log?: Logger; now?: () => number } = {},
): Promise<SecurityHandle> {
  const values = new Map<string, unknown>(Object.entries({ ...AUTH_DEFAULTS, ...opts.settings }))
  return createSecurity({
    node: { values: values as never, configDir: dirs.configDir },
    dataDir: dirs.dataDir,
    log: opts.log ?? capturingLogger().log,
    env: opts.env ?? {},
    now: opts.now,
  })
}

/** internal_users.yml for the given users (name -> password / backend roles / direct roles). */
export async function usersFile(
  users: Record<string, { password: string; backend_roles?: string[]; roles?: string[]; attributes?: Record<string, string> }>,
): Promise<string> {
  const out: string[] = ['_meta:', '  type: internalusers', '  config_version: 2']
  for (const [name, u] of Object.entries(users)) {
    out.push(`${JSON.stringify(name)}:`, `  hash: ${JSON.stringify(await quickHash(u.password))}`)
    if (u.backend_roles) out.push(`  backend_roles: ${JSON.stringify(u.backend_roles)}`)
    if (u.roles) out.push(`  opendistro_security_roles: ${JSON.stringify(u.roles)}`)
    if (u.attributes) out.push(`  attributes: ${JSON.stringify(u.attributes)}`)
  }
  return out.join('\n') + '\n'
}

import { chmodSync, mkdirSync, openSync, writeSync, closeSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import type { InternalUser } from './config-schema'

export const INITIAL_ADMIN = 'admin'
export const INITIAL_PASSWORD_ENV = 'SVC_INITIAL_ADMIN_PASSWORD'
export const INITIAL_PASSWORD_FILE = 'initial-admin-password'

export interface InitialAdmin {
  user: InternalUser
  /** Where the password came from, for the log and the login hint (never the password). */
  source: { env: string } | { file: string; created: boolean }
  /** What the server prints at start so a new operator can log in. */
  hint: string
}

/**
 * The first-start user: with no internal_users.yml, `admin` (backend role
 * `admin`, hence all_access) with the password from the environment or a
 * generated one kept in a 0600 file under the data dir, reused on later
 * starts so the operator's note stays valid. The hash lives in memory only.
 */
export async function initialAdmin(dataDir: string, env: Record<string, string | undefined>, usersFile: string): Promise<InitialAdmin> {
  const fromEnv = env[INITIAL_PASSWORD_ENV]
  let password: string
  let source: InitialAdmin['source']
  if (fromEnv) {
    password = fromEnv
    source = { env: INITIAL_PASSWORD_ENV }
  } else {
    const file = join(dataDir, INITIAL_PASSWORD_FILE)
    const existing = await readExisting(file)
    if (existing) {
      password = existing
      source = { file, created: false }
    } else {
      password = randomBytes(24).toString('base64url')
      writePrivate(dataDir, file, password + '\n')
      source = { file, created: true }
    }
  }
  // The in-memory hash never leaves the process, so a modest cost keeps start-up quick.
  const hash = await Bun.password.hash(password, { algorithm: 'bcrypt', cost: 10 })
  const where = 'env' in source ? `the ${source.env} environment variable` : `the file ${source.file}`
  return {
    user: { hash, backend_roles: ['admin'], description: 'first-start administrator' },
    source,
    hint: `No ${usersFile} found: log in as user "${INITIAL_ADMIN}" with the password in ${where}, then create ${usersFile} (hashes from \`svc-ext hash-password\`).`,
  }
}

async function readExisting(file: string): Promise<string | undefined> {
  const f = Bun.file(file)
  if (!(await f.exists())) return undefined
  // An operator may have loosened the mode; the file holds a superuser password.
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600)
  const text = (await f.text()).replace(/\r?\n$/, '')
  return text === '' ? undefined : text
}

/** Created with 0600 from the first byte (no window where another user could read it). */
function writePrivate(dir: string, file: string, content: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const fd = openSync(file, 'w', 0o600)
  try {
    writeSync(fd, content)
  } finally {
    closeSync(fd)
  }
  chmodSync(file, 0o600)
}

import { describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { INITIAL_PASSWORD_FILE } from '../../src/security/initial-admin'
import { basic, capturingLogger, request, securityFor, tempDirs, usersFile, writeSecurityFile } from './helpers'

describe('first start without internal_users.yml', () => {
  test("admin's password comes from SVC_INITIAL_ADMIN_PASSWORD; no file is written; the password is not logged", async () => {
    const dirs = tempDirs()
    const { log, lines } = capturingLogger()
    const password = 'Env-Admin-Pw-8f3a1c'
    const handle = await securityFor(dirs, { env: { SVC_INITIAL_ADMIN_PASSWORD: password }, log })
    const admin = await handle.security.authenticate(request(basic('admin', password)))
    expect(admin.roles).toContain('all_access')
    expect(existsSync(join(dirs.dataDir, INITIAL_PASSWORD_FILE))).toBe(false)
    expect(handle.loginHints).toHaveLength(1)
    expect(handle.loginHints[0]).toContain('SVC_INITIAL_ADMIN_PASSWORD')
    expect(handle.loginHints.join('\n')).not.toContain(password)
    expect(lines.length).toBeGreaterThan(0)
    expect(lines.join('\n')).not.toContain(password)
  })

  test('without the variable a strong password is generated into a 0600 file, whose path (not content) is logged', async () => {
    const dirs = tempDirs()
    const { log, lines } = capturingLogger()
    const handle = await securityFor(dirs, { log })
    const file = join(dirs.dataDir, INITIAL_PASSWORD_FILE)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const password = readFileSync(file, 'utf8').trim()
    expect(password.length).toBeGreaterThanOrEqual(32)
    expect(new Set(password).size).toBeGreaterThan(10)
    expect((await handle.security.authenticate(request(basic('admin', password)))).roles).toContain('all_access')
    expect(handle.loginHints[0]).toContain(file)
    const logged = lines.join('\n')
    expect(logged).toContain(file)
    expect(logged).not.toContain(password)
    expect(handle.loginHints.join('\n')).not.toContain(password)
  })

  test('the generated password is reused on later starts, and a loosened file mode is tightened', async () => {
    const dirs = tempDirs()
    await securityFor(dirs)
    const file = join(dirs.dataDir, INITIAL_PASSWORD_FILE)
    const first = readFileSync(file, 'utf8').trim()
    chmodSync(file, 0o644)
    const again = await securityFor(dirs)
    expect(readFileSync(file, 'utf8').trim()).toBe(first)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect((await again.security.authenticate(request(basic('admin', first)))).name).toBe('admin')
  })

  test('two fresh installs get different passwords', async () => {
    const a = tempDirs()
    const b = tempDirs()
    await securityFor(a)
    await securityFor(b)
    expect(readFileSync(join(a.dataDir, INITIAL_PASSWORD_FILE), 'utf8')).not.toBe(
      readFileSync(join(b.dataDir, INITIAL_PASSWORD_FILE), 'utf8'),
    )
  })

  test('with internal_users.yml there is no admin by default and no login hint', async () => {
    const dirs = tempDirs()
    writeSecurityFile(dirs, 'internal_users.yml', await usersFile({ ops: { password: 'ops-pw' } }))
    const handle = await securityFor(dirs, { env: { SVC_INITIAL_ADMIN_PASSWORD: 'whatever' } })
    expect(handle.loginHints).toEqual([])
    const e = await handle.security.authenticate(request(basic('admin', 'whatever'))).catch((x) => x)
    expect(e.status).toBe(401)
  })

  test('creating internal_users.yml and reloading retires the first-start admin', async () => {
    const dirs = tempDirs()
    const handle = await securityFor(dirs, { env: { SVC_INITIAL_ADMIN_PASSWORD: 'first-pw' } })
    expect((await handle.security.authenticate(request(basic('admin', 'first-pw')))).name).toBe('admin')
    writeSecurityFile(dirs, 'internal_users.yml', await usersFile({ ops: { password: 'ops-pw' } }))
    expect(await handle.tryReload()).toEqual({ ok: true })
    expect(handle.loginHints).toEqual([])
    expect((await handle.security.authenticate(request(basic('admin', 'first-pw'))).catch((x) => x)).status).toBe(401)
  })
})

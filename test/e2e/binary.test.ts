// End-to-end: the compiled binary as an operator runs it (npm test builds dist/svc-ext first).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { repoRoot, runBinary, spawnBinary, type SpawnedServer, requireBinary } from '../helpers/spawn-binary'
import { basicAuth } from '../helpers/calls'
import { waitFor } from '../helpers/wait'

/** Runs the binary's `command` with `--config` naming a file that holds `yaml`. */
async function withConfig(yaml: string, command: string) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-config-'))
  try {
    writeFileSync(join(dir, 'svc-ext.yml'), yaml)
    return await runBinary([command, '--config', join(dir, 'svc-ext.yml')])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const version = readFileSync(join(repoRoot, 'VERSION'), 'utf8').trim()

beforeAll(() => {
  requireBinary()
})

describe('CLI', () => {
  test('version prints the version file', async () => {
    const r = await runBinary(['version'])
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toBe(version)
  })

  test('--help on every command, and bad usage exits non-zero with the usage', async () => {
    for (const cmd of ['serve', 'check-config', 'hash-password', 'version']) {
      const r = await runBinary([cmd, '--help'])
      expect(r.code).toBe(0)
      expect(r.stdout).toContain(`svc-ext ${cmd}`)
    }
    const top = await runBinary(['--help'])
    expect(top.stdout).toContain('Commands:')
    const bad = await runBinary(['frobnicate'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('unknown command: frobnicate')
    const badArg = await runBinary(['version', '--verbose'])
    expect(badArg.code).toBe(2)
  })

  test('hash-password prints a bcrypt hash that verifies', async () => {
    const r = await runBinary(['hash-password'], 'S3cret!pass\n')
    expect(r.code).toBe(0)
    const hash = r.stdout.trim()
    expect(hash).toMatch(/^\$2[aby]\$\d\d\$/)
    expect(await Bun.password.verify('S3cret!pass', hash)).toBe(true)
    expect(await Bun.password.verify('S3cret!pas', hash)).toBe(false)
    const empty = await runBinary(['hash-password'], '')
    expect(empty.code).toBe(1)
  })

  test('check-config prints effective settings with secrets masked, and refuses a bad key', async () => {
    const r = await withConfig('http.port: 9555\nstorage.platform.password: hunter2\n', 'check-config')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('http.port: 9555')
    expect(r.stdout).toContain('plugins.setup.timeout: 30  # default')
    expect(r.stdout).toContain('storage.platform.password: <masked>')
    expect(r.stdout).not.toContain('hunter2')
    const b = await withConfig('plugins.setup.max_retries: 11\n', 'check-config')
    expect(b.code).toBe(1)
    expect(b.stderr).toContain('[plugins.setup.max_retries]')
    expect(b.stderr).toContain('[11]')
    expect(b.stderr).toContain('from 0 to 10')
  })

  test('serve refuses to start on an unknown key, naming it', async () => {
    const r = await withConfig('http.prot: 9201\n', 'serve')
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('unknown setting [http.prot]')
  })
})

describe('serve over HTTP', () => {
  let server: SpawnedServer
  beforeAll(async () => {
    server = await spawnBinary()
  })
  afterAll(async () => {
    await server?.stop()
  })

  test('GET / answers node, cluster and version to an authenticated caller', async () => {
    const res = await fetch(server.url + '/', { headers: { authorization: server.auth } })
    expect(res.status).toBe(200)
    const body: any = await res.json()
    expect(body.name).toBeString()
    expect(body.cluster_name).toBeString()
    expect(JSON.stringify(body.version)).toContain(version)
  })

  test('no credentials: 401 with WWW-Authenticate and the envelope', async () => {
    const res = await fetch(server.url + '/_plugins/_setup/settings', { method: 'PUT', body: '{}' })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toContain('Basic')
    const body: any = await res.json()
    expect(body.status).toBe(401)
    expect(body.message).toBeString()
  })

  test('unknown plugin route is 404 and wrong method 405, both in the envelope', async () => {
    const h = { authorization: server.auth }
    const nf = await fetch(server.url + '/_plugins/_setup/nothing-here', { headers: h })
    expect(nf.status).toBe(404)
    expect(((await nf.json()) as any).status).toBe(404)
    const na = await fetch(server.url + '/_plugins/_setup/settings', { method: 'GET', headers: h })
    expect(na.status).toBe(405)
    const body: any = await na.json()
    expect(body.status).toBe(405)
    expect(body.message).toContain('PUT')
  })

  test('a 50 MiB body to a small-limit route is refused without being buffered', async () => {
    const rssBefore = rssOf(server.pid)
    const res = await fetch(server.url + '/_plugins/_setup/ai_assistant/sessions', {
      method: 'POST',
      headers: { authorization: server.auth, 'content-type': 'application/json' },
      body: new Uint8Array(50 * 1024 * 1024),
    })
    expect(res.status).toBe(400)
    const rssAfter = rssOf(server.pid)
    expect(rssAfter - rssBefore).toBeLessThan(40 * 1024 * 1024)
  })

  test('the admin password is never written to the log', () => {
    expect(server.output.length).toBeGreaterThan(0)
    expect(server.output.join('\n')).not.toContain(server.password)
  })
})

describe('first start without SVC_INITIAL_ADMIN_PASSWORD', () => {
  test('a generated password is written to a 0600 file whose path is logged, never the password', async () => {
    const server = await spawnBinary({ env: { SVC_INITIAL_ADMIN_PASSWORD: '' } })
    try {
      const file = join(server.dataDir, 'initial-admin-password')
      expect(existsSync(file)).toBe(true)
      expect(statSync(file).mode & 0o777).toBe(0o600)
      const password = readFileSync(file, 'utf8').trim()
      expect(password.length).toBeGreaterThanOrEqual(16)
      const logs = server.output.join('\n')
      expect(logs).toContain(file)
      expect(logs).not.toContain(password)
      const ok = await fetch(server.url + '/', { headers: { authorization: basicAuth({ name: 'admin', password: password }) } })
      expect(ok.status).toBe(200)
    } finally {
      await server.stop()
    }
  })
})

describe('HTTPS and SIGTERM', () => {
  test('serves HTTPS with a configured certificate and drains on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-tls-'))
    const cert = join(dir, 'cert.pem')
    const key = join(dir, 'key.pem')
    const gen = Bun.spawnSync(
      ['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost'],
      { stderr: 'pipe' },
    )
    expect(gen.exitCode).toBe(0)
    const server = await spawnBinary({ env: { SVC_SETTING_http__tls__certificate: cert, SVC_SETTING_http__tls__key: key } })
    try {
      expect(server.url.startsWith('https://')).toBe(true)
      const res = await fetch(server.url + '/', {
        headers: { authorization: server.auth },
        tls: { rejectUnauthorized: false },
      } as RequestInit)
      expect(res.status).toBe(200)
      // A request whose body is still arriving when SIGTERM comes gets its answer.
      let sendRest!: () => void
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode('{"title": "in flight",'))
          await new Promise<void>((r) => (sendRest = r))
          controller.enqueue(new TextEncoder().encode(' "messages": []}'))
          controller.close()
        },
      })
      const inFlight = fetch(server.url + '/_plugins/_setup/ai_assistant/sessions', {
        method: 'POST',
        headers: { authorization: server.auth, 'content-type': 'application/json' },
        body,
        tls: { rejectUnauthorized: false },
      } as RequestInit)
      await Bun.sleep(200)
      const code = server.stop('SIGTERM')
      // Background work stops while the request drains, not after it: the detection clock is
      // already stopped while the body is still arriving.
      await waitFor(() => server.output.join('\n').includes('detection clock stopped'), {
        timeoutMs: 5000,
        what: 'the detection clock stopped',
      })
      expect(server.output.join('\n')).toContain('detection clock stopped')
      sendRest()
      const answered = await inFlight
      expect(answered.status).toBe(200)
      expect(((await answered.json()) as any).title).toBe('in flight')
      expect(await code).toBe(0)
      expect(server.output.join('\n')).toContain('"stopped"')
    } finally {
      await server.stop().catch(() => {})
    }
  })
})

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
  return kb * 1024
}

/**
 * The server under test: a given URL, or our own binary started on a temporary data dir,
 * and the wipe that resets it between tests.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Executor } from './executor'

export interface StartedServer {
  baseUrl: string
  user: string
  password: string
  /** The server's process id (benchmarks read its memory). */
  pid: number
  stop(): Promise<void>
}

async function freePort(): Promise<number> {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
  const port = probe.port
  probe.stop(true)
  return port!
}

/** Newest modification time under a directory. */
function newest(dir: string): number {
  let t = 0
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) t = Math.max(t, statSync(join(entry.parentPath, entry.name)).mtimeMs)
  }
  return t
}

/** dist/svc-ext when it is built from the current sources, else the sources themselves (a stale binary would test old code). */
function serverCommand(repo: string): string[] {
  const binary = join(repo, 'dist', 'svc-ext')
  if (existsSync(binary) && statSync(binary).mtimeMs >= newest(join(repo, 'src'))) return [binary, 'serve']
  return [process.execPath, join(repo, 'src', 'main.ts'), 'serve']
}

/** Starts the server (see serverCommand) and waits until `GET /` answers. */
export async function startServer(repo: string, log: (line: string) => void): Promise<StartedServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-conformance-'))
  const port = await freePort()
  const password = `Conf-${crypto.randomUUID()}`
  const cmd = serverCommand(repo)
  log(`starting ${cmd.join(' ')} on 127.0.0.1:${port} with data in ${dataDir}`)
  // A node file from the caller's environment would change what is under test.
  const { SVC_CONFIG: _ignored, ...env } = process.env
  const child = Bun.spawn(cmd, {
    cwd: dataDir,
    env: {
      ...env,
      'SVC_SETTING_http.host': '127.0.0.1',
      'SVC_SETTING_http.port': String(port),
      'SVC_SETTING_path.data': dataDir,
      'SVC_SETTING_plugins.content_manager.catalog.update_on_start': 'false',
      'SVC_SETTING_plugins.content_manager.catalog.update_on_schedule': 'false',
      SVC_INITIAL_ADMIN_PASSWORD: password,
    },
    stdout: 'ignore',
    stderr: 'pipe',
  })
  const baseUrl = `http://127.0.0.1:${port}`
  const auth = `Basic ${btoa(`admin:${password}`)}`
  const deadline = Date.now() + 60_000
  let lastError = ''
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      const err = await new Response(child.stderr).text()
      throw new Error(`server exited with ${child.exitCode}: ${err.slice(-2000)}`)
    }
    try {
      const res = await fetch(`${baseUrl}/`, { headers: { Authorization: auth } })
      if (res.ok) break
      lastError = `status ${res.status}`
    } catch (e) {
      lastError = (e as Error).message
    }
    await Bun.sleep(100)
  }
  if (Date.now() >= deadline) {
    child.kill()
    throw new Error(`server did not answer GET / within 60 s (${lastError})`)
  }
  return {
    baseUrl,
    user: 'admin',
    password,
    pid: child.pid,
    async stop() {
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
      await child.exited
      clearTimeout(timer)
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * The wipe of the Java harness, over plain HTTP: PITs, data streams, every index (hidden and
 * closed too), templates, and every persistent and transient cluster setting. Client errors
 * (a 404 for "nothing to delete", a 405 for an API the target lacks) are fine; 5xx are not.
 */
export async function wipe(exec: Executor): Promise<void> {
  const check = (what: string, status: number) => {
    if (status >= 500) throw new Error(`${what} answered ${status}`)
  }
  // Settings first: resetting them may write the index that holds them, which the index wipe then removes.
  const settings = await exec.call('GET', '/_cluster/settings')
  check('get cluster settings', settings.status)
  if (settings.status === 200 && settings.body && typeof settings.body === 'object') {
    const reset: Record<string, Record<string, null>> = {}
    for (const scope of ['persistent', 'transient'] as const) {
      const keys = Object.keys(((settings.body as Record<string, unknown>)[scope] ?? {}) as object)
      if (keys.length > 0) reset[scope] = Object.fromEntries(keys.map((k) => [`${k}.*`, null]))
    }
    if (Object.keys(reset).length > 0) check('reset cluster settings', (await exec.call('PUT', '/_cluster/settings', reset)).status)
  }
  check('delete PITs', (await exec.call('DELETE', '/_search/point_in_time/_all')).status)
  check('delete data streams', (await exec.call('DELETE', '/_data_stream/*')).status)
  check('delete indices', (await exec.call('DELETE', '/*?expand_wildcards=open,closed,hidden')).status)
  for (const kind of ['_index_template', '_template', '_component_template']) {
    check(`delete ${kind}`, (await exec.call('DELETE', `/${kind}/*`)).status)
  }
}

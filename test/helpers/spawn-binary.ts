import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { basicAuth } from './app'

export const repoRoot = join(import.meta.dir, '../..')
export const binaryPath = join(repoRoot, 'dist/svc-ext')

/** End-to-end suites run the compiled binary: its absence is a setup error, named before any test. */
export function requireBinary(): void {
  if (!existsSync(binaryPath)) throw new Error('dist/svc-ext is missing: run `npm run build` (npm test does it)')
}

export interface SpawnedServer {
  url: string
  auth: string
  password: string
  dataDir: string
  pid: number
  /** Every line the process wrote to stdout and stderr so far. */
  output: string[]
  exited: Promise<number>
  stop(signal?: NodeJS.Signals): Promise<number>
}

export interface SpawnOptions {
  args?: string[]
  env?: Record<string, string>
  dataDir?: string
  keepDataDir?: boolean
  /** Another build of the executable (an installed package's); default dist/svc-ext. */
  binary?: string
  /** How long it may take to say it listens (default 30 s; a first start on a real cluster takes longer). */
  startMillis?: number
}

/**
 * Starts dist/svc-ext on a free port over a fresh data dir and resolves once
 * it logs where it listens. Output is drained continuously (a full pipe would
 * block the server) and kept for assertions.
 */
export async function spawnBinary(opts: SpawnOptions = {}): Promise<SpawnedServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-e2e-'))
  const password = 'e2e-Admin-pass-1'
  const proc = Bun.spawn([opts.binary ?? binaryPath, ...(opts.args ?? ['serve'])], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      SVC_SETTING_http__port: '0',
      SVC_SETTING_path__data: dataDir,
      SVC_SETTING_plugins__content_manager__catalog__update_on_start: 'false',
      SVC_SETTING_plugins__content_manager__telemetry__enabled: 'false',
      SVC_INITIAL_ADMIN_PASSWORD: password,
      ...opts.env,
    },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const output: string[] = []
  let announce: (url: string) => void
  const announced = new Promise<string>((r) => (announce = r))
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    let partial = ''
    for await (const chunk of stream) {
      partial += decoder.decode(chunk, { stream: true })
      const lines = partial.split('\n')
      partial = lines.pop()!
      for (const line of lines) {
        output.push(line)
        if (line.includes('"svc-ext started"')) {
          try {
            announce(JSON.parse(line).url)
          } catch {}
        }
      }
    }
    if (partial) output.push(partial)
  }
  void drain(proc.stdout)
  void drain(proc.stderr)
  const exited = proc.exited
  const url = await Promise.race([
    announced,
    exited.then((code) => {
      throw new Error(`svc-ext exited with ${code} before listening:\n${output.join('\n')}`)
    }),
    Bun.sleep(opts.startMillis ?? 30_000).then(() => {
      throw new Error(`svc-ext did not start in ${(opts.startMillis ?? 30_000) / 1000} s:\n${output.join('\n')}`)
    }),
  ])
  return {
    url,
    auth: basicAuth({ name: 'admin', password: password }),
    password,
    dataDir,
    pid: proc.pid,
    output,
    exited,
    async stop(signal = 'SIGTERM') {
      proc.kill(signal)
      const code = await exited
      if (!opts.keepDataDir && !opts.dataDir) rmSync(dataDir, { recursive: true, force: true })
      return code
    },
  }
}

/** Runs the binary with arguments and optional stdin; resolves with its exit code and output. */
export async function runBinary(args: string[], stdin?: string, env: Record<string, string> = {}) {
  const proc = Bun.spawn([binaryPath, ...args], {
    stdin: stdin === undefined ? 'ignore' : new Blob([stdin]),
    stdout: 'pipe',
    stderr: 'pipe',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr }
}

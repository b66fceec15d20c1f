// Runs a README block exactly as written (the fenced ```sh block under its heading, through bash)
// against the compiled binary, in a scratch directory where `./dist/svc-ext` is ours. Only the port
// differs: the environment gives the server a free one (SVC_SETTING_http__port) and the block reads
// the address from $SVC, as the README allows.
import { mkdtempSync, readFileSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { repoRoot, requireBinary } from './spawn-binary'

/** The first ```sh block after `heading` in the README. */
export function readmeBlock(heading: string): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')
  const from = readme.indexOf(heading)
  if (from === -1) throw new Error(`README has no "${heading}" section`)
  const found = /```sh\n([\s\S]*?)```/.exec(readme.slice(from))
  if (!found) throw new Error(`the README section "${heading}" has no \`\`\`sh block`)
  return found[1]
}

/** A TCP port nothing listens on now. */
export const freePort = () => {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

const groups = new Set<number>()

/** Whatever happened, nothing a block started outlives the test (each runs in its own process group). */
export function stopReadmeBlocks(): void {
  for (const group of groups)
    try {
      process.kill(-group, 'SIGTERM')
    } catch {
      // Already gone: the block ended with `kill %1`.
    }
  groups.clear()
}

/**
 * Runs `block` and resolves with its stdout, split into lines, and its stderr; a block that exits
 * non-zero throws with both and the tail of the server's log (`log`, a file the block writes in its
 * directory). `env` is added to PATH, HOME, SVC and the port.
 */
export async function runReadmeBlock(
  block: string,
  opts: { tmpPrefix: string; log: string; env?: Record<string, string> },
): Promise<{ lines: string[]; err: string }> {
  requireBinary()
  const cwd = mkdtempSync(join(tmpdir(), opts.tmpPrefix))
  symlinkSync(join(repoRoot, 'dist'), join(cwd, 'dist'))
  const port = freePort()
  const run = Bun.spawn(['setsid', 'bash', '-c', block], {
    cwd,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: cwd,
      SVC: `http://127.0.0.1:${port}`,
      ...opts.env,
      SVC_SETTING_http__port: String(port),
    },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  groups.add(run.pid)
  const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
  if (code !== 0) {
    const log = readFileSync(join(cwd, opts.log), 'utf8').slice(-3000)
    throw new Error(`the walk-through exited ${code}\nstdout:\n${out}\nstderr:\n${err}\nserver log:\n${log}`)
  }
  return { lines: out.trim().split('\n'), err }
}

// CI's hold on the OpenSearch YAML conformance list: runs scripts/conformance/run.ts (which starts
// the binary, or src/main.ts when it is not built, on a temporary data dir) over the committed
// expected-pass list. A file on that list that stops passing fails this test.
import { expect, test } from 'bun:test'
import { join, resolve } from 'node:path'

const repo = resolve(import.meta.dir, '..', '..')

test(
  'files on the committed expected-pass list pass',
  async () => {
    const child = Bun.spawn([process.execPath, join(repo, 'scripts', 'conformance', 'run.ts')], {
      cwd: repo,
      env: { ...process.env, SVC_CONFORMANCE_URL: '' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
    if (code !== 0) console.log(out.slice(-6000), err.slice(-3000))
    expect(code).toBe(0)
    expect(out).toMatch(/total: \d+ passed, 0 failed/)
  },
  { timeout: 300_000 },
)

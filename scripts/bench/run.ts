// `bun run bench`: runs every scripts/bench/*.bench.ts in turn (or those named on the command line).
import { Glob } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const dir = import.meta.dir
const only = process.argv.slice(2)
const files = [...new Glob('*.bench.ts').scanSync(dir)].sort().filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
// Benchmarks write data dirs and databases; they all go under one directory removed at the end.
const scratch = mkdtempSync(join(tmpdir(), 'svc-bench-'))
let failed = 0
for (const file of files) {
  console.log(`\n=== ${file} ===`)
  const proc = Bun.spawnSync([process.execPath, join(dir, file)], {
    stdout: 'inherit',
    stderr: 'inherit',
    env: { ...process.env, TMPDIR: scratch },
  })
  if (proc.exitCode !== 0) {
    failed++
    console.log(`!!! ${file} exited with ${proc.exitCode}`)
  }
}
rmSync(scratch, { recursive: true, force: true })
process.exit(failed ? 1 : 0)

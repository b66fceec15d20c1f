// Compiles the single executable dist/svc-ext (Bun runtime + our code).
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dir, '..')
mkdirSync(join(root, 'dist'), { recursive: true })
const started = performance.now()
const result = Bun.spawnSync(
  [
    process.execPath,
    'build',
    '--compile',
    '--minify-syntax',
    '--minify-whitespace',
    '--sourcemap',
    join(root, 'src/main.ts'),
    // Workers are separate entry points of the executable: snapshots copy the store off the main
    // thread, the store's log is checkpointed off it, and detector runs evaluate events on a
    // thread of their own.
    join(root, 'src/store/embedded/copy-worker.ts'),
    join(root, 'src/store/embedded/checkpoint-worker.ts'),
    join(root, 'src/ruleset/detection/evaluator-worker.ts'),
    '--outfile',
    join(root, 'dist/svc-ext'),
  ],
  { stdout: 'inherit', stderr: 'inherit', cwd: root },
)
if (result.exitCode !== 0) {
  console.error('build failed')
  process.exit(result.exitCode ?? 1)
}
console.log(`built dist/svc-ext in ${((performance.now() - started) / 1000).toFixed(1)} s`)

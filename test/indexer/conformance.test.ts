// CI's hold on the OpenSearch YAML conformance list: scripts/conformance/run.ts (which starts the
// binary, or src/main.ts when it is not built, on a temporary data dir) runs the committed
// expected-pass list once; every YAML test becomes a test here, so the counts CI prints include
// them (tests listed as unsupported, with their reason, are reported as skipped).
import { expect, test } from 'bun:test'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { locateCorpus, missingCorpusLine } from './conformance-location'

const repo = resolve(import.meta.dir, '..', '..')
const corpus = locateCorpus(process.env, repo)

interface Result {
  file: string
  test: string
  outcome: { status: 'pass' } | { status: 'fail' | 'skip'; reason: string }
}

let results: Result[] = []
if (!corpus.found && !corpus.required) {
  // A fresh clone: the corpus is not part of the repository. Skipped, never failed.
  console.log(missingCorpusLine(corpus))
  test.skip('OpenSearch REST conformance (corpus not found; see the line above)', () => {})
} else {
  const report = join(mkdtempSync(join(tmpdir(), 'svc-conformance-')), 'results.json')
  const child = Bun.spawn([process.execPath, join(repo, 'scripts', 'conformance', 'run.ts'), '--quiet', '--json', report], {
    cwd: repo,
    env: { ...process.env, SVC_CONFORMANCE_URL: '', SVC_CONFORMANCE_DIR: corpus.dir },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  try {
    results = JSON.parse(readFileSync(report, 'utf8')) as Result[]
  } catch {
    // No report: the runner itself failed; the test below says how.
  }

  test('the conformance runner ran the committed list and every file on it passed', () => {
    if (!corpus.found) throw new Error(missingCorpusLine(corpus))
    if (code !== 0) console.log(out.slice(-6000), err.slice(-3000))
    expect(results.length).toBeGreaterThan(300)
    expect(code).toBe(0)
  })
}

for (const r of results) {
  const name = `${r.file} > ${r.test}`
  if (r.outcome.status === 'skip') test.skip(`${name} (${r.outcome.reason})`, () => {})
  else {
    const outcome = r.outcome
    test(name, () => {
      if (outcome.status === 'fail') throw new Error(outcome.reason)
    })
  }
}

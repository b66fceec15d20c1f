#!/usr/bin/env bun
/**
 * OpenSearch YAML REST conformance runner.
 *
 *   bun scripts/conformance/run.ts            the committed list (expected-pass.txt)
 *   bun scripts/conformance/run.ts --all      every file, as a report
 *   options: --url <base> --user <u> --password <p>   (or SVC_CONFORMANCE_URL/_USER/_PASSWORD)
 *            --only <substring[,substring]>   restrict to matching files
 *            --json <file>                    write every result as JSON
 *            --quiet                          no per-test failure lines
 *            --include-unsupported            also run the tests of unsupported-tests.txt
 *
 * Without a URL it starts dist/svc-ext (or src/main.ts) on a temporary data dir. Tests come from
 * <repo>/../shared/conformance/opensearch-rest unless SVC_CONFORMANCE_DIR says otherwise. Exits 1
 * when a test of a file on the committed list fails (the other files only report).
 */
import { writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { Executor, type TestResult } from './executor'
import { loadLists } from './lists'
import { listTestFiles, loadApis, loadSuiteFile } from './suite'
import { startServer, wipe, type StartedServer } from './target'

const here = dirname(new URL(import.meta.url).pathname)
const repo = resolve(here, '..', '..')

interface Options {
  all: boolean
  url?: string
  user?: string
  password?: string
  only: string[]
  json?: string
  quiet: boolean
  includeUnsupported: boolean
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    all: false,
    url: process.env.SVC_CONFORMANCE_URL,
    user: process.env.SVC_CONFORMANCE_USER,
    password: process.env.SVC_CONFORMANCE_PASSWORD,
    only: [],
    quiet: false,
    includeUnsupported: false,
  }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    const next = () => {
      const v = argv[++i]
      if (v === undefined) throw new Error(`${a} needs a value`)
      return v
    }
    if (a === '--all') o.all = true
    else if (a === '--url') o.url = next()
    else if (a === '--user') o.user = next()
    else if (a === '--password') o.password = next()
    else if (a === '--only') o.only.push(...next().split(','))
    else if (a === '--json') o.json = next()
    else if (a === '--quiet') o.quiet = true
    else if (a === '--include-unsupported') o.includeUnsupported = true
    else throw new Error(`unknown argument ${a}`)
  }
  return o
}

interface Counts {
  passed: number
  failed: number
  skipped: number
}

const add = (c: Counts, r: TestResult) => {
  if (r.outcome.status === 'pass') c.passed++
  else if (r.outcome.status === 'fail') c.failed++
  else c.skipped++
}

const fmt = (c: Counts) => `${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`

export async function main(argv: string[]): Promise<number> {
  const opts = parseArgs(argv)
  const suiteDir = process.env.SVC_CONFORMANCE_DIR ?? resolve(repo, '..', 'shared', 'conformance', 'opensearch-rest')
  const lists = loadLists(here)
  const { apis, common } = loadApis(suiteDir)
  const available = listTestFiles(suiteDir)
  for (const f of lists.expectedPass)
    if (!available.includes(f)) throw new Error(`expected-pass.txt names ${f}, which is not in ${suiteDir}`)
  let files = opts.all ? available : available.filter((f) => lists.expectedPass.has(f))
  if (opts.only.length > 0) files = files.filter((f) => opts.only.some((s) => f.includes(s)))

  let server: StartedServer | undefined
  let baseUrl = opts.url?.replace(/\/$/, '')
  let user = opts.user
  let password = opts.password
  if (!baseUrl) {
    server = await startServer(repo, (l) => console.error(l))
    ;({ baseUrl, user, password } = server)
  }
  const authorization = user !== undefined ? `Basic ${btoa(`${user}:${password ?? ''}`)}` : undefined

  const results: TestResult[] = []
  try {
    const probe = new Executor({ baseUrl: baseUrl!, authorization, version: '0.0.0' }, apis, common)
    const info = await probe.call('GET', '/')
    const version = (info.body as { version?: { number?: string } })?.version?.number
    if (info.status !== 200 || typeof version !== 'string')
      throw new Error(`GET / answered ${info.status}; cannot learn the target version`)
    console.log(`target ${baseUrl} reports version ${version}; ${files.length} file(s) from ${suiteDir}`)
    const exec = new Executor({ baseUrl: baseUrl!, authorization, version }, apis, common)
    await wipe(exec)

    for (const path of files) {
      let file: ReturnType<typeof loadSuiteFile>
      try {
        file = loadSuiteFile(suiteDir, path)
      } catch (e) {
        // A file the YAML parser cannot read fails alone instead of ending the run.
        const reason = `cannot load the file: ${e instanceof Error ? e.message : String(e)}`
        results.push({ file: path, test: '(file)', outcome: { status: 'fail', reason } } as TestResult)
        console.log(`${(lists.expectedPass.has(path) ? 'REGRESSED' : 'fail').padEnd(9)} ${path}: ${reason}`)
        continue
      }
      for (const name of lists.unsupported.get(path)?.keys() ?? []) {
        if (!file.tests.some((t) => t.name === name))
          throw new Error(`unsupported-tests.txt names [${name}], which is not a test of ${path}`)
      }
      const fileResults = await exec.runFile(file, opts.includeUnsupported ? new Map() : (lists.unsupported.get(path) ?? new Map()), () =>
        wipe(exec),
      )
      results.push(...fileResults)
      const c: Counts = { passed: 0, failed: 0, skipped: 0 }
      fileResults.forEach((r) => add(c, r))
      const mark = lists.expectedPass.has(path)
        ? c.failed > 0
          ? 'REGRESSED'
          : 'ok'
        : c.failed > 0
          ? 'fail'
          : c.passed > 0
            ? 'pass'
            : 'skip'
      const scope = lists.outOfScope.has(path) ? ` [out of scope: ${lists.outOfScope.get(path)}]` : ''
      console.log(`${mark.padEnd(9)} ${path}: ${fmt(c)}${scope}`)
      if (!opts.quiet) {
        for (const r of fileResults)
          if (r.outcome.status === 'fail') console.log(`            x ${r.test}: ${r.outcome.reason.replace(/\s+/g, ' ').slice(0, 600)}`)
      }
    }
  } finally {
    await server?.stop()
  }

  const folders = new Map<string, Counts>()
  const total: Counts = { passed: 0, failed: 0, skipped: 0 }
  for (const r of results) {
    const folder = r.file.split('/')[0]
    if (!folders.has(folder)) folders.set(folder, { passed: 0, failed: 0, skipped: 0 })
    add(folders.get(folder)!, r)
    add(total, r)
  }
  console.log('\nper folder:')
  for (const [folder, c] of [...folders].sort()) console.log(`  ${folder.padEnd(36)} ${fmt(c)}`)
  console.log(`total: ${fmt(total)} (${results.length} tests in ${files.length} files)`)

  if (opts.json) writeFileSync(opts.json, JSON.stringify(results, null, 2))
  const regressed = [...new Set(results.filter((r) => r.outcome.status === 'fail' && lists.expectedPass.has(r.file)).map((r) => r.file))]
  if (regressed.length > 0) {
    console.log(`\nFAILED: ${regressed.length} file(s) on the committed list: ${regressed.join(', ')}`)
    return 1
  }
  return 0
}

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      console.error(e instanceof Error ? e.message : e)
      process.exit(2)
    },
  )
}

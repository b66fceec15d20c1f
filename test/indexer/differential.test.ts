// Differential testing: seeded workloads of index API calls run against the embedded store (served
// over HTTP by svc-ext) and a real OpenSearch, answers compared after normalizing only what may
// legitimately differ (./differential/compare.ts). The fixed seeds run in `npm test`; a long
// randomized run: DIFF_SEEDS=1-500 DIFF_OPS=200 bun test test/indexer/differential.test.ts
// Differences the embedded store keeps on purpose are listed in the README ("Differences between
// the modes") and not generated.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { describeOnOpenSearch, OPENSEARCH_START_MS, realOpenSearch } from '../helpers/opensearch'
import { differences, normalize, run, type Target } from './differential/compare'
import { workload } from './differential/workload'
import { PASSWORD, startIndexApi, type TestServer } from './helpers'

const FIXED_SEEDS = [1, 2, 3, 4, 5, 6, 7, 8]

function seeds(spec: string | undefined): number[] {
  if (!spec) return FIXED_SEEDS
  return spec.split(',').flatMap((part) => {
    const [a, b] = part.split('-').map(Number)
    return b === undefined ? [a] : Array.from({ length: b - a + 1 }, (_, i) => a + i)
  })
}

const SEEDS = seeds(process.env.DIFF_SEEDS)
const SEARCHES = Number(process.env.DIFF_OPS ?? 40)

describeOnOpenSearch('differential: the embedded store answers as a real OpenSearch', () => {
  let api: TestServer
  let embedded: Target
  let opensearch: Target
  let compared = 0

  beforeAll(async () => {
    api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
    embedded = { url: api.url, authorization: `Basic ${btoa(`admin:${PASSWORD}`)}` }
    const os = await realOpenSearch('dev')
    opensearch = { url: os.urls[0] }
  }, OPENSEARCH_START_MS)

  afterAll(async () => {
    await api?.stop()
    if (compared > 0) console.log(`differential: ${compared} operations compared over ${SEEDS.length} seed(s)`)
  })

  for (const seed of SEEDS) {
    test(`seed ${seed}`, async () => {
      const { index, ops } = workload(seed, SEARCHES)
      // Also the names the workload's aliases take, should a failed run have left an index under one.
      const wipe = (t: Target) =>
        fetch(`${t.url}/${index},${index}-alias,${index}-filtered?ignore_unavailable=true`, {
          method: 'DELETE',
          headers: t.authorization ? { authorization: t.authorization } : {},
        })
      await Promise.all([wipe(embedded), wipe(opensearch)])
      const [mine, theirs] = await Promise.all([run(embedded, ops), run(opensearch, ops)])
      const report: string[] = []
      ops.forEach((op, i) => {
        const diff = differences(normalize(mine.answers[i]), normalize(theirs.answers[i]))
        if (diff.length === 0) return
        const req = theirs.requests[i]
        report.push(`#${i} ${op.name}: ${req.method} ${req.path} ${JSON.stringify(req.body ?? req.ndjson ?? '').slice(0, 600)}`)
        report.push(...diff.slice(0, 8).map((d) => `    ${d.slice(0, 400)}`))
      })
      compared += ops.length
      await Promise.all([wipe(embedded), wipe(opensearch)])
      if (report.length > 0) console.log(`seed ${seed} (embedded vs OpenSearch):\n${report.join('\n')}`)
      expect(report).toEqual([])
    }, 60_000)
  }
})

/**
 * Fair share of the node (issue 12): p99 of `GET /` from 4 clients on an idle binary, then the
 * same while other clients keep running the worst searches the limits allow (1,024 regexp
 * clauses over every document, node time budget 5 s). Both phases in the same run.
 *
 *   BENCH_MS=5000 bun scripts/bench/fair-share.bench.ts
 */
import { fmt, runLoad } from './lib/load'
import { spawnBinary } from './lib/processes'

const durationMs = Number(process.env.BENCH_MS ?? 5000)
const svc = await spawnBinary({ env: { SVC_SETTING_search__default_search_timeout: '5s' } })
const headers = { authorization: svc.auth, 'content-type': 'application/json' }
try {
  const lines: string[] = []
  for (let i = 0; i < 5000; i++)
    lines.push(JSON.stringify({ index: { _index: 'fair' } }), JSON.stringify({ title: 'a'.repeat(31), body: 'ab'.repeat(100), n: i }))
  const bulk = await fetch(`${svc.url}/_bulk?refresh=true`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/x-ndjson' },
    body: lines.join('\n') + '\n',
  })
  if (!bulk.ok) throw new Error(`bulk: ${bulk.status}`)

  const idle = await runLoad({ url: svc.url + '/', headers, concurrency: 4, durationMs, warmupMs: 500 })

  const worst = JSON.stringify({
    size: 0,
    query: {
      bool: { should: Array.from({ length: 1024 }, (_, i) => ({ regexp: { 'title.keyword': i % 2 ? '(a+)+b' : `(a|aa)*${i}` } })) },
    },
  })
  let heavyDone = 0
  let heavyTimedOut = 0
  let stop = false
  const heavy = Promise.all(
    Array.from({ length: 2 }, async () => {
      while (!stop) {
        const r = await fetch(`${svc.url}/fair/_search`, { method: 'POST', headers, body: worst })
        const b = (await r.json()) as { timed_out?: boolean }
        if (!r.ok) throw new Error(`heavy search: ${r.status} ${JSON.stringify(b).slice(0, 200)}`)
        heavyDone++
        if (b.timed_out) heavyTimedOut++
      }
    }),
  )
  await Bun.sleep(200)
  const busy = await runLoad({ url: svc.url + '/', headers, concurrency: 4, durationMs })
  stop = true
  await heavy

  console.log(`GET / idle                          ${fmt(idle)}`)
  console.log(`GET / during 2 worst-case searches  ${fmt(busy)}`)
  console.log(`heavy searches finished ${heavyDone} (timed out ${heavyTimedOut})`)
  console.log(`p99 busy ${busy.p99.toFixed(1)} ms; ratio busy/idle p99 ${(busy.p99 / idle.p99).toFixed(2)}x`)
} finally {
  await svc.stop()
}

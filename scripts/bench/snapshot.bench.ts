/**
 * Online snapshots (issue 17): p99 of `GET /` from 4 clients on an idle binary holding ~40 MB of
 * documents, then the same while snapshots of that store are taken back to back (the copy runs in
 * a worker on its own read transaction). Both phases in the same run; also the snapshot time.
 *
 *   BENCH_MS=5000 bun scripts/bench/snapshot.bench.ts
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fmt, runLoad } from './lib/load'
import { spawnBinary } from './lib/processes'

const durationMs = Number(process.env.BENCH_MS ?? 5000)
const repo = mkdtempSync(join(tmpdir(), 'svc-bench-repo-'))
const svc = await spawnBinary({ env: { SVC_SETTING_path__repo: repo } })
const headers = { authorization: svc.auth, 'content-type': 'application/json' }
try {
  for (let batch = 0; batch < 8; batch++) {
    const lines: string[] = []
    for (let i = 0; i < 5000; i++)
      lines.push(JSON.stringify({ index: { _index: 'snap' } }), JSON.stringify({ n: batch * 5000 + i, text: 'x'.repeat(1000) }))
    const bulk = await fetch(`${svc.url}/_bulk`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-ndjson' },
      body: lines.join('\n') + '\n',
    })
    if (!bulk.ok) throw new Error(`bulk: ${bulk.status}`)
  }
  const put = await fetch(`${svc.url}/_snapshot/bench`, {
    method: 'PUT',
    headers,
    body: JSON.stringify({ type: 'fs', settings: { location: 'r' } }),
  })
  if (!put.ok) throw new Error(`repository: ${put.status}`)

  const idle = await runLoad({ url: svc.url + '/', headers, concurrency: 4, durationMs, warmupMs: 500 })

  let stop = false
  const took: number[] = []
  const snapshots = (async () => {
    for (let i = 0; !stop; i++) {
      const started = performance.now()
      const r = await fetch(`${svc.url}/_snapshot/bench/s${i}?wait_for_completion=true`, { method: 'PUT', headers })
      const b = (await r.json()) as { snapshot?: { state: string } }
      if (b.snapshot?.state !== 'SUCCESS') throw new Error(`snapshot: ${r.status} ${JSON.stringify(b).slice(0, 200)}`)
      took.push(performance.now() - started)
      await fetch(`${svc.url}/_snapshot/bench/s${i}`, { method: 'DELETE', headers })
    }
  })()
  await Bun.sleep(100)
  const busy = await runLoad({ url: svc.url + '/', headers, concurrency: 4, durationMs })
  stop = true
  await snapshots

  const mean = took.reduce((a, b) => a + b, 0) / Math.max(1, took.length)
  console.log(`GET / idle                      ${fmt(idle)}`)
  console.log(`GET / during back-to-back snaps ${fmt(busy)}`)
  console.log(`snapshots taken ${took.length}, mean ${mean.toFixed(0)} ms each`)
  console.log(`p99 busy ${busy.p99.toFixed(1)} ms; ratio busy/idle p99 ${(busy.p99 / idle.p99).toFixed(2)}x`)
} finally {
  await svc.stop()
}

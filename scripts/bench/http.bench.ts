// GET / on svc-ext (authenticated, as every caller is) vs a bare Bun.serve answering the same JSON.
import { fmt, runLoad } from './lib/load'
import { spawnBinary, spawnScript } from './lib/processes'

const concurrency = 32
const durationMs = Number(process.env.BENCH_MS ?? 5000)

const svc = await spawnBinary()
const sample = await (await fetch(svc.url + '/', { headers: { authorization: svc.auth } })).text()
const bare = await spawnScript('bare-server.ts', [sample])
try {
  const base = await runLoad({ url: bare.url + '/', concurrency, durationMs, warmupMs: 1000 })
  const ours = await runLoad({ url: svc.url + '/', headers: { authorization: svc.auth }, concurrency, durationMs, warmupMs: 1000 })
  console.log(`bare Bun.serve GET /   ${fmt(base)}`)
  console.log(`svc-ext GET /          ${fmt(ours)}`)
  console.log(`ratio svc-ext/bare: throughput ${(ours.rps / base.rps).toFixed(2)}, p99 ${(ours.p99 / base.p99).toFixed(2)}x`)
} finally {
  await bare.stop()
  await svc.stop()
}

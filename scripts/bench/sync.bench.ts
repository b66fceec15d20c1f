// Content sync at volume, against the compiled binary (dist/svc-ext) and the CTI test server:
//
// 1. Snapshot: BENCH_SYNC_DOCS (default 500,000) vulnerability documents served as a ZIP snapshot
//    and loaded by a sync pass (download, streamed unzip, envelopes, bulks, staging swap). Baseline,
//    same run: the same envelopes sent by this script to the `_bulk` API of another fresh binary
//    into a plain index (bulks of 1,000, two in flight). Reported: docs/s of both and their ratio,
//    the binary's peak RSS (VmHWM) during the pass, and `GET /` latency measured alongside it (one
//    client, back to back) against `GET /` on the idle node before the pass.
// 2. Changes: BENCH_SYNC_CHANGES (default 20,000) mixed IoC changes (create, update, delete) after
//    a snapshot, applied by a pass; baseline: the equivalent `_bulk` operations (index, index,
//    delete) of the same documents, raw.
//
// Short variant: BENCH_SYNC_DOCS=50000 BENCH_SYNC_CHANGES=5000 bun scripts/bench/sync.bench.ts
import { readFileSync } from 'node:fs'
import { cveType, iocEnvelope } from '../../src/content/sync/documents'
import { payloads, startCtiServer, type CtiServer, type FakeConsumer } from '../../test/fixtures/cti/server'
import { percentile } from './lib/load'
import { spawnBinary } from './lib/processes'

const DOCS = Number(process.env.BENCH_SYNC_DOCS ?? 500_000)
const CHANGES = Number(process.env.BENCH_SYNC_CHANGES ?? 20_000)
type Node = Awaited<ReturnType<typeof spawnBinary>>

const call = async (n: Node, method: string, path: string, body?: string) => {
  const res = await fetch(n.url + path, { method, headers: { authorization: n.auth, 'content-type': 'application/x-ndjson' }, body })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`)
  return JSON.parse(text)
}

const rssOf = (pid: number, field: 'VmRSS' | 'VmHWM') => {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+) kB`))
  return m ? Number(m[1]) / 1024 : NaN
}

function env(cti: CtiServer, extra: Record<string, string> = {}) {
  return {
    SVC_SETTING_plugins__content_manager__cti__api: cti.base,
    SVC_SETTING_plugins__content_manager__engine__mock: 'true',
    SVC_SETTING_plugins__content_manager__catalog__update_on_schedule: 'false',
    ...extra,
  }
}

/**
 * The node's own event-loop delay since the previous scrape (prom-client resets it per scrape), in
 * ms. `GET /` latencies are measured from this process, which also runs the CTI server that builds
 * the snapshot: a long one there shows in them without the node having stalled; this does not.
 */
async function loopLag(n: Node): Promise<{ p99: number; max: number }> {
  const text = await fetch(n.url + '/_prometheus/metrics', { headers: { authorization: n.auth } }).then((r) => r.text())
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) * 1000
  return { p99: value('nodejs_eventloop_lag_p99_seconds'), max: value('nodejs_eventloop_lag_max_seconds') }
}

/** `GET /` back to back until `stop()`; latencies in ms. */
function probe(n: Node) {
  const latencies: number[] = []
  let running = true
  const done = (async () => {
    while (running) {
      const t = performance.now()
      await fetch(n.url + '/', { headers: { authorization: n.auth } }).then((r) => r.arrayBuffer())
      latencies.push(performance.now() - t)
      await Bun.sleep(5)
    }
  })()
  return {
    async stop() {
      running = false
      await done
      latencies.sort((a, b) => a - b)
      return { n: latencies.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) ?? NaN }
    },
  }
}

/** Sends NDJSON bulk bodies, `concurrency` in flight. */
async function rawBulk(n: Node, bodies: Iterable<string>, concurrency = 2): Promise<number> {
  const t = performance.now()
  const inFlight = new Set<Promise<unknown>>()
  for (const body of bodies) {
    const p: Promise<unknown> = call(n, 'POST', '/_bulk', body).then((r) => {
      // A delete can reach the node before the create of the bulk sent just before it (two in flight).
      const failed = r.errors && r.items.find((i: any) => Object.values(i as object)[0].status >= 300 && !i.delete)
      if (failed) throw new Error(`bulk errors: ${JSON.stringify(failed)}`)
      inFlight.delete(p)
    })
    inFlight.add(p)
    if (inFlight.size >= concurrency) await Promise.race(inFlight)
  }
  await Promise.all(inFlight)
  return (performance.now() - t) / 1000
}

async function waitReady(n: Node, type: string, offset: number): Promise<void> {
  for (;;) {
    const r = await fetch(`${n.url}/.svc-cti-consumers/_doc/${encodeURIComponent(type)}`, { headers: { authorization: n.auth } })
    const doc: any = r.status === 200 ? await r.json() : undefined
    const s = doc?._source
    if (s?.status === 'ready' && s.local_offset >= offset && !s.post_sync_pending) return
    if (s?.status === 'failed') throw new Error(`consumer failed: ${JSON.stringify(s.last_pass)}`)
    await Bun.sleep(20)
  }
}

async function snapshotBench(cti: CtiServer) {
  const feed = cti.consumer('t1-vd-5', 'public-vd-5')
  // Generated on demand and streamed as a ZIP by the CTI test server: nothing is held per document.
  const cve = (i: number) => {
    const id = `CVE-2024-${i}`
    return {
      resource: id,
      payload: payloads.cve(id, { cvss: { score: (i % 100) / 10 }, references: [`https://nvd.example/${id}`], published: '2024-05-01' }),
    }
  }
  feed.generate({ snapshot: DOCS, document: cve })
  console.log(`snapshot: ${DOCS} vulnerability documents, generated and streamed by the CTI test server`)

  // Baseline: raw _bulk of the same envelopes into a plain index of a fresh node.
  const base = await spawnBinary({ env: env(cti) })
  const bulks = function* () {
    for (let i = 1; i <= DOCS; i += 1000) {
      let body = ''
      for (let j = i; j < Math.min(DOCS + 1, i + 1000); j++) {
        const { resource, payload } = cve(j)
        body += `{"index":{"_index":"plain-vulnerabilities","_id":${JSON.stringify(resource)}}}\n${JSON.stringify({ document: payload, offset: j, type: cveType(resource) })}\n`
      }
      yield body
    }
  }
  const baseSeconds = await rawBulk(base, bulks())
  await base.stop()

  // The sync pass on another fresh node, with GET / probed and RSS watched meanwhile.
  const node = await spawnBinary({ env: env(cti, { SVC_SETTING_plugins__content_manager__catalog__vulnerabilities: feed.url }) })
  await Bun.sleep(3000) // start-up work (Setup bootstrap) is not what is measured
  const idle = probe(node)
  await Bun.sleep(2000)
  const idleLatency = await idle.stop()
  const rssBefore = rssOf(node.pid, 'VmRSS')
  await loopLag(node) // a scrape starts the node's event-loop delay histogram anew
  const busy = probe(node)
  const t = performance.now()
  await call(node, 'POST', '/_plugins/_content_manager/update')
  await waitReady(node, 'cti:catalog:consumer:vulnerabilities', feed.lastOffset)
  const syncSeconds = (performance.now() - t) / 1000
  const busyLatency = await busy.stop()
  const lag = await loopLag(node)
  const peak = rssOf(node.pid, 'VmHWM')
  const count = (await call(node, 'GET', '/.svc-threatintel-vulnerabilities/_count?expand_wildcards=all')).count
  await node.stop()
  if (count !== DOCS) throw new Error(`expected ${DOCS} documents, found ${count}`)

  const baseRate = DOCS / baseSeconds
  const syncRate = DOCS / syncSeconds
  console.log(`raw _bulk (plain index)  : ${DOCS} docs in ${baseSeconds.toFixed(1)} s = ${Math.round(baseRate)} docs/s`)
  console.log(`snapshot sync pass       : ${DOCS} docs in ${syncSeconds.toFixed(1)} s = ${Math.round(syncRate)} docs/s`)
  console.log(`ratio sync / raw _bulk   : ${(syncRate / baseRate).toFixed(2)}  (target >= 0.7)`)
  console.log(`peak RSS of the node     : ${peak.toFixed(0)} MiB (VmHWM; ${rssBefore.toFixed(0)} MiB before the pass; target < 300)`)
  const fmt = (l: { n: number; p50: number; p99: number; max: number }) =>
    `p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms, max ${l.max.toFixed(1)} ms (${l.n} requests)`
  console.log(`GET / idle               : ${fmt(idleLatency)}`)
  console.log(`GET / during the pass    : ${fmt(busyLatency)}  (target p99 < 100 ms)`)
  console.log(`node event-loop delay   : p99 ${lag.p99.toFixed(1)} ms, max ${lag.max.toFixed(1)} ms during the pass (its own monitor)`)
}

async function changesBench(cti: CtiServer) {
  const start = Math.max(1000, Math.floor(CHANGES / 2))
  const feed: FakeConsumer = cti.consumer('t1-iocs-5', 'public-iocs-5')
  for (let i = 1; i <= start; i++) feed.create(String(i), payloads.ioc(String(i)))
  feed.publishSnapshot()
  const snapshotOffset = feed.lastOffset
  const ops: Array<{ kind: 'index' | 'delete'; id: string }> = []
  for (let n = 0; n < CHANGES; n++) {
    if (n % 3 === 0) {
      feed.create(`new-${n}`, payloads.ioc(`new-${n}`))
      ops.push({ kind: 'index', id: `new-${n}` })
    } else if (n % 3 === 1) {
      const id = String(1 + ((n * 7919) % start))
      if (!feed.state.has(id)) continue
      feed.update(id, [{ op: 'replace', path: '/document/confidence', value: n % 100 }])
      ops.push({ kind: 'index', id })
    } else {
      const id = `new-${n - 2}`
      feed.delete(id)
      ops.push({ kind: 'delete', id })
    }
  }
  const changes = feed.lastOffset - snapshotOffset

  const base = await spawnBinary({ env: env(cti) })
  const bulks = function* () {
    for (let i = 0; i < ops.length; i += 1000) {
      let body = ''
      for (const op of ops.slice(i, i + 1000)) {
        if (op.kind === 'delete') body += `{"delete":{"_index":"plain-iocs","_id":${JSON.stringify(op.id)}}}\n`
        else {
          const doc = feed.state.get(op.id)?.payload.document ?? payloads.ioc(op.id).document
          body += `{"index":{"_index":"plain-iocs","_id":${JSON.stringify(op.id)}}}\n${JSON.stringify(iocEnvelope(doc as Record<string, unknown>, 1))}\n`
        }
      }
      yield body
    }
  }
  const baseSeconds = await rawBulk(base, bulks())
  await base.stop()

  const node = await spawnBinary({ env: env(cti, { SVC_SETTING_plugins__content_manager__catalog__iocs: feed.url }) })
  // Load the snapshot part first (not measured), then expose the changes and time their pass.
  const all = feed.lastOffset
  feed.lastOffset = snapshotOffset
  await call(node, 'POST', '/_plugins/_content_manager/update')
  await waitReady(node, 'cti:catalog:consumer:iocs', snapshotOffset)
  feed.lastOffset = all
  const t = performance.now()
  let started = false
  while (!started) {
    const r = await fetch(node.url + '/_plugins/_content_manager/update', { method: 'POST', headers: { authorization: node.auth } })
    started = r.status === 202
    if (!started) await Bun.sleep(100)
  }
  await waitReady(node, 'cti:catalog:consumer:iocs', all)
  const syncSeconds = (performance.now() - t) / 1000
  await node.stop()
  const baseRate = ops.length / baseSeconds
  const syncRate = changes / syncSeconds
  console.log(`raw _bulk (same ops)     : ${ops.length} ops in ${baseSeconds.toFixed(2)} s = ${Math.round(baseRate)} ops/s`)
  console.log(
    `change feed pass         : ${changes} changes in ${syncSeconds.toFixed(2)} s = ${Math.round(syncRate)} changes/s (incl. IoC post-sync)`,
  )
  console.log(`ratio changes / raw _bulk: ${(syncRate / baseRate).toFixed(2)}  (target >= 0.5)`)
}

const cti = startCtiServer()
try {
  if (DOCS > 0) await snapshotBench(cti)
  if (CHANGES > 0) await changesBench(cti)
} finally {
  await cti.stop()
}

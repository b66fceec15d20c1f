// The in-memory IoC index (src/ruleset/threat-intel/ioc-index.ts) at volume, in process:
//
// 1. Memory: BENCH_IOCS (default 1,000,000) IoCs of the feed's kinds (IPv4 with and without port,
//    IPv4 networks, IPv6, domains, md5/sha1/sha256, URLs) put one by one; the heap grown after a
//    full collection, against the budget of 200 MiB.
// 2. A change batch of BENCH_IOC_CHANGES (default 10,000: a third updates, a third deletes, a third
//    creates) applied incrementally, against the budget of 1 s and against rebuilding the set.
// 3. Lookups: event values probed per second (a tenth of them listed), against a plain Map.get of
//    the same strings.
import { candidateType, IocCollector } from '../../src/ruleset/threat-intel/collect'
import { IocIndex, type IocEntry } from '../../src/ruleset/threat-intel/ioc-index'
import { benchIoc } from './lib/iocs'

const N = Number(process.env.BENCH_IOCS ?? 1_000_000)
const CHANGES = Number(process.env.BENCH_IOC_CHANGES ?? 10_000)
const MiB = 1024 * 1024

const ioc = benchIoc

const heap = () => {
  Bun.gc(true)
  return process.memoryUsage().heapUsed
}

const before = heap()
let t = performance.now()
const ix = new IocIndex()
// Each entry goes through JSON as the loader's do (the store's documents are parsed): flat strings.
for (let i = 0; i < N; i++) ix.put(JSON.parse(JSON.stringify(ioc(i))) as IocEntry)
// (includes the JSON round trip per entry, as a load from the store pays its parse)
const buildMs = performance.now() - t
const grown = heap() - before
console.log(`IoCs indexed: ${ix.size.toLocaleString()} of ${N.toLocaleString()}  keys by type: ${JSON.stringify(ix.counts())}`)
console.log(
  `memory: ${(grown / MiB).toFixed(1)} MiB heap (${((grown / MiB / 200) * 100).toFixed(0)}% of the 200 MiB budget), ${Math.round(grown / N)} bytes per IoC`,
)
console.log(`full build: ${buildMs.toFixed(0)} ms (${Math.round(N / (buildMs / 1000)).toLocaleString()} IoCs/s)`)

const batch: Array<[string, IocEntry | null]> = []
for (let c = 0; c < CHANGES; c++) {
  const i = Math.floor((c * N) / CHANGES)
  if (c % 3 === 0) batch.push([`ioc-${i}`, ioc(i, 1)])
  else if (c % 3 === 1) batch.push([`ioc-${i}`, null])
  else batch.push([`new-${c}`, { ...ioc(N + c), id: `new-${c}` }])
}
t = performance.now()
ix.apply(batch)
const applyMs = performance.now() - t
console.log(
  `change batch of ${CHANGES.toLocaleString()}: ${applyMs.toFixed(1)} ms (${((applyMs / 1000) * 100).toFixed(1)}% of the 1 s budget; a rebuild takes ${(buildMs / applyMs).toFixed(0)}x as long)`,
)

const probes: string[] = []
for (let p = 0; p < 200_000; p++) {
  const e = ioc(p % 10 === 0 ? (p * 13) % N : N + 50_000 + p)
  probes.push(e.type.startsWith('ip') ? e.value.replace(/:\d+$/, '').replace(/\/\d+$/, '') : e.value)
}
const types = probes.map((_, p) => {
  const k = (p % 10 === 0 ? (p * 13) % N : N + 50_000 + p) % 20
  return k < 10 ? 'ipv4-addr' : k < 13 ? 'domain-name' : k < 17 ? 'hashes' : 'url'
}) as Array<'ipv4-addr' | 'domain-name' | 'hashes' | 'url'>
t = performance.now()
let hits = 0
for (let p = 0; p < probes.length; p++) hits += ix.match(types[p], probes[p]).length > 0 ? 1 : 0
const matchMs = performance.now() - t
const plain = new Map(probes.map((v, p) => [v, p]))
t = performance.now()
let found = 0
for (let r = 0; r < 1; r++) for (const v of probes) found += plain.get(v) !== undefined ? 1 : 0
const mapMs = performance.now() - t
console.log(
  `lookups: ${Math.round(probes.length / (matchMs / 1000)).toLocaleString()} values/s (${hits.toLocaleString()} matched of ${probes.length.toLocaleString()}); ${(matchMs / mapMs).toFixed(1)}x the time of a plain Map.get of the same strings (${found})`,
)

// 4. The detector's share: 200,000 network events (source and destination address, one in 50
//    listed) gathered by the IoC collector as the scan does, and looked up in the index, against
//    the JSON.parse of the same events that the scan pays anyway.
const EVENTS = 200_000
const texts: string[] = []
for (let e = 0; e < EVENTS; e++) {
  const listed =
    e % 50 === 0 ? ioc(((e * 31) % N) - (((e * 31) % N) % 20) + 7).value : `10.${(e >>> 16) & 255}.${(e >>> 8) & 255}.${e & 255}`
  texts.push(
    JSON.stringify({
      '@timestamp': '2026-01-01T00:00:00Z',
      source: { ip: listed, port: 443 },
      destination: { ip: `172.16.${e & 255}.9` },
      event: { action: 'x' },
    }),
  )
}
t = performance.now()
const parsed = texts.map((x) => JSON.parse(x) as Record<string, unknown>)
const parseMs = performance.now() - t
const collector = new IocCollector([{ type: 'ipv4-addr', fields: ['destination.ip', 'source.ip'] }])
t = performance.now()
let matchedValues = 0
for (let b = 0; b < EVENTS; b += 2000) {
  for (let e = b; e < b + 2000; e++) collector.collect(`id-${e}`, parsed[e])
  const found = collector.take()
  if (found)
    for (let k = 0; k < found.values.length; k++) if (ix.match(candidateType(found, k), found.values[k]).length > 0) matchedValues++
}
const tiMs = performance.now() - t
console.log(
  `event pass: ${Math.round(EVENTS / (tiMs / 1000)).toLocaleString()} events/s gathered and looked up (${matchedValues.toLocaleString()} listed values), ${((tiMs / parseMs) * 100).toFixed(0)}% of the time the scan spends parsing them`,
)

/**
 * Peak memory of the binary (issue 12, item 8), from the kernel's own peak-RSS counter (VmHWM,
 * reset through /proc/<pid>/clear_refs before each phase):
 *  - one 50 MiB `_bulk`: peak over idle RSS, as a multiple of the body size;
 *  - 100 concurrent `_search` over a sessions-like stream that holds one 4 MiB transcript among
 *    small sessions: peak RSS.
 * Each phase runs on a fresh process, so that one's leftovers do not count in the other.
 *
 * Then the phases of issue 29 (item 6), each peak on a fresh process (see memory-phases.ts): SigmaHQ's
 * 2,407 Windows rules created through the content manager and logtest over them (the binary),
 * detector runs of 2,407 and 1,000 real rules over 100k events and of 1,000 generated rules over
 * 1M events (detector.bench's in-process node), a CTI sync of 100k vulnerabilities and 50k IoCs (the
 * binary and the CTI test server). A table of peaks against the targets ends the output.
 *
 *   bun scripts/bench/memory.bench.ts                    # everything
 *   BENCH_MEMORY_PHASES=sync,rules-2407 bun scripts/bench/memory.bench.ts   # phases by name ('-' skips the first two)
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { spawnBinary } from './lib/processes'
import { runPhases } from './lib/memory-phases'

const MiB = 1024 * 1024

function status(pid: number, key: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${key}:`))!
  return Number(/(\d+)/.exec(line)![1]) * 1024
}
const resetPeak = (pid: number) => writeFileSync(`/proc/${pid}/clear_refs`, '5')
const mib = (n: number) => `${(n / MiB).toFixed(0)} MiB`

const selected = process.env.BENCH_MEMORY_PHASES?.split(',')
if (!selected) await bulkAndSearches()
await runPhases(selected)

async function bulkAndSearches() {
  let svc = await spawnBinary()
  let headers = { authorization: svc.auth, 'content-type': 'application/json' }
  try {
    // --- 50 MiB bulk
    const lines: string[] = []
    let size = 0
    for (let i = 0; size < 50 * MiB; i++) {
      const a = JSON.stringify({ index: { _index: 'bulk-mem', _id: String(i) } })
      const d = JSON.stringify({ n: i, user: `u${i % 100}`, message: `event ${i} `.padEnd(900, 'lorem ipsum dolor ') })
      lines.push(a, d)
      size += a.length + d.length + 2
    }
    const body = lines.join('\n') + '\n'
    lines.length = 0
    await Bun.sleep(500)
    const idle = status(svc.pid, 'VmRSS')
    resetPeak(svc.pid)
    const r = await fetch(`${svc.url}/_bulk`, { method: 'POST', headers: { ...headers, 'content-type': 'application/x-ndjson' }, body })
    const answer = (await r.json()) as { errors: boolean; items: unknown[] }
    const peak = status(svc.pid, 'VmHWM')
    console.log(
      `bulk ${mib(body.length)} (${answer.items.length} items, errors ${answer.errors}): idle ${mib(idle)}, peak ${mib(peak)}, ` +
        `peak over idle ${((peak - idle) / body.length).toFixed(2)}x the body`,
    )

    // --- 100 concurrent searches over a stream holding one 4 MiB transcript
    await svc.stop()
    svc = await spawnBinary()
    headers = { authorization: svc.auth, 'content-type': 'application/json' }
    const index = 'sessions-mem'
    const big = Array.from({ length: 4 * 1024 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i} `.padEnd(1000, 'xyz ') }))
    const docs: string[] = []
    docs.push(JSON.stringify({ index: { _index: index, _id: 'big' } }), JSON.stringify({ user: 'alice', title: 'big', messages: big }))
    for (let i = 0; i < 200; i++)
      docs.push(
        JSON.stringify({ index: { _index: index, _id: `s${i}` } }),
        JSON.stringify({ user: `u${i % 10}`, title: `session ${i}`, messages: [{ role: 'user', content: 'hello' }] }),
      )
    await fetch(`${svc.url}/_bulk?refresh=true`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-ndjson' },
      body: docs.join('\n') + '\n',
    })
    const searches: Array<[string, unknown]> = [
      ['match_all, size 10 (returns the transcript)', { query: { match_all: {} }, size: 10 }],
      ['term user:u1 (scans past the transcript)', { query: { term: { user: 'u1' } }, size: 10 }],
      ['match on title, messages excluded', { query: { match: { title: 'session big' } }, _source: { excludes: ['messages'] }, size: 20 }],
    ]
    for (const [name, q] of searches) {
      await Bun.sleep(300)
      const before = status(svc.pid, 'VmRSS')
      resetPeak(svc.pid)
      const started = performance.now()
      const all = await Promise.all(
        Array.from({ length: 100 }, async () => {
          const res = await fetch(`${svc.url}/${index}/_search`, { method: 'POST', headers, body: JSON.stringify(q) })
          return (await res.arrayBuffer()).byteLength
        }),
      )
      const peak = status(svc.pid, 'VmHWM')
      console.log(
        `100 concurrent searches, ${name}: before ${mib(before)}, peak ${mib(peak)} ` +
          `(answers ${mib(all[0])} each, ${(performance.now() - started).toFixed(0)} ms)`,
      )
    }
  } finally {
    await svc.stop()
  }
}

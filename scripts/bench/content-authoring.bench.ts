// Rule authoring and logtest through HTTP on the in-process server (issue 29, items 1 and 5):
// SigmaHQ's Windows rules (or generated ones when they are absent, scripts/bench/lib/sigma-rules.ts)
// created one by one through `POST /_plugins/_content_manager/rules`, ms per rule in bands of
// 1,000 up to BENCH_AUTHOR_RULES (10,000: the SigmaHQ ones again under new titles), flat when the
// ratio of the last band to the first is near 1; the promotion draft -> test once the first 2,407
// (SigmaHQ's Windows count) exist, outside the bands' clocks;
// then `POST logtest/detection` calls/s on an integration of 100 rules and on one of 1,000 (flat
// in the rule count when their ratio is near 1). Embedded store on disk, Engine mocked.
//
//   BENCH_AUTHOR_RULES=1000 bun scripts/bench/content-authoring.bench.ts
import { startTestServer } from '../../test/helpers/server'
import { loadWindowsRules, type SigmaDoc } from './lib/sigma-rules'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
const PREFIX = '/_plugins/_content_manager'

const generated = (n: number): SigmaDoc[] =>
  Array.from({ length: n }, (_, i) => ({
    title: `generated rule ${i}`,
    level: 'medium',
    logsource: { product: 'windows', category: 'process_creation' },
    detection: {
      selection: { 'Image|endswith': `\\tool${i % 50}.exe`, 'CommandLine|contains|all': [`-x${i} `, 'abc'] },
      condition: 'selection',
    },
  }))

const real = loadWindowsRules()
const all = real ?? generated(2407)
const count = Number(process.env.BENCH_AUTHOR_RULES ?? 10_000)
const BAND = 1000
/** Promoted once this many exist: the 2,407. */
const promoteAt = Math.min(all.length, count)
const rules = Array.from({ length: count }, (_, i) => all[i % all.length])
console.log(`${count} rules (${all.length} ${real ? 'SigmaHQ Windows' : 'generated'} ones, then the same under new titles)`)

const s = await startTestServer({ settings: { 'plugins.content_manager.max_rules': 20_000 } })
try {
  const integration = async (title: string) => {
    const r = await s.request('POST', `${PREFIX}/integrations`, {
      body: { resource: { metadata: { title, author: 'bench' }, category: 'security' } },
    })
    return (r.body as { message: string }).message
  }
  const small = await integration('win-small')
  const large = await integration('win')
  const rest = await integration('win-rest')
  // A rule as an author sends it: the Sigma document, its product the integration's title.
  const resource = (doc: SigmaDoc, title: string, product: string) => ({
    metadata: { title, author: 'bench' },
    level: typeof doc.level === 'string' ? doc.level : 'medium',
    logsource: { ...(doc.logsource ?? {}), product },
    detection: doc.detection,
  })
  const titles = new Set<string>()
  const msPerRule: number[] = []
  let refused = 0
  let firstRefusal = ''
  const promote = async () => {
    const t0 = performance.now()
    const cpu0 = process.cpuUsage()
    const preview = await s.request('GET', `${PREFIX}/promote?space=draft`)
    const answer = await s.request('POST', `${PREFIX}/promote`, { body: { space: 'draft', ...(preview.body as object) } })
    const cpu = process.cpuUsage(cpu0)
    console.log(
      `promote ${promoteAt} rules draft -> test: ${((performance.now() - t0) / 1000).toFixed(2)} s ` +
        `(CPU ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s; ${answer.status}; target <= 5 s)`,
    )
  }
  const create = async (i: number) => {
    let title = i < all.length ? rules[i].title : `${rules[i].title} (copy ${Math.floor(i / all.length)})`
    while (titles.has(title)) title += ' (2)'
    titles.add(title)
    // 100 rules, 1,000 rules, the others: logtest is measured on the first two.
    const [parent, product] = i < 100 ? [small, 'win-small'] : i < 1100 ? [large, 'win'] : [rest, 'win-rest']
    const r = await s.request('POST', `${PREFIX}/rules`, { body: { integration: parent, resource: resource(rules[i], title, product) } })
    if (r.status !== 201) {
      refused++
      firstRefusal ||= JSON.stringify(r.body).slice(0, 200)
    }
  }
  // Bands of 1,000; the promotion runs once the first 2,407 exist, outside the band's clocks.
  for (let from = 0; from < count; from += BAND) {
    const to = Math.min(from + BAND, count)
    let wall = 0
    let cpuMicros = 0
    for (let i = from; i < to;) {
      const stop = from < promoteAt && promoteAt < to && i < promoteAt ? promoteAt : to
      const t0 = performance.now()
      const cpu0 = process.cpuUsage()
      for (; i < stop; i++) await create(i)
      const cpu = process.cpuUsage(cpu0)
      wall += performance.now() - t0
      cpuMicros += cpu.user + cpu.system
      if (i === promoteAt) await promote()
    }
    const n = to - from
    // The process's CPU time too (server and client, one process): a figure that a loaded machine does not inflate.
    const cpuMs = cpuMicros / 1000 / n
    msPerRule.push(cpuMs)
    console.log(`create rules ${from + 1}-${to}: ${(wall / n).toFixed(1)} ms/rule (CPU ${cpuMs.toFixed(1)} ms/rule)`)
  }
  if (refused) console.log(`(${refused} refused, e.g. ${firstRefusal})`)
  const last = msPerRule[msPerRule.length - 1]
  console.log(
    `ratio last band / first band, CPU per rule: ${(last / msPerRule[0]).toFixed(2)} (flat: ~1, target <= 1.05); ` +
      `last band ${last.toFixed(1)} ms/rule (target <= 10)`,
  )

  const event = {
    Image: 'C:\\Windows\\System32\\certutil.exe',
    CommandLine: 'certutil.exe -urlcache -split -f http://example.test/a.exe a.exe',
    ParentImage: 'C:\\Windows\\System32\\cmd.exe',
    EventID: 1,
  }
  const rate = async (id: string) => {
    const call = () => s.request('POST', `${PREFIX}/logtest/detection`, { body: { space: 'test', integration: id, input: event } })
    const first = await call()
    let calls = 0
    const started = performance.now()
    const cpu0 = process.cpuUsage()
    while (performance.now() - started < SECONDS * 1000) {
      await call()
      calls++
    }
    const cpu = process.cpuUsage(cpu0)
    const m = (first.body as { message: { rules_evaluated: number; rules_matched: number } }).message
    return {
      perSecond: calls / ((performance.now() - started) / 1000),
      cpuMicrosPerCall: (cpu.user + cpu.system) / calls,
      evaluated: m.rules_evaluated,
      matched: m.rules_matched,
    }
  }
  const few = await rate(small)
  const many = await rate(large)
  for (const r of [few, many])
    console.log(
      `logtest/detection, ${r.evaluated} rules: ${r.perSecond.toFixed(0)} calls/s ` +
        `(CPU ${r.cpuMicrosPerCall.toFixed(0)} µs/call; ${r.matched} matched; target >= 1,000 calls/s)`,
    )
  console.log(`ratio ${many.evaluated} rules / ${few.evaluated} rules: ${(many.perSecond / few.perSecond).toFixed(2)} (flat: ~1)`)
} finally {
  await s.stop()
}

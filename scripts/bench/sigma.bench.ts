// 1,000 compiled Sigma rules (process, network, file events: contains/startswith/endswith/re/cidr/
// windash/lists) over 10,000 in-memory events of about 1 KB, through the one query evaluator.
// Baselines in the same run: hand-written JavaScript predicates for 20 of those rules, and every
// rule tested on every event (the tree evaluator) against the indexed runtime (`evaluateRules`),
// at RULES and 3 × RULES rules. BENCH_EVENTS=100000 for the issue's figure.
import { compileQuery, DocView } from '../../src/store/query'
import { type CompiledSigmaRule, compileSigmaRule, evaluateRules, evaluateRulesTree, ruleSet } from '../../src/ruleset/sigma'
import { loadWindowsRules } from './lib/sigma-rules'
import { windowsEvents } from './lib/windows-events'
import { nextSeed } from './lib/random'

const RULES = Number(process.env.BENCH_RULES ?? 1000)
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10000)
/** Events the every-rule baselines run over (they are ~50x slower): rates are compared, not times. */
const TREE_EVENTS = Math.min(EVENTS, Number(process.env.BENCH_TREE_EVENTS ?? 10000))

let seed = 42
const rnd = () => (seed = nextSeed(seed)) / 0x80000000
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]
const int = (n: number) => Math.floor(rnd() * n)

const BINS = [
  'cmd',
  'powershell',
  'pwsh',
  'rundll32',
  'regsvr32',
  'mshta',
  'wscript',
  'cscript',
  'certutil',
  'bitsadmin',
  'schtasks',
  'wmic',
  'net',
  'net1',
  'reg',
  'sc',
  'whoami',
  'curl',
  'msiexec',
  'installutil',
  'msbuild',
  'forfiles',
  'hh',
  'odbcconf',
  'cmstp',
  'explorer',
  'svchost',
  'taskhostw',
  'conhost',
  'notepad',
  'chrome',
  'firefox',
  'outlook',
  'winword',
  'excel',
  'python',
  'java',
  'node',
  'git',
  'code',
]
const WORDS = [
  'urlcache',
  'verifyctl',
  'download',
  'encodedcommand',
  'bypass',
  'hidden',
  'noprofile',
  'invoke',
  'iex',
  'webclient',
  'create',
  'delete',
  'query',
  'config',
  'export',
  'import',
  'save',
  'add',
  'user',
  'group',
  'admin',
  'password',
  'shadow',
  'vssadmin',
  'temp',
  'appdata',
  'startup',
  'run',
  'runonce',
  'scrobj',
  'javascript',
  'vbscript',
  'http',
  'https',
  'ftp',
  'transfer',
  'priority',
  'process',
  'call',
  'start',
]
const FLAGS = ['enc', 'e', 'nop', 'w', 'ep', 'f', 'c', 'k', 's', 'q', 'urlcache', 'split', 'i', 'u']
const DIRS = [
  'C:\\Windows\\System32\\',
  'C:\\Windows\\SysWOW64\\',
  'C:\\Program Files\\App\\',
  'C:\\Users\\bob\\AppData\\Local\\Temp\\',
  'C:\\ProgramData\\',
  'C:\\Users\\Public\\',
]
const EXTS = ['.ps1', '.vbs', '.js', '.hta', '.dll', '.exe', '.bat', '.lnk', '.txt', '.docx']
const PORTS = [22, 53, 80, 135, 139, 443, 445, 3389, 4444, 5985, 8080, 8443]
// Like real SigmaHQ rules, most rules name something specific (a tool, a flag, a file name) that
// few events carry: one of RARE fixed-width tokens, of which each event carries one.
const RARE = 100
const rare = (n: number) => `tool${String(n % RARE).padStart(4, '0')}x`

// ---------- events ----------
function event(i: number): Record<string, unknown> {
  const bin = pick(BINS)
  const kind = i % 3
  const base: Record<string, unknown> = {
    '@timestamp': new Date(1_700_000_000_000 + i * 1000).toISOString(),
    EventID: kind === 0 ? 1 : kind === 1 ? 3 : 11,
    Channel: 'Microsoft-Windows-Sysmon/Operational',
    Computer: `ws-${int(500)}.corp.example.com`,
    ProcessGuid: `{${int(1e9).toString(16)}-6a3b-65f0-2a00-000000001c00}`,
    ProcessId: int(65536),
    Image: `${pick(DIRS)}${bin}.exe`,
    User: pick(['CORP\\bob', 'CORP\\alice', 'NT AUTHORITY\\SYSTEM', 'CORP\\admin_joe']),
    host: { name: `ws-${int(500)}`, os: { family: 'windows', version: '10.0.19045' }, ip: [`10.1.${int(256)}.${int(256)}`] },
    agent: { id: `${int(1e6)}`, name: 'wazuh-agent', version: '5.0.0' },
  }
  if (kind === 0) {
    const words = Array.from({ length: 3 + int(4) }, () => (rnd() < 0.4 ? `-${pick(FLAGS)}` : pick(WORDS)))
    Object.assign(base, {
      CommandLine: `"${base.Image}" ${words.join(' ')} ${rare(int(RARE))} ${'x'.repeat(int(120))}`,
      CurrentDirectory: pick(DIRS),
      IntegrityLevel: pick(['Low', 'Medium', 'High', 'System']),
      Hashes: `SHA256=${Array.from({ length: 64 }, () => '0123456789ABCDEF'[int(16)]).join('')},IMPHASH=${int(1e9).toString(16).toUpperCase()}`,
      ParentImage: `${pick(DIRS)}${pick(BINS)}.exe`,
      ParentCommandLine: `${pick(BINS)}.exe ${pick(WORDS)}`,
      OriginalFileName: `${bin.toUpperCase()}.EXE`,
    })
  } else if (kind === 1) {
    Object.assign(base, {
      Protocol: pick(['tcp', 'udp']),
      Initiated: pick(['true', 'false']),
      SourceIp: `10.${int(4)}.${int(256)}.${int(256)}`,
      SourcePort: 49152 + int(16000),
      DestinationIp: rnd() < 0.5 ? `192.168.${int(256)}.${int(256)}` : `${int(224)}.${int(256)}.${int(256)}.${int(256)}`,
      DestinationPort: pick(PORTS),
      DestinationHostname: `${rare(int(RARE))}.${pick(WORDS)}.${pick(['example.com', 'corp.local', 'cdn.net', 'evil.xyz'])}`,
      CommandLine: `${bin}.exe ${pick(WORDS)} ${rare(int(RARE))} ${'y'.repeat(150 + int(200))}`,
    })
  } else {
    Object.assign(base, {
      TargetFilename: `${pick(DIRS)}${pick(WORDS)}\\${pick(WORDS)}${rare(int(RARE))}${pick(EXTS)}`,
      CreationUtcTime: new Date(1_700_000_000_000 + i * 997).toISOString(),
      CommandLine: `${bin}.exe ${pick(WORDS)} ${'z'.repeat(200 + int(200))}`,
    })
  }
  base.message = `Sysmon event ${base.EventID} on ${(base.host as { name: string }).name}: ${base.Image}`
  return base
}

// ---------- rules: YAML from templates, and a hand-written predicate per template ----------
type Ev = Record<string, any>
/** `l` is the event with its top-level strings lower-cased once (built per event, timed). */
interface Generated {
  yaml: string
  hand: (e: Ev, l: Ev) => boolean
}
const q = (s: string) => `'${s.replace(/'/g, "''")}'`
function lowered(e: Ev): Ev {
  const l: Ev = {}
  for (const k in e) if (typeof e[k] === 'string') l[k] = e[k].toLowerCase()
  return l
}
const sigmaPath = (s: string) => s.replace(/\\/g, '\\\\') // a literal backslash before a wildcard must be doubled; we double all

function template(k: number): Generated {
  const header = `title: bench rule ${k}\nid: bench-${k}\nlevel: ${pick(['low', 'medium', 'high'])}\nlogsource: {product: windows}\ndetection:\n`
  switch (k % 6) {
    case 0: {
      const [b1, b2] = [pick(BINS), pick(BINS)]
      const [w1, w2] = [pick(WORDS), rare(int(RARE))]
      const dir = pick(DIRS)
      return {
        yaml: `${header}  selection_img:\n    Image|endswith: [${q(`\\${b1}.exe`)}, ${q(`\\${b2}.exe`)}]\n  selection_cli:\n    CommandLine|contains|all: [${q(w1)}, ${q(w2)}]\n  filter_main:\n    ParentImage|startswith: ${q(sigmaPath(dir))}\n  condition: all of selection_* and not 1 of filter_*\n`,
        hand: (e, l) => {
          const img = l.Image as string | undefined,
            cl = l.CommandLine as string | undefined,
            parent = l.ParentImage as string | undefined
          return (
            img !== undefined &&
            (img.endsWith(`\\${b1}.exe`) || img.endsWith(`\\${b2}.exe`)) &&
            cl !== undefined &&
            cl.includes(w1) &&
            cl.includes(w2) &&
            !(parent !== undefined && parent.startsWith(dir.toLowerCase()))
          )
        },
      }
    }
    case 1: {
      const w = pick(WORDS)
      const b = pick(BINS)
      const re = `${w}\\s+-[a-z]{1,3}\\s`
      const js = new RegExp(re)
      const r = rare(int(RARE))
      return {
        yaml: `${header}  selection:\n    CommandLine|re: ${q(re)}\n    CommandLine|contains: ${q(r)}\n    Image|endswith: ${q(`\\${b}.exe`)}\n  condition: selection\n`,
        hand: (e, l) =>
          typeof e.CommandLine === 'string' &&
          js.test(e.CommandLine) &&
          (l.CommandLine as string).includes(r) &&
          (l.Image as string | undefined)?.endsWith(`\\${b}.exe`) === true,
      }
    }
    case 2: {
      const f = pick(FLAGS)
      const b = pick(BINS)
      const dashes = ['-', '/', '\u2013', '\u2014', '\u2015'].map((d) => ` ${d}${f}`)
      const r = rare(int(RARE))
      return {
        yaml: `${header}  selection:\n    CommandLine|windash|contains: ${q(` -${f}`)}\n    CommandLine|contains: ${q(r)}\n    OriginalFileName: ${q(`${b}.exe`)}\n  condition: selection\n`,
        hand: (e, l) => {
          const cl = l.CommandLine as string | undefined
          return (
            cl !== undefined &&
            dashes.some((d) => cl.includes(d)) &&
            cl.includes(r) &&
            (l.OriginalFileName as string | undefined) === `${b}.exe`
          )
        },
      }
    }
    case 3: {
      const ports = [pick(PORTS), pick(PORTS)]
      const b = pick(BINS)
      const third = int(224)
      const r = rare(int(RARE))
      return {
        yaml: `${header}  selection:\n    DestinationIp|cidr: ['192.168.0.0/16', '${third}.0.0.0/8']\n    DestinationPort: [${ports.join(', ')}]\n    Initiated: 'true'\n    DestinationHostname|startswith: ${q(`${r}.`)}\n  filter:\n    Image|endswith: ${q(`\\${b}.exe`)}\n  condition: selection and not filter\n`,
        hand: (e, l) => {
          const ip = e.DestinationIp
          return (
            typeof ip === 'string' &&
            (ip.startsWith('192.168.') || ip.startsWith(`${third}.`)) &&
            ports.includes(Number(e.DestinationPort)) &&
            (l.Initiated as string | undefined) === 'true' &&
            (l.DestinationHostname as string | undefined)?.startsWith(`${r}.`) === true &&
            !((l.Image as string | undefined)?.endsWith(`\\${b}.exe`) === true)
          )
        },
      }
    }
    case 4: {
      const exts = [pick(EXTS), pick(EXTS)]
      const w = pick(WORDS)
      const r = rare(int(RARE))
      return {
        yaml: `${header}  selection:\n    TargetFilename|endswith: [${exts.map(q).join(', ')}]\n    TargetFilename|contains|all: [${q(`\\${w}`)}, ${q(r)}]\n  filter_sys:\n    Image|startswith: 'C:\\Windows\\'\n  condition: selection and not 1 of filter_*\n`,
        hand: (e, l) => {
          const t = l.TargetFilename as string | undefined
          return (
            t !== undefined &&
            exts.some((x) => t.endsWith(x)) &&
            t.includes(`\\${w}`) &&
            t.includes(r) &&
            !((l.Image as string | undefined)?.startsWith('c:\\windows\\') === true)
          )
        },
      }
    }
    default: {
      const w = pick(WORDS)
      const lvl = pick(['High', 'System'])
      const b = pick(BINS)
      const r = rare(int(RARE))
      return {
        yaml: `${header}  selection:\n    EventID: 1\n    IntegrityLevel: ${lvl}\n    User|contains: 'admin'\n    CommandLine|contains: ${q(r)}\n  selection_cmd:\n    - CommandLine|startswith: ${q(`"${'C:\\\\Users\\\\'}`)}\n    - ParentCommandLine|contains: ${q(w)}\n    - Image|endswith: ${q(`\\${b}.exe`)}\n  condition: selection and 1 of selection_cmd\n`,
        hand: (e, l) =>
          (e.EventID === 1 || e.EventID === '1') &&
          (l.IntegrityLevel as string | undefined) === lvl.toLowerCase() &&
          (l.User as string | undefined)?.includes('admin') === true &&
          (l.CommandLine as string | undefined)?.includes(r) === true &&
          ((l.CommandLine as string | undefined)?.startsWith('"c:\\users\\') === true ||
            (l.ParentCommandLine as string | undefined)?.includes(w) === true ||
            (l.Image as string | undefined)?.endsWith(`\\${b}.exe`) === true),
      }
    }
  }
}

const time = <T>(f: () => T): [T, number] => {
  const t0 = Bun.nanoseconds()
  const r = f()
  return [r, (Bun.nanoseconds() - t0) / 1e6]
}

const events = Array.from({ length: EVENTS }, (_, i) => event(i))
const avgSize = events.reduce((n, e) => n + JSON.stringify(e).length, 0) / events.length
// SIGMA_RULES_DIR: real Sigma rules (every *.yml below it that compiles) instead of generated ones.
const generated = Array.from({ length: RULES }, (_, k) => template(k))
const [rules, compileMs] = time(() => generated.map((g) => compileSigmaRule(g.yaml)))
const [predicates, predicateMs] = time(() => rules.map((r) => compileQuery(r.query)))

console.log(`${RULES} rules, ${EVENTS} events of ${avgSize.toFixed(0)} bytes on average`)
console.log(`compile: Sigma -> tree ${compileMs.toFixed(0)} ms, tree -> predicate ${predicateMs.toFixed(0)} ms`)

// Warm-up (JIT) on a slice, then all rules on every event, one DocView per event (field caches shared by the rules).
for (const e of events.slice(0, 1000)) {
  const d = new DocView(e)
  for (const p of predicates) p(d)
}
const treeEvents = events.slice(0, TREE_EVENTS)
const [matches, allMs] = time(() => {
  let n = 0
  for (const e of treeEvents) {
    const d = new DocView(e)
    for (const p of predicates) if (p(d)) n++
  }
  return n
})
console.log(
  `all ${RULES} rules over ${TREE_EVENTS} events: ${(TREE_EVENTS / (allMs / 1000)).toFixed(0)} events/s (${allMs.toFixed(0)} ms, ${((allMs * 1e6) / (TREE_EVENTS * RULES)).toFixed(0)} ns per rule-event, ${matches} matches)`,
)

const [reported, evalMs] = time(() => {
  let n = 0
  for (const e of treeEvents) n += evaluateRulesTree(e, rules).length
  return n
})
const treeRate = TREE_EVENTS / (evalMs / 1000)
console.log(`tree, every rule (with matched selections): ${treeRate.toFixed(0)} events/s (${reported} matches)`)

// The indexed runtime at RULES and 3 × RULES rules (same generator, more rules).
const more = [...generated, ...Array.from({ length: 2 * RULES }, (_, k) => template(RULES + k))].map((g) => compileSigmaRule(g.yaml))
// Best of BENCH_ROUNDS passes, the two sizes taking turns: on a shared machine a burst of
// someone else's work then slows one pass, not the figure.
const BEST_OF = Number(process.env.BENCH_ROUNDS ?? 3)
const pass = (set: typeof rules) =>
  time(() => {
    let n = 0
    for (const e of events) n += evaluateRules(e, set).length
    return n
  })
const sizes = [rules, more].map((set) => {
  const [, buildMs] = time(() => ruleSet(set))
  for (const e of events.slice(0, 1000)) evaluateRules(e, set)
  return { set, buildMs, n: 0, ms: Infinity }
})
for (let round = 0; round < BEST_OF; round++)
  for (const size of sizes) {
    const [n, ms] = pass(size.set)
    size.n = n
    size.ms = Math.min(size.ms, ms)
  }
for (const { set, buildMs, n, ms } of sizes) {
  const s = ruleSet(set).index.stats
  console.log(
    `indexed, ${set.length} rules: ${(EVENTS / (ms / 1000)).toFixed(0)} events/s (best of ${BEST_OF}: ${ms.toFixed(0)} ms, ${n} matches; index built in ${buildMs.toFixed(0)} ms, ${s.always} always-check rules, ${s.paths} fields)`,
  )
}
const [oneMs, threeMs] = sizes.map((s) => s.ms)
const indexedMatches = treeEvents.reduce((n, e) => n + evaluateRules(e, rules).length, 0)
console.log(
  `indexed/tree speed at ${rules.length} rules: ${(EVENTS / (oneMs / 1000) / treeRate).toFixed(1)}x; time at ${more.length} rules / time at ${rules.length}: ${(threeMs / oneMs).toFixed(2)}`,
)
if (indexedMatches !== reported) {
  console.log(`!!! over the same ${TREE_EVENTS} events the indexed runtime found ${indexedMatches} matches, the tree ${reported}`)
  process.exit(1)
}

// Baseline: 20 sampled rules, hand-written predicates vs compiled trees, same events.
const sample = Array.from({ length: 20 }, (_, i) => Math.floor((i * RULES) / 20) + (i % 6))
const handPreds = sample.map((k) => generated[k].hand)
const treePreds = sample.map((k) => predicates[k])
let disagreements = 0
let sampleMatches = 0
for (const e of events) {
  const d = new DocView(e)
  const l = lowered(e)
  for (let i = 0; i < sample.length; i++) {
    const a = handPreds[i](e, l)
    if (a) sampleMatches++
    if (a !== treePreds[i](d)) disagreements++
  }
}
const ROUNDS = 5
const [, handMs] = time(() => {
  let n = 0
  for (let r = 0; r < ROUNDS; r++)
    for (const e of events) {
      const l = lowered(e)
      for (const p of handPreds) if (p(e, l)) n++
    }
  return n
})
const [, treeMs] = time(() => {
  let n = 0
  for (let r = 0; r < ROUNDS; r++)
    for (const e of events) {
      const d = new DocView(e)
      for (const p of treePreds) if (p(d)) n++
    }
  return n
})
const rate = (ms: number) => ((EVENTS * ROUNDS) / (ms / 1000)).toFixed(0)
console.log(`sample of 20 rules (${sampleMatches} matches, ${disagreements} disagreements hand vs tree):`)
console.log(`  hand-written JS  ${rate(handMs)} events/s`)
console.log(`  compiled tree    ${rate(treeMs)} events/s`)
console.log(`ratio compiled/hand-written: ${(treeMs / handMs).toFixed(2)}x the time (${(handMs / treeMs).toFixed(2)} of the speed)`)
if (disagreements > 0) process.exit(1)

// SigmaHQ's Windows rules (when present) at 100, 1,000 and all, over Windows-like events whose
// values are partly taken from the rules (lib/windows-events.ts): the indexed runtime's events/s
// on one core, against the tree (every rule on every event) over the same events in the same run.
const windows = loadWindowsRules()
if (windows) {
  const compiled: CompiledSigmaRule[] = []
  for (const doc of windows) {
    try {
      compiled.push(compileSigmaRule(doc))
    } catch {
      // unsupported modifiers: not part of the figure
    }
  }
  const realEvents = windowsEvents(windows, EVENTS)
  const realTree = realEvents.slice(0, Math.min(TREE_EVENTS, 2000))
  console.log(`\nSigmaHQ Windows rules: ${compiled.length} of ${windows.length} compile; ${EVENTS} Windows-like events`)
  for (const n of [100, 1000, compiled.length]) {
    const set = compiled.slice(0, n)
    const [, buildMs] = time(() => ruleSet(set))
    let best = Infinity
    let matches = 0
    for (let round = 0; round < BEST_OF; round++) {
      // What a detector run calls: the matches, their selections left unread (logtest reads them: sigma-logtest.bench).
      const indexed = ruleSet(set)
      const [m, ms] = time(() => realEvents.reduce((k, e) => k + indexed.evaluate(e).length, 0))
      matches = m
      best = Math.min(best, ms)
    }
    const [treeMatches, treeMs] = time(() => realTree.reduce((k, e) => k + evaluateRulesTree(e, set).length, 0))
    const indexedOnTree = realTree.reduce((k, e) => k + evaluateRules(e, set).length, 0)
    const rate = EVENTS / (best / 1000)
    const stats = ruleSet(set).index.stats
    console.log(
      `  ${String(n).padStart(5)} rules: indexed ${rate.toFixed(0)} events/s (${matches} matches, ${((matches / EVENTS) * 100).toFixed(1)} per 100 events; ` +
        `${stats.always} always-check rules; index built in ${buildMs.toFixed(0)} ms), tree ${(realTree.length / (treeMs / 1000)).toFixed(0)} events/s, ` +
        `ratio indexed/tree ${(rate / (realTree.length / (treeMs / 1000))).toFixed(1)}x`,
    )
    if (treeMatches !== indexedOnTree) {
      console.log(`!!! over ${realTree.length} events the indexed runtime found ${indexedOnTree} matches, the tree ${treeMatches}`)
      process.exit(1)
    }
  }
}

// `rules/evaluate` (the call behind logtest detection) with 1,000 rule bodies loaded, as logtest
// sends them (one JSON text per rule, every call): calls/s through the service (compile cache,
// indexed rule set, matched conditions), against a baseline in the same run that does what each
// call did before the compile cache (compile every body, test every rule).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compileSigmaRule, evaluateRulesTree } from '../../src/ruleset/sigma'
import { openEmbeddedStore } from '../../src/store/embedded'
import { benchRuleset } from './lib/security-events'
import { nextSeed } from './lib/random'

const RULES = Number(process.env.BENCH_RULES ?? 1000)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
const EVENTS = 'svc-events-v5-security'

let seed = 11
const rnd = () => (seed = nextSeed(seed)) / 0x80000000
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]
const BINS = ['cmd', 'powershell', 'rundll32', 'regsvr32', 'mshta', 'certutil', 'bitsadmin', 'schtasks', 'wmic', 'net', 'reg', 'sc']
const WORDS = [
  'urlcache',
  'download',
  'encodedcommand',
  'bypass',
  'hidden',
  'invoke',
  'iex',
  'webclient',
  'delete',
  'shadow',
  'add',
  'user',
]

// Rules in the shape of SigmaHQ process-creation rules, over the schema's process fields.
function rule(n: number) {
  const kinds = [
    {
      sel: {
        'process.executable|endswith': [`\\${pick(BINS)}.exe`, `\\${pick(BINS)}.exe`],
        'process.command_line|contains|all': [pick(WORDS), `t${n}`],
      },
      condition: 'sel',
    },
    { sel: { 'process.name': `${pick(BINS)}.exe` }, filter: { 'process.parent.name': 'explorer.exe' }, condition: 'sel and not filter' },
    { sel: { 'process.command_line|re': `${pick(WORDS)}\\s+-[a-z]{1,3}\\s+r${n}` }, condition: 'sel' },
    { sel1: { 'process.command_line|contains': `-${pick(WORDS)} ${n}` }, sel2: { 'user.name|startswith': 'adm' }, condition: '1 of sel*' },
  ]
  return JSON.stringify({
    id: `rule-${n}`,
    metadata: { title: `rule ${n}` },
    level: 'medium',
    logsource: { product: 'windows' },
    detection: kinds[n % kinds.length],
  })
}

const root = mkdtempSync(join(tmpdir(), 'svc-logtest-bench-'))
const store = openEmbeddedStore(join(root, 'store.db'))
try {
  const { settings, ruleset } = await benchRuleset(root, store, [EVENTS], { id: 'int-win', title: 'windows' })
  const bodies = Array.from({ length: RULES }, (_, n) => rule(n))
  const event = {
    process: {
      executable: 'C:\\Windows\\System32\\cmd.exe',
      name: 'cmd.exe',
      command_line: 'cmd.exe /c certutil -urlcache -f http://x t17 download',
      parent: { name: 'winword.exe' },
    },
    user: { name: 'bob' },
  }
  const request = {
    normalizedEvent: JSON.stringify(event),
    rulesBodies: bodies,
    integrationId: 'int-win',
    logType: 'windows',
    sourceIndices: [EVENTS],
  }

  const rate = async (f: () => Promise<unknown>) => {
    await f()
    let calls = 0
    const t0 = performance.now()
    while (performance.now() - t0 < SECONDS * 1000) {
      await f()
      calls++
    }
    return calls / ((performance.now() - t0) / 1000)
  }
  const first = await ruleset.evaluate(request)
  const service = await rate(() => ruleset.evaluate(request))
  // Baseline: each call compiles every body and tests every rule (no cache, no index).
  const mapping = await ruleset.logTypes.fieldMapping('windows', await settings.snapshot())
  let baselineMatches = 0
  const baseline = await rate(async () => {
    const rules = bodies.map((b) => compileSigmaRule(b, { fieldMapping: mapping }))
    baselineMatches = evaluateRulesTree(event, rules).length
  })
  console.log(`rules/evaluate with ${RULES} rule bodies: ${service.toFixed(0)} calls/s (${first.rules_matched} matches)`)
  console.log(`baseline (compile every body, test every rule): ${baseline.toFixed(1)} calls/s (${baselineMatches} matches)`)
  console.log(`ratio: ${(service / baseline).toFixed(0)}x`)
  if (first.rules_matched !== baselineMatches) {
    console.log('!!! the service and the baseline disagree')
    process.exit(1)
  }
} finally {
  await store.close()
  rmSync(root, { recursive: true, force: true })
}

/**
 * The indexed rule runtime against the tree evaluator: every rule of the corpus × every event of
 * the corpus, under every mapping the corpus uses (and none), plus randomized events built from
 * the rules' own literals (random case, affixes, arrays, nesting, dotted keys, numbers, nulls).
 * Both answers must be identical: same rules, same order, same matched selections.
 */
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FieldTypes } from '../../../src/store/query'
import {
  type CompiledSigmaRule,
  type CompileOptions,
  compileSigmaRule,
  evaluateRules,
  evaluateRulesTree,
  ruleSet,
} from '../../../src/ruleset/sigma'
import { loadWindowsRules } from '../../../scripts/bench/lib/sigma-rules'
import { schemaEvent, WINDOWS_FIELDS, windowsEvents } from '../../../scripts/bench/lib/windows-events'
import { nextSeed } from '../../../scripts/bench/lib/random'

interface CorpusCase {
  name: string
  rule: string
  options?: CompileOptions
  fieldTypes?: Record<string, string>
  events?: Array<{ event: Record<string, unknown> }>
}

const dir = join(import.meta.dir, 'corpus')
const withTitle = (rule: string) => (/^title:/m.test(rule) ? rule : `title: corpus case\n${rule}`)
const cases = readdirSync(dir)
  .filter((f) => f.endsWith('.yml'))
  .sort()
  .flatMap((f) => Bun.YAML.parse(readFileSync(join(dir, f), 'utf8')) as CorpusCase[])
  .filter((c) => c.events?.length)

const rules: CompiledSigmaRule[] = []
for (const c of cases) {
  try {
    rules.push({ ...compileSigmaRule(withTitle(c.rule), c.options), id: `r${rules.length}` })
  } catch {
    // Cases that expect a compile error are not rules.
  }
}
const corpusEvents = cases.flatMap((c) => c.events!.map((e) => e.event))

// ---- randomized events from the rules' literals ----
let seed = 1234567
const rnd = () => (seed = nextSeed(seed)) / 0x80000000
const int = (n: number) => Math.floor(rnd() * n)
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]

const fields = new Set<string>()
const literals = new Set<string>(['', ' ', 'x', 'ſ', 'K', 'Σ', 'İ', '\u2013', '1', '0', 'true'])
const collect = (node: unknown, key?: string) => {
  if (Array.isArray(node)) node.forEach((n) => collect(n))
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'field' && typeof v === 'string') fields.add(v)
      else if (key && ['term', 'wildcard', 'regexp', 'range', 'prefix', 'terms'].includes(key) && k !== '_name') fields.add(k)
      if ((k === 'value' || k === 'pattern') && (typeof v === 'string' || typeof v === 'number')) {
        const s = String(v)
        literals.add(s)
        for (const part of s.split(/[*?\\]|\.\*|\[.*?\]/)) if (part) literals.add(part)
      }
      collect(v, k)
    }
  }
}
for (const r of rules) collect(r.query)
const fieldList = [...fields]
const literalList = [...literals]

const recase = (s: string) => [...s].map((c) => (rnd() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join('')
function randomValue(): unknown {
  const r = rnd()
  if (r < 0.05) return null
  if (r < 0.12) return int(3000) - 100
  if (r < 0.15) return rnd() < 0.5
  if (r < 0.2) return [randomValue(), randomValue()]
  const parts = Array.from({ length: 1 + int(3) }, () => (rnd() < 0.3 ? recase(pick(literalList)) : pick(literalList)))
  const glue = rnd() < 0.5 ? '' : pick([' ', '\\', '-', '.', 'a'])
  return (rnd() < 0.3 ? pick(['x', ' ', 'C:\\']) : '') + parts.join(glue) + (rnd() < 0.3 ? pick(['x', ' ', '.exe']) : '')
}
function place(event: Record<string, unknown>, path: string, value: unknown) {
  const parts = path.split('.')
  const shape = int(3)
  if (shape === 0 || parts.length === 1) event[path] = value
  else if (shape === 1) {
    let o = event
    for (const p of parts.slice(0, -1))
      o = (o[p] = typeof o[p] === 'object' && o[p] !== null && !Array.isArray(o[p]) ? o[p] : {}) as Record<string, unknown>
    o[parts[parts.length - 1]] = value
  } else event[parts[0]] = [{ [parts.slice(1).join('.')]: value }]
}
// Mappings: none (dynamic typing), the corpus's own, and every field as keyword / text / mixed types,
// with keyword sub-fields limited by ignore_above.
const TYPES = ['keyword', 'text', 'long', 'ip', 'boolean', 'date', 'wildcard']
const typed = (f: (field: string, i: number) => string) => Object.fromEntries(fieldList.map((k, i) => [k, f(k, i)]))
const withSubfields = Object.fromEntries(
  fieldList.flatMap((k) => [
    [k, { type: 'text' }],
    [`${k}.keyword`, { type: 'keyword', path: k, ignore_above: 12 }],
  ]),
)
const mappings: Array<Record<string, unknown> | undefined> = [
  undefined,
  ...cases.flatMap((c) => (c.fieldTypes ? [c.fieldTypes] : [])),
  typed(() => 'keyword'),
  typed(() => 'text'),
  typed((_, i) => TYPES[i % TYPES.length]),
  withSubfields,
]

const randomEvents = Array.from({ length: 3000 }, () => {
  const e: Record<string, unknown> = {}
  for (let k = 1 + int(5); k > 0; k--) place(e, pick(fieldList), randomValue())
  return e
})

describe('indexed runtime = tree evaluator', () => {
  test('the corpus yields enough rules and events to mean something', () => {
    expect(rules.length).toBeGreaterThan(100)
    expect(corpusEvents.length).toBeGreaterThan(200)
    expect(fieldList.length).toBeGreaterThan(20)
  })

  for (const [i, mapping] of mappings.entries()) {
    test(`every rule × every corpus and randomized event, mapping #${i}`, () => {
      let matched = 0
      for (const event of [...corpusEvents, ...randomEvents]) {
        const indexed = evaluateRules(event, rules, mapping as FieldTypes)
        const tree = evaluateRulesTree(event, rules, mapping as FieldTypes)
        if (JSON.stringify(indexed) !== JSON.stringify(tree)) expect({ event, indexed }).toEqual({ event, indexed: tree })
        matched += tree.length
      }
      // The comparison is not vacuous: plenty of (rule, event) pairs match.
      expect(matched).toBeGreaterThan(10)
    })
  }

  test('the index filters: most rules are not candidates for a typical event', () => {
    const set = ruleSet(rules)
    expect(set.index.stats.always).toBeLessThan(rules.length / 4)
  })
})

// SigmaHQ's Windows rules and the benchmark's events (scripts/bench/lib), when present on the machine.
const windows = loadWindowsRules()
describe.skipIf(!windows)('indexed runtime = tree evaluator on SigmaHQ Windows rules', () => {
  test('every rule × every bench event', () => {
    const real: CompiledSigmaRule[] = []
    for (const doc of windows!) {
      try {
        real.push(compileSigmaRule(doc))
      } catch {
        // a modifier the compiler refuses: not a rule of the set
      }
    }
    let matched = 0
    for (const event of windowsEvents(windows!, Number(process.env.SIGMA_DIFF_EVENTS ?? 400))) {
      const indexed = evaluateRules(event, real)
      const tree = evaluateRulesTree(event, real)
      if (JSON.stringify(indexed) !== JSON.stringify(tree)) expect({ event, indexed }).toEqual({ event, indexed: tree })
      matched += tree.length
    }
    expect(real.length).toBeGreaterThan(2000)
    expect(matched).toBeGreaterThan(10)
  }, 300_000)

  test('every rule × every bench event under a Windows log type (the detector run: mapped fields, typed)', () => {
    // The schema's types for the mapped fields, as the detector bench's event stream has them.
    const fieldTypes = new Map(
      Object.values(WINDOWS_FIELDS).map((p) => [
        p,
        p.endsWith('.ip') ? { type: 'ip' } : p.endsWith('.port') ? { type: 'long' } : { type: 'keyword', ignore_above: 1024 },
      ]),
    )
    const real: CompiledSigmaRule[] = []
    for (const doc of windows!) {
      try {
        real.push(compileSigmaRule(doc, { fieldMapping: WINDOWS_FIELDS }))
      } catch {
        // a modifier the compiler refuses: not a rule of the set
      }
    }
    let matched = 0
    for (const raw of windowsEvents(windows!, Number(process.env.SIGMA_DIFF_EVENTS ?? 400))) {
      const event = schemaEvent(raw)
      const indexed = evaluateRules(event, real, fieldTypes)
      const tree = evaluateRulesTree(event, real, fieldTypes)
      if (JSON.stringify(indexed) !== JSON.stringify(tree)) expect({ event, indexed }).toEqual({ event, indexed: tree })
      matched += tree.length
    }
    expect(matched).toBeGreaterThan(10)
  }, 300_000)
})

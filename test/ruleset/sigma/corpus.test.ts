/**
 * The Sigma corpus: each case states a rule, events and the expected result, written from the
 * specification's semantics (not from this compiler's output). Every case runs
 * YAML -> compileSigmaRule -> evaluateRules (THE query evaluator of src/store/query), and the
 * detector's indexed rule set (ruleSet) must agree with it.
 */
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type CompileOptions, compileSigmaRule, evaluateRules, ruleSet, SigmaInvalid, SigmaUnsupported } from '../../../src/ruleset/sigma'

interface CorpusEvent {
  event: Record<string, unknown>
  match: boolean
  /** Expected matched search identifiers (only checked when given). */
  selections?: string[]
  /**
   * A known disagreement of the evaluator with Sigma semantics (reported, not hidden): the case
   * runs as `test.failing`, so it turns red the day the evaluator is fixed and the note can go.
   */
  deviation?: string
}
interface CorpusCase {
  name: string
  rule: string
  options?: CompileOptions
  fieldTypes?: Record<string, string>
  events?: CorpusEvent[]
  error?: { type: 'SigmaInvalid' | 'SigmaUnsupported'; construct: string }
}

const dir = join(import.meta.dir, 'corpus')
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.yml'))
  .sort()

// A rule without a title gets one, so cases only show what matters.
const withTitle = (rule: string) => (/^title:/m.test(rule) ? rule : `title: corpus case\n${rule}`)

let total = 0
for (const file of files) {
  const cases = Bun.YAML.parse(readFileSync(join(dir, file), 'utf8')) as CorpusCase[]
  describe(file, () => {
    for (const c of cases) {
      if (c.error) {
        total++
        test(`${c.name} -> ${c.error.type}`, () => {
          const type = c.error!.type === 'SigmaInvalid' ? SigmaInvalid : SigmaUnsupported
          let thrown: unknown
          try {
            compileSigmaRule(withTitle(c.rule), c.options)
          } catch (e) {
            thrown = e
          }
          expect(thrown).toBeInstanceOf(type)
          expect((thrown as SigmaInvalid).construct).toContain(c.error!.construct)
        })
        continue
      }
      if (!c.events?.length) throw new Error(`${file}: '${c.name}' has neither events nor error`)
      c.events.forEach((e, i) => {
        total++
        const run = e.deviation ? test.failing : test
        run(`${c.name} [${i}] ${e.match ? 'matches' : 'does not match'} ${JSON.stringify(e.event)}`, () => {
          const rule = compileSigmaRule(withTitle(c.rule), c.options)
          const matches = evaluateRules(e.event, [rule], c.fieldTypes)
          expect(matches.length === 1).toBe(e.match)
          expect(ruleSet([rule], c.fieldTypes).evaluate(e.event).length === 1).toBe(e.match)
          if (e.selections) expect(matches[0]?.selections.sort()).toEqual([...e.selections].sort())
        })
      })
    }
  })
}

test('the corpus is not empty', () => {
  expect(files.length).toBeGreaterThan(5)
  expect(total).toBeGreaterThan(200)
})

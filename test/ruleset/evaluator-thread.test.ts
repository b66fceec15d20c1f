/**
 * The detection evaluator thread against the in-thread rule set: every rule of the Sigma corpus ×
 * every corpus event (as stored texts), under no mapping and under a mapping that refuses a rule,
 * give the same (event, rule) pairs; a thread that is stopped or fails leaves runs evaluating here.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { EvaluatorThread, inThread } from '../../src/ruleset/detection/evaluator'
import type { TextBatch } from '../../src/ruleset/detection/evaluator-protocol'
import { type CompiledSigmaRule, compileSigmaRule, ruleSet } from '../../src/ruleset/sigma'
import { createLogger } from '../../src/http/log'

const dir = join(import.meta.dir, 'sigma/corpus')
const cases = readdirSync(dir)
  .filter((f) => f.endsWith('.yml'))
  .sort()
  .flatMap(
    (f) =>
      Bun.YAML.parse(readFileSync(join(dir, f), 'utf8')) as Array<{ rule: string; options?: object; events?: Array<{ event: object }> }>,
  )
const rules: CompiledSigmaRule[] = []
for (const c of cases)
  try {
    const text = /^title:/m.test(c.rule) ? c.rule : `title: corpus case\n${c.rule}`
    rules.push({ ...compileSigmaRule(text, c.options), id: `r${rules.length}` })
  } catch {
    // Cases that expect a compile error are not rules.
  }
const texts = cases.flatMap((c) => (c.events ?? []).map((e) => JSON.stringify(e.event)))
/** Texts as the store hands them out: UTF-8 back to back. */
function batchOf(list: string[]): TextBatch {
  const parts = list.map((t) => new TextEncoder().encode(t))
  const sources = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  const ends = new Uint32Array(parts.length)
  let at = 0
  parts.forEach((p, i) => {
    sources.set(p, at)
    ends[i] = at += p.length
  })
  return { sources, ends }
}

/** The reference: each event parsed here and evaluated by the indexed set, as (event, rule) pairs. */
function expected(fieldTypes?: Record<string, string>): number[] {
  const set = ruleSet(rules, fieldTypes)
  return texts.flatMap((t, at) => set.evaluate(JSON.parse(t)).flatMap((m) => [at, m.at]))
}

const lines: string[] = []
const log = createLogger({ level: 'info', write: (l) => lines.push(l) })
const thread = new EvaluatorThread(log)
afterAll(() => thread.stop())

describe('detection evaluator thread', () => {
  test('the corpus gives the same matches on the thread as here', async () => {
    expect(rules.length).toBeGreaterThan(100)
    const want = expected()
    expect(want.length).toBeGreaterThan(100)
    const prepared = await thread.prepare(rules, undefined)
    expect([...(await prepared.evaluate(batchOf(texts)))]).toEqual(want)
    expect(lines.some((l) => l.includes('detection evaluator thread started'))).toBe(true)
    // A second batch reuses the set the thread indexed.
    expect([...(await prepared.evaluate(batchOf(texts.slice(0, 10))))]).toEqual(pairsBelow(want, 10))
  })

  test('a mapping that refuses a rule: refused by name on the thread, and it never matches', async () => {
    const types = { 'event.created': 'date', '@timestamp': 'date' }
    const dated = compileSigmaRule(
      'title: dated\nlogsource: {product: x}\ndetection:\n  sel:\n    event.created: not-a-date\n  condition: sel\n',
    )
    const set = [...rules, { ...dated, id: 'dated' }]
    const local = await inThread(set, types)
    const prepared = await thread.prepare(set, types)
    expect(prepared.refused.map((r) => r.rule.id)).toEqual(local.refused.map((r) => r.rule.id))
    expect(prepared.refused.map((r) => r.rule.id)).toContain('dated')
    expect([...(await prepared.evaluate(batchOf(texts)))]).toEqual([...(await local.evaluate(batchOf(texts)))])
  })

  test('parsed sources (a platform store hit) and a stopped thread are evaluated here, with the same answer', async () => {
    const want = expected()
    const prepared = await thread.prepare(rules, undefined)
    expect([...(await prepared.evaluate(texts.map((t) => JSON.parse(t))))]).toEqual(want)
    const other = new EvaluatorThread(log)
    other.stop()
    const fallback = await other.prepare(rules, undefined)
    expect([...(await fallback.evaluate(batchOf(texts)))]).toEqual(want)
  })
})

/** The pairs of events before `n`. */
function pairsBelow(pairs: number[], n: number): number[] {
  const out: number[] = []
  for (let i = 0; i < pairs.length; i += 2) if (pairs[i] < n) out.push(pairs[i], pairs[i + 1])
  return out
}

test('a thread that never answers is given up after its deadline: the run evaluates here, same answer', async () => {
  const silent = URL.createObjectURL(new Blob(['self.onmessage = () => {}']))
  const local: string[] = []
  const stuck = new EvaluatorThread(createLogger({ level: 'info', write: (l) => local.push(l) }), { entry: silent, answerMillis: 200 })
  const prepared = await stuck.prepare(rules, undefined)
  expect([...(await prepared.evaluate(batchOf(texts)))]).toEqual(expected())
  expect(local.some((l) => l.includes('detection evaluator thread failed') && l.includes('no answer within 200 ms'))).toBe(true)
})

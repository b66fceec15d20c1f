/**
 * The detection evaluator thread against the in-thread rule set: every rule of the Sigma corpus ×
 * every corpus event (stored in a store file the thread reads itself), under no mapping and under
 * a mapping that refuses a rule, give the same (event, rule) pairs and the same matched events; a
 * store without a file, a stopped thread and a thread that stops answering leave the scan here.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EvaluatorThread } from '../../src/ruleset/detection/evaluator'
import { SCAN_BATCH } from '../../src/ruleset/detection/evaluator-protocol'
import { CompileCache } from '../../src/ruleset/sigma/compile-cache'
import { type Scanner, scanHere } from '../../src/ruleset/detection/scan'
import { type CompiledSigmaRule, compileSigmaRule, ruleSet } from '../../src/ruleset/sigma'
import { createLogger } from '../../src/http/log'
import { openEmbeddedStore } from '../../src/store/embedded'
import type { Store } from '../../src/store/port'

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
/** The reference: each event evaluated here by the indexed set, as (event, rule) pairs. */
function expected(fieldTypes?: Record<string, string>): number[] {
  const set = ruleSet(rules, fieldTypes)
  return texts.flatMap((t, at) => set.evaluate(JSON.parse(t)).flatMap((m) => [at, m.at]))
}

/** Every batch of a scan from the start, as (event, rule) pairs over the whole index; matched events checked. */
async function scanAll(scanner: Scanner, from = -1): Promise<number[]> {
  const pairs: number[] = []
  let after = from
  let offset = 0
  try {
    for (;;) {
      const page = await scanner.next(after)
      for (let i = 0; i < page.matches.length; i += 2) {
        pairs.push(offset + page.matches[i], page.matches[i + 1])
        expect(page.hit(page.matches[i])._source).toEqual(JSON.parse(texts[offset + page.matches[i]]))
      }
      if (page.size > 0) expect(page.hit(page.size - 1)._seq_no).toBe(page.last)
      offset += page.size
      after = page.last
      if (!page.full) break
    }
  } finally {
    scanner.close()
  }
  return pairs
}

const storeDir = mkdtempSync(join(tmpdir(), 'evaluator-thread-'))
const fileStore = openEmbeddedStore(join(storeDir, 'store.db'))
const memoryStore = openEmbeddedStore(':memory:')
const INDEX = 'ev'
async function fill(store: Store) {
  // The corpus gives one field different types in different events: nothing is mapped, every event is kept.
  await store.createIndex({ index: INDEX, body: { mappings: { dynamic: false } } })
  for (let at = 0; at < texts.length; at += 500) {
    const r = await store.bulk({
      body: texts.slice(at, at + 500).flatMap((t, i) => [{ index: { _index: INDEX, _id: `e${at + i}` } }, JSON.parse(t)]),
    })
    expect(r.errors).toBe(false)
  }
}
beforeAll(async () => {
  await fill(fileStore)
  await fill(memoryStore)
})

const lines: string[] = []
const log = createLogger({ level: 'info', write: (l) => lines.push(l) })
const thread = new EvaluatorThread(log)
afterAll(async () => {
  thread.stop()
  await fileStore.close()
  await memoryStore.close()
  rmSync(storeDir, { recursive: true, force: true })
})

describe('detection evaluator thread', () => {
  test('the corpus gives the same matches and matched events read and evaluated on the thread as here', async () => {
    expect(rules.length).toBeGreaterThan(100)
    const want = expected()
    expect(want.length).toBeGreaterThan(100)
    expect(await scanAll(await thread.scanner({ store: fileStore, index: INDEX, rules, fieldTypes: undefined }))).toEqual(want)
    expect(lines.some((l) => l.includes('detection evaluator thread started'))).toBe(true)
    // A later scan reuses the set the thread indexed, and starts from a checkpoint.
    const later = await thread.scanner({ store: fileStore, index: INDEX, rules, fieldTypes: undefined })
    const first = await later.next(-1)
    expect(first.size).toBe(texts.length)
    later.close()
  })

  test('a mapping that refuses a rule: refused by name on the thread, and it never matches', async () => {
    const types = { 'event.created': 'date', '@timestamp': 'date' }
    const dated = compileSigmaRule(
      'title: dated\nlogsource: {product: x}\ndetection:\n  sel:\n    event.created: not-a-date\n  condition: sel\n',
    )
    const set = [...rules, { ...dated, id: 'dated' }]
    const local = await scanHere({ store: fileStore, index: INDEX, rules: set, fieldTypes: types })
    const scanner = await thread.scanner({ store: fileStore, index: INDEX, rules: set, fieldTypes: types })
    expect(scanner.refused.map((r) => r.rule.id)).toEqual(local.refused.map((r) => r.rule.id))
    expect(scanner.refused.map((r) => r.rule.id)).toContain('dated')
    expect(await scanAll(scanner)).toEqual(await scanAll(local))
  })

  test('batches read ahead on the thread answer as reads made when asked; a closed scan leaves nothing stale', async () => {
    const many = 'ev-many'
    await fileStore.createIndex({ index: many, body: { mappings: { dynamic: false } } })
    const count = 2 * SCAN_BATCH + 10
    const body = Array.from({ length: count }, (_, i) => [
      { index: { _index: many, _id: `d${i}` } },
      { event: { action: i % 7 === 0 ? 'hit' : 'miss' } },
    ]).flat()
    expect((await fileStore.bulk({ body, refresh: true })).errors).toBe(false)
    // Through the compile cache, as a detector's rules are: their set has the same name in every scan.
    const hit = [
      new CompileCache().compile(
        'title: hit\nlogsource: {product: x}\ndetection:\n  sel:\n    event.action: hit\n  condition: sel\n',
        {},
        'hit',
      ),
    ]
    /** Batch sizes and matched ids of a whole scan. */
    const scanned = async (scanner: Scanner) => {
      const out = { sizes: [] as number[], matched: [] as string[] }
      try {
        for (let after = -1; ;) {
          const page = await scanner.next(after)
          out.sizes.push(page.size)
          for (let i = 0; i < page.matches.length; i += 2) out.matched.push(page.hit(page.matches[i])._id)
          after = page.last
          if (!page.full) return out
        }
      } finally {
        scanner.close()
      }
    }
    const here = await scanned(await scanHere({ store: fileStore, index: many, rules: hit, fieldTypes: undefined }))
    expect(here.sizes).toEqual([SCAN_BATCH, SCAN_BATCH, 10])
    expect(here.matched).toHaveLength(Math.ceil(count / 7))
    expect(await scanned(await thread.scanner({ store: fileStore, index: many, rules: hit, fieldTypes: undefined }))).toEqual(here)

    // A run that stops after its first batch: the thread has read the second one ahead (the next
    // run's first message is answered after that read).
    const stopped = await thread.scanner({ store: fileStore, index: many, rules: hit, fieldTypes: undefined })
    const first = await stopped.next(-1)
    const next = await thread.scanner({ store: fileStore, index: many, rules: hit, fieldTypes: undefined })
    stopped.close()
    // Before the next run reads on, part of what that second batch held is deleted.
    const gone = Array.from({ length: 100 }, (_, i) => ({ delete: { _index: many, _id: `d${SCAN_BATCH + i}` } }))
    expect((await fileStore.bulk({ body: gone, refresh: true })).errors).toBe(false)
    const page = await next.next(first.last)
    next.close()
    expect(page.size).toBe(count - SCAN_BATCH - 100)
    expect(page.full).toBe(false)
  })

  test("a source index's grown mapping replaces its rules' set on the thread; another index keeps its own", async () => {
    const cache = new CompileCache()
    const hit = [
      cache.compile('title: slot\nlogsource: {product: x}\ndetection:\n  sel:\n    event.action: hit\n  condition: sel\n', {}, 'slot'),
    ]
    const other = 'ev-other'
    await fileStore.createIndex({ index: other, body: { mappings: { dynamic: false } } })
    const own = new EvaluatorThread(log)
    try {
      const scan = async (index: string, fieldTypes?: Record<string, string>) =>
        (await own.scanner({ store: fileStore, index, rules: hit, fieldTypes })).close()
      await scan(INDEX)
      await scan(other)
      // The mapping of INDEX grows: its set is indexed again, and the one under the old mapping dropped.
      await scan(INDEX, { 'event.action': 'keyword' })
      expect(own.sets).toEqual({ sent: 3, reused: 0 })
      await scan(other)
      await scan(INDEX, { 'event.action': 'keyword' })
      expect(own.sets).toEqual({ sent: 3, reused: 2 })
      await scan(INDEX)
      expect(own.sets).toEqual({ sent: 4, reused: 2 })
    } finally {
      own.stop()
    }
  })

  test('a store without a file and a stopped thread scan here, with the same answer', async () => {
    const want = expected()
    expect(await scanAll(await thread.scanner({ store: memoryStore, index: INDEX, rules, fieldTypes: undefined }))).toEqual(want)
    const other = new EvaluatorThread(log)
    other.stop()
    expect(await scanAll(await other.scanner({ store: fileStore, index: INDEX, rules, fieldTypes: undefined }))).toEqual(want)
  })
})

test('a thread that never answers is given up after its deadline: the scan goes on here, same answer', async () => {
  const silent = URL.createObjectURL(new Blob(['self.onmessage = () => {}']))
  const local: string[] = []
  const stuck = new EvaluatorThread(createLogger({ level: 'info', write: (l) => local.push(l) }), { entry: silent, answerMillis: 200 })
  expect(await scanAll(await stuck.scanner({ store: fileStore, index: INDEX, rules, fieldTypes: undefined }))).toEqual(expected())
  expect(local.some((l) => l.includes('detection evaluator thread failed') && l.includes('no answer within 200 ms'))).toBe(true)
})

test('a thread that stops answering mid-scan is given up: the batch it held is read again here', async () => {
  // Answers the rule set, then never a batch.
  const half = URL.createObjectURL(
    new Blob(["self.onmessage = (e) => { if (e.data.kind === 'set') postMessage({ id: e.data.id, refused: [] }) }"]),
  )
  const local: string[] = []
  const stuck = new EvaluatorThread(createLogger({ level: 'info', write: (l) => local.push(l) }), { entry: half, answerMillis: 200 })
  expect(await scanAll(await stuck.scanner({ store: fileStore, index: INDEX, rules, fieldTypes: undefined }))).toEqual(expected())
  expect(local.some((l) => l.includes('no answer within 200 ms'))).toBe(true)
})

/**
 * Compile once: compiled rules keyed by the content they come from (rule text, compile options,
 * the id they are given), shared by detectors, `rules/evaluate` and logtest. The same content
 * always yields the SAME object, so the evaluator's per-rule predicate caches and the indexed
 * rule sets built from them are reused too. A changed rule or log-type mapping is another key;
 * `forget(id)` drops an updated or deleted rule's entries at once instead of waiting for eviction.
 * Compile errors are cached as well, so an invalid rule is not recompiled on every call.
 */
import { type CompiledSigmaRule, type CompileOptions, compileSigmaRule } from './compile'

/** Entries kept (least recently used evicted first). */
export const COMPILE_CACHE_MAX_ENTRIES = 20_000

interface Entry {
  /** Insertion counter when last (re)inserted: recency, kept cheaply. */
  seq: number
  text: string
  options: string
  id?: string
  result: CompiledSigmaRule | { error: unknown }
}

/** A stable text (and its hash) for options made of plain data; undefined when they hold a function (not cacheable). */
const optionTexts = new WeakMap<object, { text: string; hash: string }>()
function optionsText(o: CompileOptions): { text: string; hash: string } | undefined {
  if (typeof o.fieldMapping === 'function') return undefined
  let t = optionTexts.get(o)
  if (t === undefined) {
    const text = JSON.stringify([mappingText(o.fieldMapping), o.keywordFields ?? null, o.placeholders ?? null, o.fieldTypes ?? null])
    optionTexts.set(o, (t = { text, hash: Bun.hash(text).toString(36) }))
  }
  return t
}
const mappingTexts = new WeakMap<object, string>()
function mappingText(m: Record<string, string> | undefined): string | null {
  if (!m) return null
  let t = mappingTexts.get(m)
  if (t === undefined) mappingTexts.set(m, (t = JSON.stringify(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))))
  return t
}

const keys = new WeakMap<CompiledSigmaRule, string>()

/** The content key of a rule compiled through the cache (undefined for others). */
export const contentKey = (rule: CompiledSigmaRule): string | undefined => keys.get(rule)

export class CompileCache {
  private readonly entries = new Map<string, Entry>()
  private readonly byId = new Map<string, Set<string>>()
  hits = 0
  misses = 0
  private seq = 0

  constructor(private readonly max = COMPILE_CACHE_MAX_ENTRIES) {}

  get size(): number {
    return this.entries.size
  }

  /** `compileSigmaRule(source, options)` with `id` (when given) as the rule's id, from the cache when seen before. */
  compile(source: string | object, options: CompileOptions = {}, id?: string): CompiledSigmaRule {
    const opts = optionsText(options)
    const text = typeof source === 'string' ? source : JSON.stringify(source)
    if (opts === undefined || text === undefined) return withId(compileSigmaRule(source, options), id)
    // A 32-bit hash and the length pick the entry; the full text is compared on a hit.
    const key = `${Bun.hash.xxHash32(text)}:${text.length}:${opts.hash}:${id ?? ''}`
    const hit = this.entries.get(key)
    if (hit && hit.text === text && hit.options === opts.text && hit.id === id) {
      this.hits++
      // Most recently used last (eviction takes the first), re-inserted only once it has aged
      // past half the cache: an approximate LRU without a map update on every hit.
      if (this.seq - hit.seq > this.max / 2) {
        hit.seq = ++this.seq
        this.entries.delete(key)
        this.entries.set(key, hit)
      }
      if ('error' in hit.result) throw hit.result.error
      return hit.result
    }
    this.misses++
    let result: Entry['result']
    try {
      result = withId(compileSigmaRule(source, options), id)
      keys.set(result, key)
    } catch (error) {
      result = { error }
    }
    this.remember(key, { seq: ++this.seq, text, options: opts.text, id, result })
    if ('error' in result) throw result.error
    return result
  }

  /** Drops every entry compiled under `id` (the rule was updated or deleted). */
  forget(id: string): void {
    for (const key of this.byId.get(id) ?? []) this.entries.delete(key)
    this.byId.delete(id)
  }

  clear(): void {
    this.entries.clear()
    this.byId.clear()
  }

  private remember(key: string, e: Entry): void {
    this.entries.delete(key)
    this.entries.set(key, e)
    if (e.id !== undefined) {
      const set = this.byId.get(e.id) ?? new Set()
      set.add(key)
      this.byId.set(e.id, set)
    }
    while (this.entries.size > this.max) {
      const [oldest, old] = this.entries.entries().next().value as [string, Entry]
      this.entries.delete(oldest)
      if (old.id !== undefined) {
        const set = this.byId.get(old.id)
        set?.delete(oldest)
        if (set?.size === 0) this.byId.delete(old.id)
      }
    }
  }
}

const withId = (c: CompiledSigmaRule, id: string | undefined) => (id === undefined || c.id === id ? c : { ...c, id })

/** The node's one cache (rules are content-addressed, so sharing it across callers is safe). */
export const compileCache = new CompileCache()

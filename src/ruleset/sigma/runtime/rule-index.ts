/**
 * A rule set indexed by what its rules require of an event (see requirements.ts): per field, the
 * clauses satisfied by the field's presence, and one Aho-Corasick automaton over the values,
 * prefixes, suffixes and substrings clauses need (the anchored ones between VALUE_START and
 * VALUE_END, so one pass over a value answers them all, folding as it goes). A rule is a candidate once all its
 * clauses are satisfied (counted per event). An event is then tested only against the
 * candidates, plus the rules without a requirement — with THE query
 * evaluator, so the answer is the tree evaluator's by construction; the index only skips rules
 * that cannot match.
 */
import type { DocView } from '../../../store/query'
import { AhoCorasick, VALUE_END, VALUE_START } from '../../../store/query/aho-corasick'
import { toNumber } from '../../../store/query/compile'
import { type Atom, atomKey, atomScore, type Clause, neverHolds, type Requirement } from './requirements'
import type { Veto } from './vetoes'

/**
 * Clauses indexed per rule: a rule is a candidate once all of them are met. How many rules share
 * a value says little of how many events carry it (`EventID: 1`, named by one rule of a channel's
 * set, is on every Sysmon process event), and meeting a clause costs one counter step, so a rule
 * is indexed by several rather than by its least shared one alone.
 */
const INDEXED_CLAUSES = 3

interface TrieNode {
  children: Map<string, TrieNode>
  /** The indexed path ending here, if any. */
  entry?: PathEntry
}

/** The node a dotted key leads to from `at`, if every part of it is on an indexed path. */
function descend(at: TrieNode, key: string): TrieNode | undefined {
  let node: TrieNode | undefined = at
  for (const part of key.split('.')) {
    node = node.children.get(part)
    if (node === undefined) return undefined
  }
  return node
}

/**
 * Clause ids are gathered in arrays while the index is built, then laid out in typed arrays (one
 * per field for the patterns' clauses, offsets apart): an event's hits read contiguous memory.
 */
interface PathEntry {
  present: Int32Array
  /** Clauses by the canonical text of a number the field holds (a numeric field's values, parsed). */
  numbers: Map<string, Int32Array>
  /**
   * Length of the longest whole value among the patterns (Infinity once some pattern is a part
   * of a value): a value over twice as long cannot fold into one, and is not scanned.
   */
  longest: number
  /** The texts clauses need (see `patternOf`), while the index is built (then the matcher's), and the index of each. */
  patterns: string[]
  patternIndex: Map<string, number>
  /** Clauses per pattern of `matcher`, while the index is built (then `clauseIds`). */
  patternClauses: number[][]
  /** The clauses of pattern p: clauseIds[clauseStart[p]..clauseStart[p + 1]). */
  clauseStart: Int32Array
  clauseIds: Int32Array
  /** The epoch of the event in which each pattern was last reported: a repeat (every space of a command line) is skipped. */
  patternStamp: Uint32Array
  /** Rules each pattern vetoes (vetoes.ts), while the index is built (then `vetoRules`). */
  patternVetoes: Array<Array<{ rule: number; limit: number }>>
  /** The rules pattern p vetoes: vetoRules[vetoStart[p]..vetoStart[p + 1]), each for values at most vetoLimit long. */
  vetoStart: Int32Array
  vetoRules: Int32Array
  vetoLimit: Float64Array
  matcher?: AhoCorasick
  /** The patterns found in short values of the path (MEMO_LENGTH), by value; dropped when values seldom recur. */
  memo?: { values: Map<string, Int32Array>; lookups: number; hits: number }
}

/** The automaton's text for a value atom: equals, prefix and suffix are anchored at the value's ends. */
function patternOf(a: Exclude<Atom, { kind: 'present' | 'number' }> | Veto): string {
  switch (a.kind) {
    case 'equals':
      return `${VALUE_START}${a.value}${VALUE_END}`
    case 'prefix':
      return `${VALUE_START}${a.value}`
    case 'suffix':
      return `${a.value}${VALUE_END}`
    default:
      return a.value
  }
}

export interface IndexStats {
  rules: number
  always: number
  never: number
  paths: number
}

export class RuleIndex {
  private readonly paths = new Map<string, PathEntry>()
  /** The indexed paths as a trie of their dotted parts: where the document walk may lead. */
  private readonly root: TrieNode = { children: new Map() }
  private readonly always: number[] = []
  /** The rule of each clause, and how many clauses each rule has. */
  private readonly ruleOf: Int32Array
  private readonly need: Uint8Array
  private readonly count: Uint8Array
  private readonly ruleStamp: Uint32Array
  private readonly clauseStamp: Uint32Array
  /** The epoch of the event that last met one of each rule's vetoes. */
  private readonly vetoStamp: Uint32Array
  private epoch = 0
  readonly stats: IndexStats

  /**
   * One requirement per rule (requirements.ts), in rule order, and what proves each rule cannot
   * match (vetoes.ts): a candidate one of whose vetoes an event meets is not one.
   */
  constructor(requirements: readonly Requirement[], vetoes: ReadonlyArray<readonly Veto[]> = []) {
    const n = requirements.length
    this.need = new Uint8Array(n)
    this.count = new Uint8Array(n)
    this.ruleStamp = new Uint32Array(n)
    let never = 0
    const ruleOf: number[] = []
    const lists = new Map<PathEntry, { present: number[]; numbers: Map<string, number[]> }>()
    const listsOf = (e: PathEntry) => lists.get(e) ?? lists.set(e, { present: [], numbers: new Map() }).get(e)!
    // How many rules share each atom: a value many rules name (`event.outcome: failure`) is
    // probably common in events too, so the clauses indexed per rule are its least shared ones.
    const shared = new Map<string, number>()
    for (const clauses of requirements)
      for (const clause of clauses) for (const a of clause) shared.set(atomKey(a), (shared.get(atomKey(a)) ?? 0) + 1)
    // A short substring (` `, `:`) is as common in events as a value many rules share.
    const popularity = (c: Clause) => c.reduce((n, a) => n + (shared.get(atomKey(a)) ?? 0) * atomScore(a), 0)
    // Rules that wait for nothing selective: a candidate on most events that have their fields.
    const loose = new Set<number>()
    requirements.forEach((all, rule) => {
      if (all.length === 0) return void (this.always.push(rule), loose.add(rule))
      if (neverHolds(all)) return void never++
      const ranked = all.map((c) => [popularity(c), c] as const).sort((a, b) => a[0] - b[0])
      if (ranked[0][1].some(weak)) loose.add(rule)
      // Beside a selective clause, one met by nearly every event (presence, a one-character
      // substring) would filter nothing and be met at every space of a command line.
      const clauses = ranked.slice(0, INDEXED_CLAUSES).flatMap(([, c], i) => (i === 0 || !c.some(weak) ? [c] : []))
      this.need[rule] = clauses.length
      for (const clause of clauses) {
        const id = ruleOf.push(rule) - 1
        for (const atom of clause) {
          const e = this.entry(atom.path)
          if (atom.kind === 'present') listsOf(e).present.push(id)
          else if (atom.kind === 'number') push(listsOf(e).numbers, atom.value, id)
          else e.patternClauses[patternAt(e, atom)].push(id)
        }
      }
    })
    // A new pattern is scanned for and met on many events (`C:\Windows\System32\`): worth it for
    // the loose rules; another rule's veto is kept when its pattern is scanned for anyway.
    vetoes.forEach((atoms, rule) => {
      if (neverHolds(requirements[rule])) return
      for (const atom of atoms) {
        if (!loose.has(rule) && !this.paths.get(atom.path)?.patternIndex.has(patternOf(atom))) continue
        const e = this.entry(atom.path)
        e.patternVetoes[patternAt(e, atom)].push({ rule, limit: atom.limit ?? Infinity })
      }
    })
    this.clauseStamp = new Uint32Array(ruleOf.length)
    // The patterns are the automaton's now; two paths with the same ones (a keyword list read in
    // `message` and `event.original`) share one.
    const matchers = new Map<string, AhoCorasick>()
    for (const e of this.paths.values()) {
      if (e.patterns.length === 0) continue
      const key = e.patterns.join('\u0000')
      e.matcher = matchers.get(key) ?? new AhoCorasick(e.patterns)
      matchers.set(key, e.matcher)
      layOut(e)
    }
    for (const [e, l] of lists) {
      e.present = Int32Array.from(l.present)
      for (const [k, ids] of l.numbers) e.numbers.set(k, Int32Array.from(ids))
    }
    this.ruleOf = Int32Array.from(ruleOf)
    this.vetoStamp = new Uint32Array(n)
    this.stats = { rules: n, always: this.always.length, never, paths: this.paths.size }
  }

  /**
   * The state of the candidates() call under way: the methods below are its steps, so an event
   * allocates nothing but its answer (closures made per call were a few dozen objects an event).
   */
  private epochNow = 0
  private out: number[] = []
  private scanning?: PathEntry
  /** The value being scanned, and whether it may veto (-1: not known yet; see `veto`). */
  private value = ''
  private valueVetoes = -1
  private vetoed = false
  /** The patterns a short value holds, as scanned before it is remembered (see MEMO_LENGTH). */
  private readonly found: number[] = []
  private readonly collect = (p: number) => void this.found.push(p)
  private readonly onPattern = (p: number) => {
    const e = this.scanning!
    if (e.patternStamp[p] === this.epochNow) return
    e.patternStamp[p] = this.epochNow
    this.addAll(e.clauseIds, e.clauseStart[p], e.clauseStart[p + 1])
    if (e.vetoStart.length > 0 && e.vetoStart[p] !== e.vetoStart[p + 1]) this.veto(e, p)
  }

  /** The rules pattern p vetoes, met by the value being scanned. */
  private veto(e: PathEntry, p: number): void {
    const k = this.value
    // A value holding the scan's anchors itself may meet an anchored pattern where its leaf does not match.
    if (this.valueVetoes === -1) this.valueVetoes = k.includes(VALUE_START) || k.includes(VALUE_END) ? 0 : 1
    if (this.valueVetoes === 0) return
    for (let i = e.vetoStart[p], end = e.vetoStart[p + 1]; i < end; i++) {
      if (k.length > e.vetoLimit[i]) continue
      this.vetoStamp[e.vetoRules[i]] = this.epochNow
      this.vetoed = true
    }
  }

  /** Indices of the rules that may match `doc`, ascending. */
  candidates(doc: DocView): number[] {
    const epoch = (this.epochNow = this.nextEpoch())
    this.vetoed = false
    let out = (this.out = this.always.slice())
    // One walk over the document visits each value once under its full dotted path — which is
    // what FieldPath.collect reads for that path (nested objects, dotted keys and arrays alike);
    // subtrees that lead to no indexed path are skipped.
    this.walk(doc.source, this.root)
    this.out = []
    if (this.vetoed) out = out.filter((rule) => this.vetoStamp[rule] !== epoch)
    return out.sort(ascending)
  }

  private addAll(clauses: Int32Array, from = 0, to = clauses.length): void {
    const { clauseStamp, ruleStamp, ruleOf, count, need, epochNow: epoch } = this
    for (let i = from; i < to; i++) {
      const c = clauses[i]
      if (clauseStamp[c] === epoch) continue
      clauseStamp[c] = epoch
      const rule = ruleOf[c]
      if (ruleStamp[rule] !== epoch) {
        ruleStamp[rule] = epoch
        count[rule] = 0
      }
      if (++count[rule] === need[rule]) this.out.push(rule)
    }
  }

  private leaf(e: PathEntry, v: unknown): void {
    this.addAll(e.present)
    if (e.numbers.size > 0) {
      // As the evaluator compares a numeric field: the value parsed (a number, or decimal text).
      const n = toNumber(v)
      const hit = n === undefined ? undefined : e.numbers.get(String(n))
      if (hit) this.addAll(hit)
    }
    if (!e.matcher) return
    const k = keywordOf(v)
    // A code point folds to one code point (at most two UTF-16 units either way): a value over
    // twice the longest whole value cannot fold into one.
    if (k === undefined || k.length > 2 * e.longest) return
    this.scanning = e
    this.value = k
    this.valueVetoes = -1
    const memo = e.memo
    if (k.length > MEMO_LENGTH || memo === undefined) return e.matcher.scanFolding(k, this.onPattern, true)
    let found = memo.values.get(k)
    if (found === undefined) {
      this.found.length = 0
      e.matcher.scanFolding(k, this.collect, true)
      found = this.found.length === 0 ? NO_IDS : Int32Array.from(this.found)
      if (memo.values.size >= MEMO_ENTRIES) memo.values.clear()
      memo.values.set(k, found)
    } else memo.hits++
    // A path whose values seldom recur (file names, addresses) keeps scanning them: remembering
    // each was a lookup, a copy and garbage more per value.
    if (++memo.lookups === MEMO_ENTRIES * 4) {
      if (memo.hits < memo.lookups / 2) e.memo = undefined
      else memo.hits = memo.lookups = 0
    }
    for (let i = 0; i < found.length; i++) this.onPattern(found[i])
  }

  private walk(obj: Record<string, unknown>, at: TrieNode): void {
    for (const key in obj) {
      let node = at.children.get(key)
      // A dotted key (`"a.b": ...`) stands for the same path as nested objects.
      if (node === undefined && key.includes('.')) node = descend(at, key)
      if (node !== undefined) this.visit(obj[key], node)
    }
  }

  private visit(v: unknown, node: TrieNode): void {
    if (v === null || v === undefined) return
    if (Array.isArray(v)) for (const el of v) this.visit(el, node)
    else if (typeof v === 'object') {
      if (node.entry && hasLeaf(v)) this.leaf(node.entry, v)
      this.walk(v as Record<string, unknown>, node)
    } else if (node.entry) this.leaf(node.entry, v)
  }

  private nextEpoch(): number {
    if (++this.epoch === 0xffffffff) {
      this.clauseStamp.fill(0)
      this.ruleStamp.fill(0)
      this.vetoStamp.fill(0)
      for (const e of this.paths.values()) e.patternStamp.fill(0)
      this.epoch = 1
    }
    return this.epoch
  }

  private entry(path: string): PathEntry {
    let e = this.paths.get(path)
    if (!e) {
      e = {
        present: NO_IDS,
        numbers: new Map(),
        longest: -1,
        patterns: [],
        patternIndex: new Map(),
        patternClauses: [],
        clauseStart: NO_IDS,
        clauseIds: NO_IDS,
        patternStamp: NO_STAMPS,
        patternVetoes: [],
        vetoStart: NO_IDS,
        vetoRules: NO_IDS,
        vetoLimit: NO_LIMITS,
        memo: { values: new Map(), lookups: 0, hits: 0 },
      }
      this.paths.set(path, e)
      let node = this.root
      for (const part of path.split('.')) {
        let next = node.children.get(part)
        if (!next) node.children.set(part, (next = { children: new Map() }))
        node = next
      }
      node.entry = e
    }
    return e
  }
}

const ascending = (a: number, b: number) => a - b
const NO_STAMPS = new Uint32Array(0)
const NO_IDS = new Int32Array(0)
const NO_LIMITS = new Float64Array(0)

/** The index of an atom's pattern among its path's (added when new). */
function patternAt(e: PathEntry, atom: Exclude<Atom, { kind: 'present' | 'number' }> | Veto): number {
  e.longest = Math.max(e.longest, atom.kind === 'equals' ? atom.value.length : Infinity)
  const text = patternOf(atom)
  let at = e.patternIndex.get(text)
  if (at === undefined) {
    e.patternIndex.set(text, (at = e.patterns.push(text) - 1))
    e.patternClauses.push([])
    e.patternVetoes.push([])
  }
  return at
}

/** A path's build-time lists (its automaton made) laid out in typed arrays, and dropped. */
function layOut(e: PathEntry): void {
  e.patternStamp = new Uint32Array(e.patterns.length)
  e.patterns = []
  e.patternIndex = new Map()
  e.clauseStart = new Int32Array(e.patternClauses.length + 1)
  e.patternClauses.forEach((ids, p) => (e.clauseStart[p + 1] = e.clauseStart[p] + ids.length))
  e.clauseIds = Int32Array.from(e.patternClauses.flat())
  e.patternClauses = []
  if (e.patternVetoes.some((v) => v.length > 0)) {
    e.vetoStart = new Int32Array(e.patternVetoes.length + 1)
    e.patternVetoes.forEach((v, p) => (e.vetoStart[p + 1] = e.vetoStart[p] + v.length))
    const all = e.patternVetoes.flat()
    e.vetoRules = Int32Array.from(all, (v) => v.rule)
    e.vetoLimit = Float64Array.from(all, (v) => v.limit)
  }
  e.patternVetoes = []
}

/**
 * Short values recur from event to event (an image path, a user, an integrity level, a product
 * name): the patterns each holds are remembered per path, up to MEMO_ENTRIES values (then
 * forgotten at once), so a recurring value costs a lookup instead of a scan. Command lines and
 * hash lists, longer, are scanned each time.
 */
const MEMO_LENGTH = 64
const MEMO_ENTRIES = 1024

/** Met by nearly every event that has the field. */
const weak = (a: Atom) => a.kind === 'present' || (a.kind === 'contains' && a.value.length < 3)

function push<K>(m: Map<K, number[]>, k: K, v: number): void {
  const l = m.get(k)
  if (l) l.push(v)
  else m.set(k, [v])
}

/** The keyword form of a scalar (what a keyword field indexes); objects have none. */
const keywordOf = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' ? String(v) : undefined

/** An object value makes its path present when it holds any leaf (as `exists` sees it). */
function hasLeaf(o: unknown): boolean {
  if (Array.isArray(o)) return o.some(hasLeaf)
  if (typeof o === 'object' && o !== null) return Object.values(o).some(hasLeaf)
  return o !== null && o !== undefined
}

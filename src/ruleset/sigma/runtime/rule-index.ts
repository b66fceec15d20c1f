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
import { VALUE_END, VALUE_START } from '../../../store/query/aho-corasick'
import { type SubstringMatcher, substringMatcher } from '../../../store/query/gram-matcher'
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
  /** Whether pattern p is some rule's veto (vetoes.ts), and the epoch and value it was first met with in that event. */
  vetoes: Uint8Array
  vetoMet: Uint32Array
  vetoMetValue: string[]
  matcher?: SubstringMatcher
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
  /**
   * Each rule's vetoes: its path, pattern and value length limit, at ruleVetoStart[rule]..ruleVetoStart[rule + 1].
   * Read for the candidates only: a system path met by most events is the veto of hundreds of rules.
   */
  private readonly ruleVetoStart: Int32Array
  private readonly vetoPath: PathEntry[] = []
  private readonly vetoPattern: Int32Array
  private readonly vetoLimit: Float64Array
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
    const ruleVetoes: Array<{ e: PathEntry; p: number; limit: number }> = []
    this.ruleVetoStart = new Int32Array(n + 1)
    for (let rule = 0; rule < n; rule++) {
      if (!neverHolds(requirements[rule]))
        for (const atom of vetoes[rule] ?? []) {
          if (!loose.has(rule) && !this.paths.get(atom.path)?.patternIndex.has(patternOf(atom))) continue
          const e = this.entry(atom.path)
          ruleVetoes.push({ e, p: patternAt(e, atom), limit: atom.limit ?? Infinity })
        }
      this.ruleVetoStart[rule + 1] = ruleVetoes.length
    }
    this.vetoPath = ruleVetoes.map((v) => v.e)
    this.vetoPattern = Int32Array.from(ruleVetoes, (v) => v.p)
    this.vetoLimit = Float64Array.from(ruleVetoes, (v) => v.limit)
    this.clauseStamp = new Uint32Array(ruleOf.length)
    // The patterns are the automaton's now; two paths with the same ones (a keyword list read in
    // `message` and `event.original`) share one.
    const matchers = new Map<string, SubstringMatcher>()
    for (const e of this.paths.values()) {
      if (e.patterns.length === 0) continue
      const key = e.patterns.join('\u0000')
      e.matcher = matchers.get(key) ?? substringMatcher(e.patterns)
      matchers.set(key, e.matcher)
      layOut(e)
    }
    for (const [e, l] of lists) {
      e.present = Int32Array.from(l.present)
      for (const [k, ids] of l.numbers) e.numbers.set(k, Int32Array.from(ids))
    }
    this.ruleOf = Int32Array.from(ruleOf)
    for (const { e, p } of ruleVetoes) {
      if (e.vetoes.length === 0) [e.vetoes, e.vetoMet] = [new Uint8Array(e.patternStamp.length), new Uint32Array(e.patternStamp.length)]
      e.vetoes[p] = 1
    }
    this.stats = { rules: n, always: this.always.length, never, paths: this.paths.size }
  }

  /**
   * The state of the candidates() call under way: the methods below are its steps, so an event
   * allocates nothing but its answer (closures made per call were a few dozen objects an event).
   */
  private epochNow = 0
  private out: number[] = []
  private scanning?: PathEntry
  /** The value being scanned (a veto pattern met notes it, for isVetoed). */
  private value = ''
  private vetoed = false
  /** The patterns a short value holds, as scanned before it is remembered (see MEMO_LENGTH). */
  private readonly found: number[] = []
  private readonly collect = (p: number) => void this.found.push(p)
  private readonly onPattern = (p: number) => {
    const e = this.scanning!
    if (e.patternStamp[p] === this.epochNow) return
    e.patternStamp[p] = this.epochNow
    this.addAll(e.clauseIds, e.clauseStart[p], e.clauseStart[p + 1])
    // Noted only: what the value proves is read for the candidates (isVetoed), few next to the rules a system path vetoes.
    if (e.vetoes.length > 0 && e.vetoes[p] === 1) {
      e.vetoMet[p] = this.epochNow
      e.vetoMetValue[p] = this.value
      this.vetoed = true
    }
  }

  /** Whether one of `rule`'s vetoes was met in this event. */
  private isVetoed(rule: number): boolean {
    for (let i = this.ruleVetoStart[rule], end = this.ruleVetoStart[rule + 1]; i < end; i++) {
      const e = this.vetoPath[i]
      const p = this.vetoPattern[i]
      if (e.vetoMet[p] !== this.epochNow) continue
      const v = e.vetoMetValue[p]
      // A value holding the scan's anchors itself may meet an anchored pattern where its leaf does not match.
      if (v.length <= this.vetoLimit[i] && !ANCHOR.test(v)) return true
    }
    return false
  }

  /** Indices of the rules that may match `doc`, ascending. */
  candidates(doc: DocView): number[] {
    this.epochNow = this.nextEpoch()
    this.vetoed = false
    let out = (this.out = this.always.length === 0 ? [] : this.always.slice())
    // One walk over the document visits each value once under its full dotted path — which is
    // what FieldPath.collect reads for that path (nested objects, dotted keys and arrays alike);
    // subtrees that lead to no indexed path are skipped.
    this.walk(doc.source, this.root)
    this.out = []
    if (this.vetoed) out = out.filter((rule) => !this.isVetoed(rule))
    // Most events have no candidate or one: no sort to call.
    return out.length > 1 ? out.sort(ascending) : out
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
      for (const e of this.paths.values()) {
        e.patternStamp.fill(0)
        e.vetoMet.fill(0)
      }
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
        vetoes: NO_FLAGS,
        vetoMet: NO_STAMPS,
        vetoMetValue: [],
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
const NO_FLAGS = new Uint8Array(0)
const ANCHOR = new RegExp(`[${VALUE_START}${VALUE_END}]`)

/** The index of an atom's pattern among its path's (added when new). */
function patternAt(e: PathEntry, atom: Exclude<Atom, { kind: 'present' | 'number' }> | Veto): number {
  e.longest = Math.max(e.longest, atom.kind === 'equals' ? atom.value.length : Infinity)
  const text = patternOf(atom)
  let at = e.patternIndex.get(text)
  if (at === undefined) {
    e.patternIndex.set(text, (at = e.patterns.push(text) - 1))
    e.patternClauses.push([])
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

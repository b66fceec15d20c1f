/**
 * A rule set indexed by what its rules require of an event (see requirements.ts): per field, the
 * clauses satisfied by the field's presence, a map from exact folded values to clauses, and one
 * Aho-Corasick automaton over the substrings clauses need. A rule is a candidate once all its
 * clauses are satisfied (counted per event). An event is then tested only against the
 * candidates, plus the rules without a requirement — with THE query
 * evaluator, so the answer is the tree evaluator's by construction; the index only skips rules
 * that cannot match.
 */
import { type DocView, fold } from '../../../store/query'
import { AhoCorasick } from './aho-corasick'
import type { Requirement } from './requirements'

interface PathEntry {
  present: number[]
  equals: Map<string, number[]>
  patterns: string[]
  /** Clauses per pattern of `matcher`. */
  patternClauses: number[][]
  matcher?: AhoCorasick
}

export interface IndexStats {
  rules: number
  always: number
  never: number
  paths: number
}

export class RuleIndex {
  private readonly paths = new Map<string, PathEntry>()
  /** Every indexed path and each of its dotted prefixes: where the document walk may lead. */
  private readonly prefixes = new Set<string>()
  private readonly always: number[] = []
  /** The rule of each clause, and how many clauses each rule has. */
  private readonly ruleOf: number[] = []
  private readonly need: Uint8Array
  private readonly count: Uint8Array
  private readonly ruleStamp: Uint32Array
  private readonly clauseStamp: Uint32Array
  private epoch = 0
  readonly stats: IndexStats

  /** One requirement per rule (requirements.ts), in rule order. */
  constructor(requirements: readonly Requirement[]) {
    const n = requirements.length
    this.need = new Uint8Array(n)
    this.count = new Uint8Array(n)
    this.ruleStamp = new Uint32Array(n)
    let never = 0
    const patternIds = new Map<PathEntry, Map<string, number>>()
    requirements.forEach((clauses, rule) => {
      if (clauses.length === 0) return void this.always.push(rule)
      if (clauses.some((c) => c.length === 0)) return void never++
      this.need[rule] = clauses.length
      for (const clause of clauses) {
        const id = this.ruleOf.push(rule) - 1
        for (const atom of clause) {
          const e = this.entry(atom.path)
          if (atom.kind === 'present') e.present.push(id)
          else if (atom.kind === 'equals') push(e.equals, atom.value, id)
          else {
            let ids = patternIds.get(e)
            if (!ids) patternIds.set(e, (ids = new Map()))
            let at = ids.get(atom.value)
            if (at === undefined) {
              ids.set(atom.value, (at = e.patterns.push(atom.value) - 1))
              e.patternClauses.push([])
            }
            e.patternClauses[at].push(id)
          }
        }
      }
    })
    this.clauseStamp = new Uint32Array(this.ruleOf.length)
    for (const e of this.paths.values()) if (e.patterns.length > 0) e.matcher = new AhoCorasick(e.patterns)
    this.stats = { rules: n, always: this.always.length, never, paths: this.paths.size }
  }

  /** Indices of the rules that may match `doc`, ascending. */
  candidates(doc: DocView): number[] {
    const epoch = this.nextEpoch()
    const { clauseStamp, ruleStamp, ruleOf, count, need } = this
    const out: number[] = [...this.always]
    const addAll = (clauses: number[]) => {
      for (let i = 0; i < clauses.length; i++) {
        const c = clauses[i]
        if (clauseStamp[c] === epoch) continue
        clauseStamp[c] = epoch
        const rule = ruleOf[c]
        if (ruleStamp[rule] !== epoch) {
          ruleStamp[rule] = epoch
          count[rule] = 0
        }
        if (++count[rule] === need[rule]) out.push(rule)
      }
    }
    const scan = (e: PathEntry) => (p: number) => addAll(e.patternClauses[p])
    // One walk over the document visits each value once under its full dotted path — which is
    // what FieldPath.collect reads for that path (nested objects, dotted keys and arrays alike);
    // subtrees that lead to no indexed path are skipped.
    const leaf = (path: string, v: unknown) => {
      const e = this.paths.get(path)
      if (e === undefined) return
      addAll(e.present)
      const k = keywordOf(v)
      if (k === undefined || (e.equals.size === 0 && !e.matcher)) return
      const f = fold(k)
      const hit = e.equals.get(f)
      if (hit) addAll(hit)
      e.matcher?.scan(f, scan(e))
    }
    const walk = (node: Record<string, unknown>, prefix: string) => {
      for (const key in node) {
        const path = prefix === '' ? key : `${prefix}.${key}`
        if (!this.prefixes.has(path)) continue
        visit(node[key], path)
      }
    }
    const visit = (v: unknown, path: string) => {
      if (v === null || v === undefined) return
      if (Array.isArray(v)) for (const el of v) visit(el, path)
      else if (typeof v === 'object') {
        if (this.paths.has(path) && hasLeaf(v)) leaf(path, v)
        walk(v as Record<string, unknown>, path)
      } else leaf(path, v)
    }
    walk(doc.source, '')
    return out.sort((a, b) => a - b)
  }

  private nextEpoch(): number {
    if (++this.epoch === 0xffffffff) {
      this.clauseStamp.fill(0)
      this.ruleStamp.fill(0)
      this.epoch = 1
    }
    return this.epoch
  }

  private entry(path: string): PathEntry {
    let e = this.paths.get(path)
    if (!e) {
      e = { present: [], equals: new Map(), patterns: [], patternClauses: [] }
      this.paths.set(path, e)
      const parts = path.split('.')
      for (let j = 1; j <= parts.length; j++) this.prefixes.add(parts.slice(0, j).join('.'))
    }
    return e
  }
}

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

/**
 * A rule set indexed by what its rules require of an event (see requirements.ts): per field, the
 * rules that need the field present, a map from exact folded values to rules, and one
 * Aho-Corasick automaton over the substrings rules need. An event is then tested only against
 * the rules whose requirement it meets, plus the rules without a requirement — with THE query
 * evaluator, so the answer is the tree evaluator's by construction; the index only skips rules
 * that cannot match.
 */
import { DocView, type FieldPath, fieldPath } from '../../../store/query'
import { AhoCorasick } from './aho-corasick'
import { type Requirement, requirementOf, type Types } from './requirements'

interface PathEntry {
  fp: FieldPath
  present: number[]
  equals: Map<string, number[]>
  patterns: string[]
  /** Rules per pattern of `matcher`. */
  patternRules: number[][]
  matcher?: AhoCorasick
  seen: number
}

export interface IndexStats {
  rules: number
  always: number
  never: number
  paths: number
}

export class RuleIndex {
  private readonly paths = new Map<string, PathEntry>()
  /** Top-level document key -> the indexed paths that can start with it (`a.b.c` starts with `a`, `a.b` or `a.b.c`). */
  private readonly byTopKey = new Map<string, PathEntry[]>()
  private readonly always: number[] = []
  private readonly stamp: Uint32Array
  private epoch = 0
  readonly stats: IndexStats

  constructor(queries: readonly unknown[], types: Types) {
    this.stamp = new Uint32Array(queries.length)
    let never = 0
    queries.forEach((q, rule) => {
      const r: Requirement = requirementOf(q, types)
      if (r === undefined) this.always.push(rule)
      else if (r.length === 0) never++
      for (const atom of r ?? []) {
        const e = this.entry(atom.path)
        if (atom.kind === 'present') e.present.push(rule)
        else if (atom.kind === 'equals') push(e.equals, atom.value, rule)
        else {
          let at = e.patterns.indexOf(atom.value)
          if (at < 0) {
            at = e.patterns.push(atom.value) - 1
            e.patternRules.push([])
          }
          e.patternRules[at].push(rule)
        }
      }
    })
    for (const e of this.paths.values()) if (e.patterns.length > 0) e.matcher = new AhoCorasick(e.patterns)
    this.stats = { rules: queries.length, always: this.always.length, never, paths: this.paths.size }
  }

  /** Indices of the rules that may match `doc`, ascending. */
  candidates(doc: DocView): number[] {
    const epoch = this.nextEpoch()
    const stamp = this.stamp
    const out: number[] = []
    const add = (rule: number) => {
      if (stamp[rule] !== epoch) {
        stamp[rule] = epoch
        out.push(rule)
      }
    }
    const addAll = (rules: number[]) => {
      for (let i = 0; i < rules.length; i++) add(rules[i])
    }
    addAll(this.always)
    for (const key of Object.keys(doc.source)) {
      const entries = this.byTopKey.get(key)
      if (entries === undefined) continue
      for (const e of entries) {
        if (e.seen === epoch) continue
        e.seen = epoch
        if (doc.values(e.fp).length === 0) continue
        addAll(e.present)
        if (e.equals.size === 0 && !e.matcher) continue
        for (const v of doc.folded(e.fp)) {
          const hit = e.equals.get(v)
          if (hit) addAll(hit)
          e.matcher?.scan(v, (p) => addAll(e.patternRules[p]))
        }
      }
    }
    return out.sort((a, b) => a - b)
  }

  private nextEpoch(): number {
    if (++this.epoch === 0xffffffff) {
      this.stamp.fill(0)
      for (const e of this.paths.values()) e.seen = 0
      this.epoch = 1
    }
    return this.epoch
  }

  private entry(path: string): PathEntry {
    let e = this.paths.get(path)
    if (!e) {
      e = { fp: fieldPath(path), present: [], equals: new Map(), patterns: [], patternRules: [], seen: 0 }
      this.paths.set(path, e)
      const parts = path.split('.')
      for (let j = 1; j <= parts.length; j++) {
        const key = parts.slice(0, j).join('.')
        const list = this.byTopKey.get(key) ?? []
        list.push(e)
        this.byTopKey.set(key, list)
      }
    }
    return e
  }
}

function push<K>(m: Map<K, number[]>, k: K, v: number): void {
  const l = m.get(k)
  if (l) l.push(v)
  else m.set(k, [v])
}

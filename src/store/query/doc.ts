import { analyze } from './analysis'
import { fold } from './fold'
import { isObject } from '../../json'

export type Source = Record<string, unknown>

/**
 * A field path compiled once: `a.b.c` resolves against `{a: {b: {c}}}`, `{"a.b": {c}}`,
 * `{"a.b.c": ...}` and arrays of objects anywhere along the way (their leaves are flattened).
 */
export class FieldPath {
  readonly parts: string[]
  /** keys[i][j]: parts i..i+j joined by '.', precomputed so lookups never build strings. */
  private readonly keys: string[][]

  constructor(readonly path: string) {
    this.parts = path.split('.')
    this.keys = this.parts.map((_, i) => {
      const out: string[] = []
      let k = ''
      for (let j = i; j < this.parts.length; j++) {
        k = j === i ? this.parts[j] : `${k}.${this.parts[j]}`
        out.push(k)
      }
      return out
    })
  }

  /** Non-null leaf values (arrays flattened; objects kept as objects). */
  collect(source: unknown): unknown[] {
    const out: unknown[] = []
    if (this.parts.length === 1 && isObject(source)) {
      if (Object.hasOwn(source, this.path)) pushLeaf(source[this.path], out)
      return out
    }
    this.walk(source, 0, out)
    return out
  }

  private walk(node: unknown, i: number, out: unknown[]): void {
    if (Array.isArray(node)) {
      for (const el of node) this.walk(el, i, out)
      return
    }
    if (!isObject(node)) return
    const keys = this.keys[i]
    for (let j = 0; j < keys.length; j++) {
      const k = keys[j]
      if (!Object.hasOwn(node, k)) continue
      const next = i + j + 1
      if (next === this.parts.length) pushLeaf(node[k], out)
      else this.walk(node[k], next, out)
    }
  }
}

function pushLeaf(v: unknown, out: unknown[]): void {
  if (v === null || v === undefined) return
  if (Array.isArray(v)) for (const el of v) pushLeaf(el, out)
  else out.push(v)
}

export { isObject }

/** The keyword form of a scalar: what OpenSearch indexes for it in a keyword field. */
export function keywordOf(v: unknown): string | undefined {
  if (typeof v === 'string') return v
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v)
  return undefined
}

type Mode = 0 | 1 | 2 | 3
const RAW: Mode = 0
const KEYWORD: Mode = 1
const FOLDED: Mode = 2
const TOKENS: Mode = 3

/**
 * One document as queries see it, with per-field caches so that many predicates (1,000 rules on
 * one event) walk the JSON and fold/analyse each field once. Pass a DocView instead of a plain
 * source to share those caches across compiled queries.
 */
export class DocView {
  private caches: Array<Map<FieldPath, unknown[]> | undefined> = []

  constructor(
    readonly source: Source,
    readonly id?: string,
    readonly index?: string,
  ) {}

  values(f: FieldPath): unknown[] {
    return this.cached(f, RAW, () => f.collect(this.source))
  }

  /** Keyword strings of the field (numbers/booleans stringified, objects dropped). */
  keywords(f: FieldPath): string[] {
    return this.cached(f, KEYWORD, () => {
      const out: string[] = []
      for (const v of this.values(f)) {
        const k = keywordOf(v)
        if (k !== undefined) out.push(k)
      }
      return out
    }) as string[]
  }

  folded(f: FieldPath): string[] {
    return this.cached(f, FOLDED, () => this.keywords(f).map(fold)) as string[]
  }

  tokens(f: FieldPath): string[] {
    return this.cached(f, TOKENS, () => {
      const out: string[] = []
      for (const v of this.values(f)) {
        const k = keywordOf(v) // a number in a text field is indexed as its string, analysed
        if (k !== undefined) for (const t of analyze(k)) out.push(t)
      }
      return out
    }) as string[]
  }

  private cached(f: FieldPath, mode: Mode, make: () => unknown[]): unknown[] {
    let m = this.caches[mode]
    if (!m) m = this.caches[mode] = new Map()
    let v = m.get(f)
    if (v === undefined) m.set(f, (v = make()))
    return v
  }
}

export const asDocView = (d: Source | DocView): DocView => (d instanceof DocView ? d : new DocView(d))

/**
 * One shared instance per path from `make`, so every compiled query hits the same DocView cache
 * entries; at most 100,000 are kept (later ones are made afresh each time).
 */
export function internedPaths<P extends FieldPath>(make: (path: string) => P): (path: string) => P {
  const interned = new Map<string, P>()
  return (path) => {
    let f = interned.get(path)
    if (!f) {
      f = make(path)
      if (interned.size < 100_000) interned.set(path, f)
    }
    return f
  }
}

/** Shared FieldPath per name. */
export const fieldPath = internedPaths((path) => new FieldPath(path))

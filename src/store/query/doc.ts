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

/**
 * One field of one document in each form a query reads it, each made once when first asked. A
 * class, so every entry has the same shape whatever order its forms are asked in (property access
 * stays monomorphic across a thousand predicates).
 */
class FieldViews {
  raw: unknown[] | undefined = undefined
  keywords: string[] | undefined = undefined
  folded: string[] | undefined = undefined
  tokens: string[] | undefined = undefined
}

/**
 * One document as queries see it, with per-field caches so that many predicates (1,000 rules on
 * one event) walk the JSON and fold/analyse each field once. Pass a DocView instead of a plain
 * source to share those caches across compiled queries.
 */
export class DocView {
  /** The forms of each field read so far: one map per document, made on first use. */
  private fields?: Map<FieldPath, FieldViews>

  constructor(
    readonly source: Source,
    readonly id?: string,
    readonly index?: string,
    /** The stored document's `_seq_no` and `_version`, where a reader shows them (top_hits). */
    readonly seq?: number,
    readonly version?: number,
  ) {}

  values(f: FieldPath): unknown[] {
    const v = this.views(f)
    return (v.raw ??= f.collect(this.source))
  }

  /**
   * The field's values as `values` gives them, read from the source without keeping them when no
   * query asked for them (a last reader of the document: keeping them cost three times the walk).
   */
  valuesOnce(f: FieldPath): unknown[] {
    return this.fields?.get(f)?.raw ?? f.collect(this.source)
  }

  /** Keyword strings of the field (numbers/booleans stringified, objects dropped). */
  keywords(f: FieldPath): string[] {
    const v = this.views(f)
    if (v.keywords) return v.keywords
    const out: string[] = []
    for (const x of (v.raw ??= f.collect(this.source))) {
      const k = keywordOf(x)
      if (k !== undefined) out.push(k)
    }
    return (v.keywords = out)
  }

  folded(f: FieldPath): string[] {
    const v = this.views(f)
    return (v.folded ??= (v.keywords ?? this.keywords(f)).map(fold))
  }

  tokens(f: FieldPath): string[] {
    const v = this.views(f)
    if (v.tokens) return v.tokens
    const raw = (v.raw ??= f.collect(this.source))
    // One value (the usual text field): its tokens as analysed, without a copy.
    if (raw.length === 1) {
      const k = keywordOf(raw[0]) // a number in a text field is indexed as its string, analysed
      return (v.tokens = k === undefined ? [] : analyze(k))
    }
    const out: string[] = []
    for (const x of raw) {
      const k = keywordOf(x)
      if (k !== undefined) for (const t of analyze(k)) out.push(t)
    }
    return (v.tokens = out)
  }

  private views(f: FieldPath): FieldViews {
    const fields = (this.fields ??= new Map())
    let v = fields.get(f)
    if (v === undefined) fields.set(f, (v = new FieldViews()))
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

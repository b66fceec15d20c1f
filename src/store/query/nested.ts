/**
 * The `nested` field type as Lucene indexes it: each object under a nested path is a document of
 * its own (a "nested document") holding only the fields under that path, and its root document
 * does not hold them. A field is therefore seen in one scope (the root, '', or a nested path), and
 * a query or aggregation reads it only there — unless `include_in_parent` / `include_in_root`
 * copies it up. Nested documents are views of their objects, wrapped back into their path so that
 * field paths read them as they read a root document.
 */
import { IllegalArgument, ParsingError, QueryShardError } from '../errors'
import type { FieldSpec } from './field-spec'
import { DocView, fieldPath, isObject, type Source } from './doc'

/** A nested path of the mapping: the nested path holding it ('' = the root) and what it copies up. */
interface NestedPath {
  parent: string
  inParent: boolean
  inRoot: boolean
}

/** The object structure a field-spec map was made from: nested paths, and the plain object paths. */
export interface NestedMapping {
  paths: ReadonlyMap<string, NestedPath>
  objects: ReadonlySet<string>
}

const MAPPINGS = new WeakMap<ReadonlyMap<string, FieldSpec>, NestedMapping>()

/** Records the nested paths of the mapping `specs` was made from (mapping.ts's fieldSpecs, when there are any). */
export function describeNested(specs: ReadonlyMap<string, FieldSpec>, m: NestedMapping): void {
  MAPPINGS.set(specs, m)
}

/** The fields of one scope, and the whole map they were taken from (for the scopes inside it). */
class ScopedSpecs extends Map<string, FieldSpec> {
  constructor(
    entries: Iterable<[string, FieldSpec]>,
    readonly all: ReadonlyMap<string, FieldSpec>,
    readonly scope: string,
  ) {
    super(entries)
  }
}

const SCOPES = new WeakMap<ReadonlyMap<string, FieldSpec>, Map<string, ScopedSpecs>>()

/** The whole field map behind a scoped one (itself when it is not scoped). */
export const allSpecs = (specs: ReadonlyMap<string, FieldSpec>): ReadonlyMap<string, FieldSpec> =>
  specs instanceof ScopedSpecs ? specs.all : specs

const mappingOf = (specs: ReadonlyMap<string, FieldSpec>): NestedMapping | undefined => MAPPINGS.get(allSpecs(specs))

/** The fields a document of `scope` holds ('' = root documents); the map itself when the mapping has no nested path. */
export function scopedSpecs(specs: ReadonlyMap<string, FieldSpec>, scope: string): Map<string, FieldSpec> {
  const all = allSpecs(specs)
  const m = MAPPINGS.get(all)
  if (!m) return all as Map<string, FieldSpec> // callers pass Maps; the result is only read
  let byScope = SCOPES.get(all)
  if (!byScope) SCOPES.set(all, (byScope = new Map()))
  let out = byScope.get(scope)
  if (!out)
    byScope.set(
      scope,
      (out = new ScopedSpecs(
        [...all].filter(([f]) => visibleIn(m, scopeOf(m, f), scope)),
        all,
        scope,
      )),
    )
  return out
}

/** The fields of `scope`, by default the scope the map already is (a whole map: the root's). */
export const inScope = (specs: ReadonlyMap<string, FieldSpec>, scope?: string): Map<string, FieldSpec> =>
  scopedSpecs(specs, scope ?? (specs instanceof ScopedSpecs ? specs.scope : ''))

/** The innermost nested path holding a field ('' = none: a root field). */
function scopeOf(m: NestedMapping, field: string): string {
  let best = ''
  for (const p of m.paths.keys()) if (p.length > best.length && field.startsWith(`${p}.`)) best = p
  return best
}

/** Whether a field of nested scope `own` is in documents of `scope`: its own, or copied up by include_in_parent / include_in_root. */
function visibleIn(m: NestedMapping, own: string, scope: string): boolean {
  if (own === scope) return true
  for (let p = own; p !== '';) {
    const n = m.paths.get(p)!
    if (scope === '' && n.inRoot) return true
    if (!n.inParent) return false
    p = n.parent
    if (p === scope) return true
  }
  return false
}

/** Whether a scored field lives in nested documents (its term statistics are then theirs, not the root documents'). */
export function nestedScope(specs: ReadonlyMap<string, FieldSpec>, field: string): string {
  const m = mappingOf(specs)
  return m ? scopeOf(m, field) : ''
}

/**
 * A nested query's or aggregation's path in this mapping: true when nested, false when not
 * mapped; a plain object is OpenSearch's error, made by `notNested`.
 */
export function nestedPathKind(specs: ReadonlyMap<string, FieldSpec>, path: string): 'nested' | 'object' | 'unmapped' {
  const m = mappingOf(specs)
  if (m?.paths.has(path)) return 'nested'
  if (m?.objects.has(path)) return 'object'
  const all = allSpecs(specs)
  // Without nested paths the map is not described: an object is then known by its fields.
  if (m === undefined && (all.has(path) || [...all.keys()].some((k) => k.startsWith(`${path}.`)))) return 'object'
  return 'unmapped'
}

/** One object under a nested path, as a document: its source is the object wrapped back into its path. */
export class NestedDoc extends DocView {
  constructor(
    source: Source,
    readonly parent: DocView,
    readonly path: string,
    readonly offset: number,
  ) {
    // Lucene gives nested documents their root's _id (an ids query inside a nested one matches them).
    super(source, parent.id, parent.index)
  }

  /** The root document holding it. */
  get root(): DocView {
    let d: DocView = this
    while (d instanceof NestedDoc) d = d.parent
    return d
  }

  /** The object itself (what top_hits shows as its `_source`). */
  own(source: Source = this.source): unknown {
    let v: unknown = source
    for (const part of this.path.split('.')) v = isObject(v) ? v[part] : undefined
    return v
  }
}

const NESTED = new WeakMap<DocView, Map<string, NestedDoc[]>>()

/** The nested documents of `path` in a document (root or nested): made once per document and path, so their field caches are shared. */
export function nestedDocs(d: DocView, path: string): NestedDoc[] {
  let byPath = NESTED.get(d)
  if (!byPath) NESTED.set(d, (byPath = new Map()))
  let docs = byPath.get(path)
  if (docs) return docs
  const parts = path.split('.')
  docs = fieldPath(path)
    .collect(d.source)
    .filter(isObject)
    .map(
      (o, i) =>
        new NestedDoc(
          parts.reduceRight<Source>((inner, k) => ({ [k]: inner }), o),
          d,
          path,
          i,
        ),
    )
  byPath.set(path, docs)
  return docs
}

/** `_nested` of a top hit: the path relative to the enclosing nested document, outermost first. */
export function nestedIdentity(d: NestedDoc): Record<string, unknown> {
  const chain: NestedDoc[] = []
  for (let x: DocView = d; x instanceof NestedDoc; x = x.parent) chain.unshift(x)
  let out: Record<string, unknown> | undefined
  for (let i = chain.length - 1; i >= 0; i--) {
    const outer = i === 0 ? '' : chain[i - 1].path
    const field = outer === '' ? chain[i].path : chain[i].path.slice(outer.length + 1)
    out = { field, offset: chain[i].offset, ...(out ? { _nested: out } : {}) }
  }
  return out!
}

export type ScoreMode = 'avg' | 'max' | 'min' | 'sum' | 'none'
const SCORE_MODES = new Set(['avg', 'max', 'min', 'sum', 'none'])
const NESTED_KEYS = new Set(['path', 'query', 'score_mode', 'ignore_unmapped', 'inner_hits', 'boost', '_name'])

export interface NestedQuery {
  path: string
  query: unknown
  scoreMode: ScoreMode
  ignoreUnmapped: boolean
  boost: number
  name?: string
}

/** A `nested` query's parameters, refused as OpenSearch refuses them. */
export function parseNestedQuery(body: unknown): NestedQuery {
  if (!isObject(body)) throw new ParsingError('[nested] query malformed, no start_object after query name')
  for (const k of Object.keys(body)) if (!NESTED_KEYS.has(k)) throw new ParsingError(`[nested] query does not support [${k}]`)
  if (body.path === undefined) throw new IllegalArgument("[nested] requires 'path' field")
  if (body.query === undefined) throw new IllegalArgument("[nested] requires 'query' field")
  const mode = body.score_mode ?? 'avg'
  if (typeof mode !== 'string' || !SCORE_MODES.has(mode)) throw new IllegalArgument(`No score mode for child query [${String(mode)}] found`)
  return {
    path: String(body.path),
    query: body.query,
    scoreMode: mode as ScoreMode,
    ignoreUnmapped: body.ignore_unmapped === true || body.ignore_unmapped === 'true',
    boost: typeof body.boost === 'number' ? body.boost : 1,
    name: typeof body._name === 'string' ? body._name : undefined,
  }
}

/** Whether a nested query's path can be queried here: false = unmapped and ignored; unmapped or plain objects are refused. */
export function checkNestedPath(specs: ReadonlyMap<string, FieldSpec>, q: NestedQuery): boolean {
  const kind = nestedPathKind(specs, q.path)
  if (kind === 'nested') return true
  if (q.ignoreUnmapped) return false
  throw new QueryShardError(
    kind === 'object'
      ? `failed to create query: [nested] nested object under path [${q.path}] is not of nested type`
      : `failed to create query: [nested] failed to find nested object under path [${q.path}]`,
  )
}

/** The nested documents' scores combined as `score_mode` says (none: 0). */
export function combineScores(scores: number[], mode: ScoreMode): number {
  if (scores.length === 0 || mode === 'none') return 0
  switch (mode) {
    case 'max':
      return Math.max(...scores)
    case 'min':
      return Math.min(...scores)
    default: {
      const sum = scores.reduce((a, b) => a + b, 0)
      return mode === 'sum' ? sum : sum / scores.length
    }
  }
}

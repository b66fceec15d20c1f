/**
 * `more_like_this`, rewritten before the store sees the query, as OpenSearch's MoreLikeThisQuery
 * does: the terms of the `like` texts and documents (per field: analysed for text fields, whole
 * values for keyword fields) are counted, those at least `min_term_freq` times are weighed by
 * tf-idf over the searched indices and the best `max_query_terms` become a bool of should clauses
 * with `minimum_should_match` (default 30%); the `like` documents themselves are excluded unless
 * `include`. Document frequencies come from one bounded read (at most `index.max_result_window`
 * documents holding a candidate term, only the fields asked for), counted with the caller's read filter.
 */
import type { Mappings, Query } from '../store/port'
import { analyze } from '../store/query/analysis'
import { expandFieldPattern, kindOf, minimumShouldMatch } from '../store/query/compile'
import { fieldPath, isObject } from '../store/query/doc'
import { fieldSpecs } from '../store/embedded/mapping'
import { badRequest, type RequestContext } from './context'

const KEYS = new Set([
  'fields',
  'like',
  'unlike',
  'like_text',
  'ids',
  'docs',
  'min_term_freq',
  'max_query_terms',
  'min_doc_freq',
  'max_doc_freq',
  'min_word_length',
  'max_word_length',
  'stop_words',
  'analyzer',
  'minimum_should_match',
  'boost_terms',
  'include',
  'fail_on_unsupported_field',
  'boost',
  '_name',
])

const SAMPLE = 10000
const MAX_CANDIDATES = 500

/** True when a query holds a `more_like_this` anywhere. */
export function hasMoreLikeThis(q: unknown, depth = 0): boolean {
  if (depth > 200) return false
  if (Array.isArray(q)) return q.some((x) => hasMoreLikeThis(x, depth + 1))
  if (!isObject(q)) return false
  if (Object.hasOwn(q, 'more_like_this')) return true
  return Object.values(q).some((v) => hasMoreLikeThis(v, depth + 1))
}

interface Item {
  index?: string
  id?: string
  doc?: Record<string, unknown>
  text?: string
}

function items(v: unknown, what: string): Item[] {
  if (v === undefined) return []
  return [v].flat().map((x): Item => {
    if (typeof x === 'string') return { text: x }
    if (isObject(x)) {
      if (isObject(x.doc)) return { doc: x.doc, ...(typeof x._index === 'string' ? { index: x._index } : {}) }
      if (x._id !== undefined) return { id: String(x._id), ...(typeof x._index === 'string' ? { index: x._index } : {}) }
    }
    throw badRequest(
      `[more_like_this] ${what} must be a text, a document {_index, _id} or an artificial document {doc}`,
      'parsing_exception',
    )
  })
}

function int(body: Record<string, unknown>, key: string, dflt: number): number {
  const v = body[key]
  if (v === undefined) return dflt
  const n = typeof v === 'string' ? Number(v) : v
  if (typeof n !== 'number' || !Number.isFinite(n)) throw badRequest(`[mlt] failed to parse field [${key}]`, 'parsing_exception')
  return n
}

type Terms = Map<string, Map<string, number>>

function addTerms(out: Terms, field: string, keyword: boolean, value: unknown, keep: (t: string) => boolean): void {
  const values = [value].flat().filter((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
  let m = out.get(field)
  if (!m) out.set(field, (m = new Map()))
  for (const v of values) {
    for (const t of keyword ? [String(v)] : analyze(String(v))) if (keep(t)) m.set(t, (m.get(t) ?? 0) + 1)
  }
}

/** Rewrites every `more_like_this` of a query into the bool of term clauses it stands for. */
/** A like document's source as the caller may read it (the read gate's), or undefined. */
export type SourceReader = (index: string, id: string) => Promise<Record<string, unknown> | undefined>

export async function rewriteMoreLikeThis(
  ctx: RequestContext,
  query: Query,
  indices: string[],
  filter: Query | undefined,
  readSource: SourceReader,
): Promise<Query> {
  const mappings: Record<string, { mappings: Mappings }> =
    indices.length > 0 ? await ctx.store.getMapping({ index: indices, expand_wildcards: 'all' }) : {}
  const types = new Map<string, { type: string; path?: string }>()
  for (const m of Object.values(mappings)) for (const [k, v] of fieldSpecs(m.mappings)) if (!types.has(k)) types.set(k, v)
  const walk = async (q: unknown, depth: number): Promise<unknown> => {
    if (depth > 200) return q
    if (Array.isArray(q)) return Promise.all(q.map((x) => walk(x, depth + 1)))
    if (!isObject(q)) return q
    if (Object.hasOwn(q, 'more_like_this') && Object.keys(q).length === 1)
      return rewriteOne(ctx, q.more_like_this, indices, filter, types, readSource)
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(q)) out[k] = await walk(v, depth + 1)
    return out
  }
  return (await walk(query, 0)) as Query
}

type FieldTypes = Map<string, { type: string; path?: string }>
interface MltField {
  name: string
  keyword: boolean
  path: string
}
interface Candidate extends MltField {
  term: string
  tf: number
}

async function rewriteOne(
  ctx: RequestContext,
  raw: unknown,
  indices: string[],
  filter: Query | undefined,
  types: FieldTypes,
  readSource: SourceReader,
): Promise<Query> {
  if (!isObject(raw)) throw badRequest('[mlt] query malformed, no start_object', 'parsing_exception')
  for (const k of Object.keys(raw)) if (!KEYS.has(k)) throw badRequest(`[mlt] query does not support [${k}]`, 'parsing_exception')
  const like = [...items(raw.like, 'like'), ...items(raw.like_text, 'like_text')]
  if (Array.isArray(raw.ids)) like.push(...raw.ids.map((id) => ({ id: String(id) })))
  if (Array.isArray(raw.docs)) like.push(...items(raw.docs, 'docs'))
  const unlike = items(raw.unlike, 'unlike')
  if (like.length === 0) throw badRequest("more_like_this requires 'like' to be specified", 'illegal_argument_exception')
  const minTermFreq = int(raw, 'min_term_freq', 2)
  const maxQueryTerms = int(raw, 'max_query_terms', 25)
  const minDocFreq = int(raw, 'min_doc_freq', 5)
  const maxDocFreq = int(raw, 'max_doc_freq', Number.MAX_SAFE_INTEGER)
  const minLen = int(raw, 'min_word_length', 0)
  const maxLen = int(raw, 'max_word_length', 0)
  if (maxQueryTerms < 1) throw badRequest("requires 'max_query_terms' to be greater than 0", 'illegal_argument_exception')
  const stop = new Set([raw.stop_words ?? []].flat().map((s) => String(s).toLowerCase()))
  const keep = (t: string) => !stop.has(t) && t.length >= minLen && (maxLen <= 0 || t.length <= maxLen)
  const fields = mltFields(raw, types)

  const docSource = async (item: Item): Promise<Record<string, unknown> | undefined> => {
    if (item.doc) return item.doc
    const index = item.index ?? indices[0]
    if (index === undefined) return undefined
    return readSource(index, item.id!)
  }
  const { tf, likeIds } = await likeTerms(like, fields, keep, docSource)
  const unwanted = await unlikeTerms(unlike, fields, docSource)
  const candidates: Candidate[] = []
  for (const f of fields)
    for (const [term, n] of tf.get(f.name) ?? [])
      if (n >= minTermFreq && !unwanted.get(f.name)?.has(term))
        candidates.push({ name: f.name, keyword: f.keyword, path: f.path, term, tf: n })
  candidates.sort((a, b) => b.tf - a.tf || (a.term < b.term ? -1 : 1))
  candidates.length = Math.min(candidates.length, MAX_CANDIDATES)

  const excluded = likeIds.length > 0 && raw.include !== true ? [{ ids: { values: likeIds.map((l) => l.id) } }] : []
  const none: Query = { match_none: {} }
  if (candidates.length === 0) return none
  const { numDocs, df } = await docFrequencies(ctx, indices, filter, candidates, fields)
  const scored = candidates
    .map((c) => {
      const d = df(c)
      return { ...c, df: d, score: c.tf * (1 + Math.log(numDocs / (d + 1))) }
    })
    .filter((c) => c.df >= minDocFreq && c.df <= maxDocFreq && c.df > 0)
    .sort((a, b) => b.score - a.score || (a.term < b.term ? -1 : 1))
    .slice(0, maxQueryTerms)
  if (scored.length === 0) return none
  const msm = raw.minimum_should_match ?? '30%'
  // A pure disjunction needs one clause at least, whatever the percentage rounds down to (Lucene's rule).
  const needed = Math.max(1, minimumShouldMatch(msm, scored.length))
  const bool: Record<string, unknown> = { should: scored.map(termClause), minimum_should_match: needed }
  if (excluded.length > 0) bool.must_not = excluded
  if (raw.boost !== undefined) bool.boost = raw.boost
  if (raw._name !== undefined) bool._name = raw._name
  return { bool } as Query
}

const termClause = (c: Candidate) => (c.keyword ? { term: { [c.name]: c.term } } : { match: { [c.name]: c.term } })

/** The text and keyword fields the query reads (`fields`, patterns expanded; all by default). */
function mltFields(raw: Record<string, unknown>, types: FieldTypes): MltField[] {
  const failUnsupported = raw.fail_on_unsupported_field !== false
  if (raw.fields !== undefined && !(Array.isArray(raw.fields) && raw.fields.every((f) => typeof f === 'string')))
    throw badRequest('[mlt] query does not support [fields] other than an array of field names', 'parsing_exception')
  const given = raw.fields === undefined ? ['*'] : (raw.fields as string[])
  const fields: MltField[] = []
  for (const pattern of given) {
    const expanded = pattern.includes('*') ? expandFieldPattern(types as never, pattern).map((f) => f.name) : [pattern]
    for (const name of expanded) {
      const spec = types.get(name)
      const kind = spec ? kindOf(spec.type) : 'text'
      if (kind !== 'text' && kind !== 'keyword') {
        if (pattern.includes('*') || !failUnsupported) continue
        throw badRequest(`more_like_this only supports text/keyword fields: [${name}]`, 'illegal_argument_exception')
      }
      if (spec && !['text', 'match_only_text', 'keyword', 'constant_keyword', 'wildcard'].includes(spec.type)) continue
      fields.push({ name, keyword: kind === 'keyword', path: spec?.path ?? name })
    }
  }
  return fields
}

type DocSource = (item: Item) => Promise<Record<string, unknown> | undefined>

/** Term frequencies of the like items, per field, and the documents they name. */
async function likeTerms(
  like: Item[],
  fields: MltField[],
  keep: (t: string) => boolean,
  docSource: DocSource,
): Promise<{ tf: Terms; likeIds: Array<{ index?: string; id: string }> }> {
  const tf: Terms = new Map()
  const likeIds: Array<{ index?: string; id: string }> = []
  for (const item of like) {
    if (item.text !== undefined) {
      for (const f of fields) addTerms(tf, f.name, f.keyword, item.text, keep)
      continue
    }
    const source = await docSource(item)
    if (item.id !== undefined) likeIds.push({ index: item.index, id: item.id })
    if (!source) continue
    for (const f of fields) addTerms(tf, f.name, f.keyword, fieldPath(f.path).collect(source), keep)
  }
  return { tf, likeIds }
}

async function unlikeTerms(unlike: Item[], fields: MltField[], docSource: DocSource): Promise<Terms> {
  const unwanted: Terms = new Map()
  for (const item of unlike) {
    if (item.text !== undefined) for (const f of fields) addTerms(unwanted, f.name, f.keyword, item.text, () => true)
    else {
      const source = await docSource(item)
      if (source) for (const f of fields) addTerms(unwanted, f.name, f.keyword, fieldPath(f.path).collect(source), () => true)
    }
  }
  return unwanted
}

/** Document frequencies from one bounded read of the documents holding any candidate. */
async function docFrequencies(
  ctx: RequestContext,
  indices: string[],
  filter: Query | undefined,
  candidates: Candidate[],
  fields: MltField[],
): Promise<{ numDocs: number; df: (c: Candidate) => number }> {
  const withFilter = (q: Query): Query => (filter === undefined ? q : { bool: { must: [q], filter: [filter] } })
  const numDocs = (await ctx.store.count({ index: indices, expand_wildcards: 'all', body: filter ? { query: filter } : {} })).count
  const read = (size: number) =>
    ctx.store.search({
      index: indices,
      expand_wildcards: 'all',
      body: {
        query: withFilter({ bool: { should: candidates.map(termClause), minimum_should_match: 1 } }),
        size,
        _source: [...new Set(candidates.map((c) => c.path))],
        track_total_hits: true,
      },
    })
  const wanted = Math.min(SAMPLE, Math.max(numDocs, 1))
  let sample: Awaited<ReturnType<typeof read>>
  try {
    sample = await read(wanted)
  } catch (e) {
    // An index with a smaller index.max_result_window: sample what it allows.
    const window = e instanceof Error ? /less than or equal to: \[(\d+)\]/.exec(e.message) : null
    if (!window || Number(window[1]) >= wanted) throw e
    sample = await read(Number(window[1]))
  }
  const total = typeof sample.hits.total === 'number' ? sample.hits.total : (sample.hits.total?.value ?? sample.hits.hits.length)
  const scale = sample.hits.hits.length > 0 ? total / sample.hits.hits.length : 1
  const df = new Map<string, number>()
  for (const hit of sample.hits.hits) {
    const src = hit._source ?? {}
    const seen = new Set<string>()
    for (const f of fields) {
      const values = fieldPath(f.path).collect(src)
      const terms = f.keyword ? values.map(String) : values.flatMap((v) => analyze(String(v)))
      for (const t of terms) seen.add(`${f.name}\u0000${t}`)
    }
    for (const k of seen) df.set(k, (df.get(k) ?? 0) + 1)
  }
  return { numDocs, df: (c) => Math.round((df.get(`${c.name}\u0000${c.term}`) ?? 0) * scale) }
}

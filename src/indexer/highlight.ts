/**
 * Search `highlight`, computed on the hits a search returns (never on the rest of the matches):
 * the unified and plain highlighters' answers for text and keyword fields. The terms come from
 * the caller's query (or `highlight_query`): term-level queries, match and its phrase and prefix
 * forms, multi_match, query_string / simple_query_string, inside bool, dis_max, constant_score,
 * nested, function_score and boosting. Text values are split by the standard analyzer with their
 * offsets; each matching term is wrapped in the tags (phrases only where the whole phrase occurs),
 * and passages are cut at sentence boundaries up to `fragment_size`.
 */
import type { FieldMapping, Mappings, SearchHit } from '../store/port'
import type { RequestContext } from './context'
import { analyze, analyzeWithOffsets, standardTokens } from '../store/query/analysis'
import { expandFieldPattern, type FieldSpec } from '../store/query/compile'
import { fieldPath, isObject } from '../store/query/doc'
import { editDistanceWithin, fuzzyEdits } from '../store/query/fuzzy'
import { luceneRegExp } from '../store/query/lucene-regexp'
import { translateQueryString } from '../store/query/query-string'
import { wildcardMatcher } from '../store/query/wildcard'
import { fieldSpecs } from '../store/embedded/mapping'
import { badRequest } from './context'

const FIELD_OPTIONS = new Set([
  'pre_tags',
  'post_tags',
  'fragment_size',
  'number_of_fragments',
  'require_field_match',
  'highlight_query',
  'type',
  'no_match_size',
  'order',
  'max_analyzer_offset',
  'matched_fields',
  'fragmenter',
  'boundary_scanner',
  'boundary_chars',
  'boundary_max_scan',
  'boundary_scanner_locale',
  'fragment_offset',
  'phrase_limit',
  'force_source',
  'options',
])
const GLOBAL_OPTIONS = new Set([...FIELD_OPTIONS, 'fields', 'tags_schema', 'encoder'])
const STYLED = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((i) => `<em class="hlt${i}">`)

export interface FieldOptions {
  preTags: string[]
  postTags: string[]
  fragmentSize: number
  fragments: number
  requireFieldMatch: boolean
  query?: unknown
  type: 'unified' | 'plain' | 'fvh'
  noMatchSize: number
  order: 'none' | 'score'
  maxAnalyzerOffset?: number
  matchedFields: string[]
}

export interface HighlightSpec {
  fields: Array<{ pattern: string; options: FieldOptions }>
  html: boolean
}

function intOption(o: Record<string, unknown>, key: string): number | undefined {
  const v = o[key]
  if (v === undefined) return undefined
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v
  if (typeof n !== 'number' || !Number.isInteger(n))
    throw badRequest(`[highlight] failed to parse field [${key}]`, 'x_content_parse_exception')
  return n
}

function tags(o: Record<string, unknown>, key: string): string[] | undefined {
  const v = o[key]
  if (v === undefined) return undefined
  const list = [v].flat()
  if (!list.every((t) => typeof t === 'string')) throw badRequest(`[highlight] failed to parse field [${key}]`, 'x_content_parse_exception')
  return list as string[]
}

function options(o: Record<string, unknown>, base: FieldOptions | undefined, allowed: Set<string>, where: string): FieldOptions {
  for (const k of Object.keys(o)) if (!allowed.has(k)) throw badRequest(`[${where}] unknown field [${k}]`, 'x_content_parse_exception')
  const type = o.type ?? base?.type ?? 'unified'
  if (type !== 'unified' && type !== 'plain' && type !== 'fvh')
    throw badRequest(`unknown highlighter type [${String(type)}] for the field`, 'illegal_argument_exception')
  const order = o.order ?? base?.order ?? 'none'
  if (order !== 'none' && order !== 'score') throw badRequest(`No order for name [${String(order)}]`, 'illegal_argument_exception')
  const rfm = o.require_field_match
  const out: FieldOptions = {
    preTags: tags(o, 'pre_tags') ?? base?.preTags ?? ['<em>'],
    postTags: tags(o, 'post_tags') ?? base?.postTags ?? ['</em>'],
    fragmentSize: intOption(o, 'fragment_size') ?? base?.fragmentSize ?? 100,
    fragments: intOption(o, 'number_of_fragments') ?? base?.fragments ?? 5,
    requireFieldMatch: typeof rfm === 'boolean' ? rfm : (base?.requireFieldMatch ?? true),
    query: o.highlight_query ?? base?.query,
    type,
    noMatchSize: intOption(o, 'no_match_size') ?? base?.noMatchSize ?? 0,
    order,
    matchedFields: [],
  }
  if (o.matched_fields !== undefined) {
    const mf = [o.matched_fields].flat()
    if (!mf.every((f) => typeof f === 'string'))
      throw badRequest(`[${where}] failed to parse field [matched_fields]`, 'x_content_parse_exception')
    out.matchedFields = mf as string[]
  }
  if (o.highlight_query !== undefined && !isObject(o.highlight_query))
    throw badRequest(`[${where}] failed to parse field [highlight_query]`, 'x_content_parse_exception')
  const mao = intOption(o, 'max_analyzer_offset') ?? base?.maxAnalyzerOffset
  if (mao !== undefined) out.maxAnalyzerOffset = mao
  if (out.fragments < 0) throw badRequest('[number_of_fragments] must be positive', 'illegal_argument_exception')
  if (out.fragmentSize < 0 && out.fragments !== 0) throw badRequest('[fragment_size] must be positive', 'illegal_argument_exception')
  if (out.preTags.length === 0 || out.postTags.length === 0)
    throw badRequest('Highlighter pre_tags are set, but post_tags are not set', 'illegal_argument_exception')
  return out
}

/** Parses the search body's `highlight`, answering OpenSearch's 400s for malformed input. */
export function parseHighlight(spec: unknown): HighlightSpec {
  if (!isObject(spec)) throw badRequest('[highlight] must be an object', 'parsing_exception')
  const global = { ...spec }
  const schema = global.tags_schema
  if (schema !== undefined) {
    if (schema !== 'styled' && schema !== 'default')
      throw badRequest(`Unknown tag schema [${String(schema)}]`, 'illegal_argument_exception')
    if (schema === 'styled') {
      global.pre_tags ??= STYLED
      global.post_tags ??= ['</em>']
    }
  }
  const encoder = global.encoder ?? 'default'
  if (encoder !== 'default' && encoder !== 'html') throw badRequest(`Unknown encoder [${String(encoder)}]`, 'illegal_argument_exception')
  if (global.pre_tags !== undefined && global.post_tags === undefined)
    throw badRequest('pre_tags are set but post_tags are not set', 'illegal_argument_exception')
  const base = options(global, undefined, GLOBAL_OPTIONS, 'highlight')
  const raw = global.fields
  const entries: Array<[string, unknown]> = []
  if (Array.isArray(raw)) {
    for (const f of raw) {
      if (!isObject(f) || Object.keys(f).length !== 1)
        throw badRequest('[highlight] fields must be an object or an array of single-field objects', 'parsing_exception')
      entries.push(Object.entries(f)[0])
    }
  } else if (isObject(raw)) entries.push(...Object.entries(raw))
  else if (raw !== undefined) throw badRequest('[highlight] [fields] must be an object', 'parsing_exception')
  if (entries.length === 0) throw badRequest('highlighter must have at least one field to highlight', 'illegal_argument_exception')
  return {
    html: encoder === 'html',
    fields: entries.map(([pattern, o]) => {
      if (o !== null && !isObject(o)) throw badRequest(`[highlight_field] failed to parse field [${pattern}]`, 'x_content_parse_exception')
      return { pattern, options: options(o ?? {}, base, FIELD_OPTIONS, 'highlight_field') }
    }),
  }
}

// --- the terms a query asks for

/** One thing the query looks for: in which fields (a pattern), and how it tests a token or a whole keyword value. */
interface Wanted {
  field: string
  token?: (t: string) => boolean
  value?: (v: string) => boolean
  /** A phrase: consecutive tokens (the last one a prefix when `prefix`). */
  phrase?: string[]
  prefix?: boolean
}

function fieldAndParams(body: unknown, valueKey: string): Array<[string, Record<string, unknown>]> {
  if (!isObject(body)) return []
  const out: Array<[string, Record<string, unknown>]> = []
  for (const [field, v] of Object.entries(body)) {
    if (field === 'boost' || field === '_name' || field === 'case_insensitive') continue
    out.push([field, isObject(v) ? v : { [valueKey]: v }])
  }
  return out
}

function textWanted(
  field: string,
  text: string,
  mode: 'match' | 'phrase' | 'phrase_prefix' | 'bool_prefix',
  params: Record<string, unknown> = {},
): Wanted[] {
  const tokens = analyze(text)
  const out: Wanted[] = [{ field, value: (v) => v === text }]
  if (tokens.length === 0) return out
  // A sloppy phrase highlights its terms wherever they occur (the exact phrase check is for slop 0).
  const slop = Number(params.slop ?? 0)
  if ((mode === 'phrase' || mode === 'phrase_prefix') && tokens.length > 1 && !(slop > 0)) {
    out.push({ field, phrase: tokens, prefix: mode === 'phrase_prefix' })
    return out
  }
  const set = new Set(tokens)
  const last = tokens[tokens.length - 1]
  const prefixLast = mode !== 'match'
  const fuzzy =
    params.fuzziness !== undefined && mode === 'match'
      ? tokens.map((q) => {
          const max = fuzzyEdits(params.fuzziness, q)
          return (t: string) => editDistanceWithin(t, q, max)
        })
      : []
  out.push({ field, token: (t) => set.has(t) || (prefixLast && t.startsWith(last)) || fuzzy.some((f) => f(t)) })
  return out
}

function collect(query: unknown, types: ReadonlyMap<string, FieldSpec>, out: Wanted[], depth = 0): void {
  if (!isObject(query) || depth > 100) return
  for (const [type, body] of Object.entries(query)) {
    switch (type) {
      case 'bool':
        if (!isObject(body)) break
        for (const occur of ['must', 'should', 'filter']) for (const q of [body[occur] ?? []].flat()) collect(q, types, out, depth + 1)
        break
      case 'constant_score':
        if (isObject(body)) collect(body.filter, types, out, depth + 1)
        break
      case 'nested':
      case 'function_score':
        if (isObject(body)) collect(body.query, types, out, depth + 1)
        break
      case 'boosting':
        if (isObject(body)) collect(body.positive, types, out, depth + 1)
        break
      case 'dis_max':
        if (isObject(body)) for (const q of [body.queries ?? []].flat()) collect(q, types, out, depth + 1)
        break
      case 'query_string':
      case 'simple_query_string':
        try {
          collect(
            translateQueryString(body, type === 'simple_query_string', (p) => expandFieldPattern(types, p)),
            types,
            out,
            depth + 1,
          )
        } catch {
          // the search itself answers a malformed query string
        }
        break
      default:
        collectLeaf(type, body, out)
    }
  }
}

/** The leaf queries' terms (the compound ones recurse in `collect`). */
function collectLeaf(type: string, body: unknown, out: Wanted[]): void {
  switch (type) {
    case 'term':
    case 'terms':
      for (const [field, p] of fieldAndParams(body, 'value')) {
        if (field === 'value' || field === 'boost') continue
        const values = (type === 'terms' ? [p.value ?? []] : [p.value ?? p.term]).flat().map((v) => String(v))
        const ci = p.case_insensitive === true || (isObject(body) && body.case_insensitive === true)
        const set = new Set(ci ? values.map((v) => v.toLowerCase()) : values)
        const test = (v: string) => set.has(ci ? v.toLowerCase() : v)
        out.push({ field, token: test, value: test })
      }
      break
    case 'prefix':
      for (const [field, p] of fieldAndParams(body, 'value')) {
        const pre = String(p.value ?? p.prefix ?? '')
        const ci = p.case_insensitive === true
        const test = (v: string) => (ci ? v.toLowerCase().startsWith(pre.toLowerCase()) : v.startsWith(pre))
        out.push({ field, token: test, value: test })
      }
      break
    case 'wildcard':
      for (const [field, p] of fieldAndParams(body, 'value')) {
        const m = wildcardMatcher(String(p.value ?? p.wildcard ?? ''), p.case_insensitive === true)
        out.push({ field, token: m, value: m })
      }
      break
    case 'regexp':
      for (const [field, p] of fieldAndParams(body, 'value')) {
        try {
          const m = luceneRegExp(String(p.value ?? ''), typeof p.flags === 'string' ? p.flags : 'ALL', p.case_insensitive === true)
          out.push({ field, token: (t) => m.test(t), value: (v) => m.test(v) })
        } catch {
          // the search itself has already refused a bad pattern
        }
      }
      break
    case 'fuzzy':
      for (const [field, p] of fieldAndParams(body, 'value')) {
        const v = String(p.value ?? '')
        const max = fuzzyEdits(p.fuzziness, v)
        const test = (t: string) => editDistanceWithin(t, v, max)
        out.push({ field, token: test, value: test })
      }
      break
    case 'match':
    case 'match_phrase':
    case 'match_phrase_prefix':
    case 'match_bool_prefix':
      for (const [field, p] of fieldAndParams(body, 'query')) {
        const mode =
          type === 'match' ? 'match' : type === 'match_phrase' ? 'phrase' : type === 'match_phrase_prefix' ? 'phrase_prefix' : 'bool_prefix'
        out.push(...textWanted(field, String(p.query ?? ''), mode, p))
      }
      break
    case 'multi_match': {
      if (!isObject(body)) break
      const kind = String(body.type ?? 'best_fields')
      const mode =
        kind === 'phrase' ? 'phrase' : kind === 'phrase_prefix' ? 'phrase_prefix' : kind === 'bool_prefix' ? 'bool_prefix' : 'match'
      const fields = body.fields === undefined ? ['*'] : [body.fields].flat().map((f) => String(f).replace(/\^[\d.]+$/, ''))
      for (const f of fields) out.push(...textWanted(f, String(body.query ?? ''), mode, body))
      break
    }
  }
}

// --- fragments

interface Span {
  start: number
  end: number
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"'/]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#x27;', '/': '&#x2F;' })[c]!)
}

function render(text: string, from: number, to: number, spans: Span[], o: FieldOptions, html: boolean): string {
  let out = ''
  let at = from
  const enc = (s: string) => (html ? escapeHtml(s) : s)
  spans.forEach((s, i) => {
    if (s.start < from || s.end > to) return
    out +=
      enc(text.slice(at, s.start)) + o.preTags[i % o.preTags.length] + enc(text.slice(s.start, s.end)) + o.postTags[i % o.postTags.length]
    at = s.end
  })
  // one tag pair per term (the styled schema numbers terms, not occurrences): keep it simple, first tags
  return out + enc(text.slice(at, to))
}

function renderSpans(text: string, from: number, to: number, spans: Span[], o: FieldOptions, html: boolean): string {
  const single: FieldOptions = { ...o, preTags: [o.preTags[0]], postTags: [o.postTags[0]] }
  return render(text, from, to, spans, single, html)
}

const SENTENCE_END = /[.!?]+["')\]]*(\s+|$)/g

/** Sentence boundaries as Java's sentence BreakIterator puts them: 0, each sentence's start (after the blanks ending the one before), the end. */
function sentenceBoundaries(text: string): number[] {
  const out = [0]
  for (const m of text.matchAll(SENTENCE_END)) {
    const b = m.index + m[0].length
    if (b > out[out.length - 1] && b < text.length) out.push(b)
  }
  if (text.length > 0) out.push(text.length)
  return out
}

/** Word boundaries as Java's word BreakIterator puts them: around each word, each blank run and each other character. */
function wordBoundaries(text: string): number[] {
  const set = new Set<number>([0, text.length])
  for (const t of standardTokens(text)) {
    set.add(t.start)
    set.add(t.end)
  }
  for (const m of text.matchAll(/\s+|[^\s\p{L}\p{N}\p{M}_]/gu)) {
    set.add(m.index)
    set.add(m.index + m[0].length)
  }
  return [...set].sort((a, b) => a - b)
}

/** The largest boundary below `x` (0 when none). */
function precedingOf(bounds: number[], x: number): number {
  let lo = 0
  let hi = bounds.length - 1
  let best = 0
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (bounds[mid] < x) {
      best = bounds[mid]
      lo = mid + 1
    } else hi = mid - 1
  }
  return best
}

/** The smallest boundary above `x` (the end when none). */
function followingOf(bounds: number[], x: number): number {
  let lo = 0
  let hi = bounds.length - 1
  let best = bounds[bounds.length - 1] ?? 0
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (bounds[mid] > x) {
      best = bounds[mid]
      hi = mid - 1
    } else lo = mid + 1
  }
  return best
}

interface Passage {
  start: number
  end: number
  spans: Span[]
}

/**
 * The unified highlighter's passages: Lucene's FieldHighlighter walking the matches in order with
 * OpenSearch's BoundedBreakIteratorScanner (sentences grouped up to `size`, a longer one cut at word
 * boundaries around the match); `size` 0 takes whole sentences.
 */
function unifiedPassages(text: string, spans: Span[], size: number): Passage[] {
  const sentences = sentenceBoundaries(text)
  const words = size > 0 ? wordBoundaries(text) : []
  const out: Passage[] = []
  let windowStart = -1
  let windowEnd = -1
  let innerStart = -1
  let innerEnd = 0
  let current: Passage | undefined
  for (const span of spans) {
    if (current && span.start < current.end) {
      current.spans.push(span)
      continue
    }
    const offset = span.start + 1
    if (size <= 0) {
      current = { start: precedingOf(sentences, offset), end: followingOf(sentences, span.start), spans: [span] }
      out.push(current)
      continue
    }
    if (offset > windowStart && offset < windowEnd) {
      innerStart = innerEnd
      innerEnd = windowEnd
    } else {
      windowStart = innerStart = precedingOf(sentences, offset)
      windowEnd = innerEnd = followingOf(sentences, offset - 1)
      while (innerEnd - innerStart < size) {
        const next = followingOf(sentences, innerEnd)
        if (next <= innerEnd || next - innerStart > size) break
        windowEnd = innerEnd = next
      }
    }
    if (innerEnd - innerStart > size) {
      if (offset - size > innerStart) innerStart = Math.max(innerStart, precedingOf(words, offset - size))
      const remaining = Math.max(0, size - (offset - innerStart))
      if (offset + remaining < windowEnd) innerEnd = Math.min(windowEnd, followingOf(words, offset + remaining))
    }
    current = { start: innerStart, end: Math.max(innerEnd, span.end), spans: [span] }
    out.push(current)
  }
  return out
}

/** Lucene's passage score (BM25 over the passage's distinct terms, earlier passages slightly ahead). */
function passageScore(text: string, p: Passage): number {
  const tf = new Map<string, number>()
  for (const s of p.spans) {
    const t = text.slice(s.start, s.end).toLowerCase()
    tf.set(t, (tf.get(t) ?? 0) + 1)
  }
  const k1 = 1.2
  const b = 0.75
  const len = p.end - p.start
  let score = 0
  for (const n of tf.values()) score += (n * (k1 + 1)) / (n + k1 * (1 - b + (b * len) / 87))
  return score * (1 + 1 / Math.log(87 + p.start))
}

interface Fragment {
  text: string
  score: number
  order: number
}

function fragmentsOf(text: string, spans: Span[], o: FieldOptions, html: boolean, order: number): Fragment[] {
  if (o.type === 'plain') {
    if (o.fragments === 0 || text.length <= o.fragmentSize || o.fragmentSize <= 0)
      return [{ text: renderSpans(text, 0, text.length, spans, o, html), score: spans.length, order }]
    // Fixed-size fragments at word boundaries, as the plain highlighter's span fragmenter cuts them.
    const out: Fragment[] = []
    let start = 0
    while (start < text.length) {
      let end = Math.min(text.length, start + Math.max(1, o.fragmentSize))
      while (end < text.length && /\S/.test(text[end])) end++
      const inside = spans.filter((s) => s.start >= start && s.end <= end)
      if (inside.length > 0)
        out.push({ text: renderSpans(text, start, end, inside, o, html).trim(), score: inside.length, order: order + start })
      start = end
    }
    return out
  }
  // number_of_fragments 0 highlights the whole value; passages are trimmed, as OpenSearch's formatter does.
  if (o.fragments === 0 || text.length <= o.fragmentSize)
    return [{ text: renderSpans(text, 0, text.length, spans, o, html).trim(), score: spans.length, order }]
  return unifiedPassages(text, spans, o.fragmentSize).map((p) => ({
    text: renderSpans(text, p.start, p.end, p.spans, o, html).trim(),
    score: passageScore(text, p),
    order: order + p.start,
  }))
}

// --- per hit

export interface IndexHighlightInfo {
  types: ReadonlyMap<string, FieldSpec>
  /** Fields indexed with offsets (`index_options: offsets`, term vectors with offsets): no analysis limit for unified. */
  offsets: ReadonlySet<string>
  termVectors: ReadonlySet<string>
  maxAnalyzedOffset: number
}

export function indexHighlightInfo(mappings: Mappings, settings: Record<string, unknown> | undefined): IndexHighlightInfo {
  const offsets = new Set<string>()
  const termVectors = new Set<string>()
  const walk = (props: Record<string, FieldMapping> | undefined, prefix: string) => {
    for (const [name, def] of Object.entries(props ?? {})) {
      const path = prefix ? `${prefix}.${name}` : name
      const note = (p: string, raw: FieldMapping) => {
        const d = raw as Record<string, unknown>
        if (d.index_options === 'offsets') offsets.add(p)
        if (d.term_vector === 'with_positions_offsets' || d.term_vector === 'with_positions_offsets_payloads') {
          offsets.add(p)
          termVectors.add(p)
        }
      }
      note(path, def)
      for (const [sub, sdef] of Object.entries(def.fields ?? {})) note(`${path}.${sub}`, sdef)
      walk(def.properties, path)
    }
  }
  walk(mappings.properties, '')
  const h = isObject(settings?.highlight) ? settings.highlight : undefined
  const raw = h?.max_analyzed_offset ?? settings?.['highlight.max_analyzed_offset']
  const max = raw === undefined ? 1_000_000 : Number(raw)
  return { types: fieldSpecs(mappings), offsets, termVectors, maxAnalyzedOffset: Number.isFinite(max) ? max : 1_000_000 }
}

const HIGHLIGHTABLE = new Set(['text', 'match_only_text', 'keyword', 'constant_keyword', 'wildcard'])

function fieldMatcher(pattern: string): (name: string) => boolean {
  if (pattern === '*') return () => true
  if (!pattern.includes('*')) return (n) => n === pattern
  const m = wildcardMatcher(pattern)
  return m
}

/** The `highlight` object of one hit, or undefined when no field has a fragment. */
export function highlightHit(
  hit: SearchHit,
  spec: HighlightSpec,
  info: IndexHighlightInfo,
  query: unknown,
): Record<string, string[]> | undefined {
  const source = (hit._source ?? {}) as Record<string, unknown>
  const result: Record<string, string[]> = {}
  const wantedCache = new Map<unknown, Wanted[]>()
  const wantedFor = (q: unknown) => {
    let w = wantedCache.get(q)
    if (!w) {
      w = []
      collect(q, info.types, w)
      wantedCache.set(q, w)
    }
    return w
  }
  // The dotted paths the source holds values at: a wildcard over a large mapping only visits those.
  const present = leafPaths(source)
  for (const { pattern, options: o } of spec.fields) {
    const wildcard = pattern.includes('*')
    const names = wildcard ? [...info.types.keys()].filter(fieldMatcher(pattern)) : [pattern]
    const wanted = wantedFor(o.query ?? query).map((w) => ({ ...w, fields: fieldMatcher(w.field) }))
    for (const name of names) {
      if (Object.hasOwn(result, name)) continue
      const ft = info.types.get(name)
      if (!ft) continue
      if (wildcard && !present.has(ft.path ?? name)) continue
      if (!HIGHLIGHTABLE.has(ft.type)) {
        if (wildcard) continue
        throw badRequest(`The field [${name}] of type [${ft.type}] does not support highlighting`, 'illegal_argument_exception')
      }
      if (o.type === 'fvh' && !info.termVectors.has(name)) {
        if (wildcard) continue
        throw badRequest(
          `the field [${name}] should be indexed with term vector with position offsets to be used with fast vector highlighter`,
          'illegal_argument_exception',
        )
      }
      const sourceFields = [name, ...o.matchedFields]
      const relevant = o.requireFieldMatch ? wanted.filter((w) => sourceFields.some((f) => w.fields(f))) : wanted
      const values = fieldPath(ft.path ?? name)
        .collect(source)
        .filter((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
        .map(String)
      if (values.length === 0) continue
      const frags: Fragment[] = []
      const text = ft.type === 'text' || ft.type === 'match_only_text'
      let order = 0
      for (let value of values) {
        let spans: Span[] = []
        if (!text) {
          if (ft.ignore_above !== undefined && value.length > ft.ignore_above) continue
          if (relevant.some((w) => w.value?.(value))) spans = [{ start: 0, end: value.length }]
        } else {
          let limit = value.length
          const unlimited = o.type === 'unified' && info.offsets.has(name)
          if (!unlimited && value.length > info.maxAnalyzedOffset) {
            if (o.maxAnalyzerOffset === undefined)
              throw badRequest(
                `The length of [${name}] field of [${hit._id}] doc of [${hit._index}] index has exceeded [${info.maxAnalyzedOffset}] - maximum allowed to be analyzed for highlighting. This maximum can be set by changing the [index.highlight.max_analyzed_offset] index level setting. For large texts, indexing with offsets or term vectors is recommended!`,
                'illegal_argument_exception',
              )
          }
          if (o.maxAnalyzerOffset !== undefined && o.maxAnalyzerOffset >= 0) {
            limit = Math.min(limit, o.maxAnalyzerOffset)
            if (o.type === 'plain') value = value.slice(0, limit)
          }
          spans = textSpans(value, limit, relevant)
        }
        if (spans.length > 0) frags.push(...fragmentsOf(value, spans, o, spec.html, order))
        order += value.length + 1
      }
      // The best number_of_fragments passages, then in the value's order unless order is score.
      let chosen = [...frags].sort((a, b) => b.score - a.score || a.order - b.order)
      if (o.fragments > 0) chosen = chosen.slice(0, o.fragments)
      if (o.order !== 'score') chosen.sort((a, b) => a.order - b.order)
      if (chosen.length > 0)
        setField(
          result,
          name,
          chosen.map((f) => f.text),
        )
      else if (o.noMatchSize > 0) {
        // The first value up to the word boundary following no_match_size (OpenSearch's summary passage).
        const first = values[0]
        const end = o.noMatchSize < first.length ? followingOf(wordBoundaries(first), o.noMatchSize) : first.length
        const snippet = first.slice(0, end).trim()
        setField(result, name, [spec.html ? escapeHtml(snippet) : snippet])
      }
    }
  }
  return Object.keys(result).length > 0 ? result : undefined
}

function leafPaths(source: Record<string, unknown>): Set<string> {
  const out = new Set<string>()
  const walk = (v: unknown, prefix: string, depth: number) => {
    if (depth > 100) return
    if (Array.isArray(v)) for (const x of v) walk(x, prefix, depth + 1)
    else if (isObject(v)) for (const [k, x] of Object.entries(v)) walk(x, prefix ? `${prefix}.${k}` : k, depth + 1)
    else if (v !== null && v !== undefined) out.add(prefix)
  }
  walk(source, '', 0)
  return out
}

function setField(out: Record<string, string[]>, name: string, v: string[]): void {
  Object.defineProperty(out, name, { value: v, enumerable: true, writable: true, configurable: true })
}

function textSpans(value: string, limit: number, wanted: Array<Wanted & { fields: (n: string) => boolean }>): Span[] {
  const tokens = analyzeWithOffsets(value).filter((t) => t.end <= limit)
  const marked = new Array<boolean>(tokens.length).fill(false)
  for (const w of wanted) {
    if (w.token) tokens.forEach((t, i) => (marked[i] ||= w.token!(t.token)))
    if (w.phrase) {
      const n = w.phrase.length
      for (let i = 0; i + n <= tokens.length; i++) {
        let ok = true
        for (let j = 0; j < n && ok; j++) {
          const last = j === n - 1
          ok = w.prefix && last ? tokens[i + j].token.startsWith(w.phrase[j]) : tokens[i + j].token === w.phrase[j]
        }
        if (ok) for (let j = 0; j < n; j++) marked[i + j] = true
      }
    }
  }
  return tokens.filter((_, i) => marked[i]).map((t) => ({ start: t.start, end: t.end }))
}

/**
 * Sets `highlight` on each hit that has fragments; each index's mapping (from `mappings`, or read)
 * and its `index.highlight.max_analyzed_offset` are read once.
 */
export async function highlightHits(
  ctx: RequestContext,
  hits: SearchHit[],
  spec: HighlightSpec,
  query: unknown,
  mappings?: ReadonlyMap<string, Mappings>,
): Promise<void> {
  const infos = new Map<string, IndexHighlightInfo>()
  for (const hit of hits) {
    let info = infos.get(hit._index)
    if (!info) {
      const mapping =
        mappings?.get(hit._index) ??
        (await ctx.store.getMapping({ index: hit._index, expand_wildcards: 'all' }))[hit._index]?.mappings ??
        {}
      const settings = await ctx.store.getSettings({ index: hit._index, expand_wildcards: 'all' })
      info = indexHighlightInfo(mapping, settings[hit._index]?.settings.index)
      infos.set(hit._index, info)
    }
    const h = highlightHit(hit, spec, info, query)
    if (h) (hit as SearchHit & { highlight?: unknown }).highlight = h
  }
}

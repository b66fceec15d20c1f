/**
 * The built-in analyzers (`standard`, `simple`, `whitespace`, `keyword`, `stop`), their tokenizers
 * and token filters, and those an index's `analysis` settings build of them: what `_analyze`
 * answers with (indexer/analyze.ts), and what a full-text query's `analyzer` parameter analyses
 * its text with (`queryTerms`). Documents' text fields are indexed with `standard` (analysis.ts),
 * so another analyzer changes only the query's terms, as a search analyzer does in OpenSearch.
 */
import { IllegalArgument } from '../errors'
import { analyze, standardTokens } from './analysis'
import { isObject } from './doc'

export interface Token {
  token: string
  start_offset: number
  end_offset: number
  type: string
  position: number
}

export type Tokenizer = (text: string) => Array<{ token: string; start: number; end: number; type: string }>
export type Filter = (tokens: Token[]) => Token[]

export const ENGLISH_STOP = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(
    ' ',
  ),
)

function regexTokenizer(re: RegExp, type: string, lower = false): Tokenizer {
  return (text) => {
    const out: ReturnType<Tokenizer> = []
    for (const m of text.matchAll(re))
      out.push({ token: lower ? m[0].toLowerCase() : m[0], start: m.index, end: m.index + m[0].length, type })
    return out
  }
}

export const TOKENIZERS: Record<string, Tokenizer> = {
  standard: (text) => standardTokens(text).map((t) => ({ ...t, type: /^\p{N}+$/u.test(t.token) ? '<NUM>' : '<ALPHANUM>' })),
  letter: regexTokenizer(/\p{L}+/gu, 'word'),
  lowercase: regexTokenizer(/\p{L}+/gu, 'word', true),
  whitespace: regexTokenizer(/\S+/g, 'word'),
  keyword: (text) => (text === '' ? [] : [{ token: text, start: 0, end: text.length, type: 'word' }]),
}

export function stopFilter(words: Set<string>, ignoreCase = false): Filter {
  return (tokens) => tokens.filter((t) => !words.has(ignoreCase ? t.token.toLowerCase() : t.token))
}

export const FILTERS: Record<string, Filter> = {
  lowercase: (ts) => ts.map((t) => ({ ...t, token: t.token.toLowerCase() })),
  uppercase: (ts) => ts.map((t) => ({ ...t, token: t.token.toUpperCase() })),
  asciifolding: (ts) => ts.map((t) => ({ ...t, token: t.token.normalize('NFD').replace(/\p{M}+/gu, '') })),
  stop: stopFilter(ENGLISH_STOP),
  trim: (ts) => ts.map((t) => ({ ...t, token: t.token.trim() })),
  reverse: (ts) => ts.map((t) => ({ ...t, token: [...t.token].reverse().join('') })),
  unique: (ts) => {
    const seen = new Set<string>()
    return ts.filter((t) => !seen.has(t.token) && (seen.add(t.token), true))
  },
}

export interface Analyzer {
  name: string
  tokenizer: Tokenizer
  filters: Filter[]
}

export const ANALYZERS: Record<string, () => Analyzer> = {
  standard: () => ({ name: 'standard', tokenizer: TOKENIZERS.standard, filters: [FILTERS.lowercase] }),
  simple: () => ({ name: 'simple', tokenizer: TOKENIZERS.lowercase, filters: [] }),
  whitespace: () => ({ name: 'whitespace', tokenizer: TOKENIZERS.whitespace, filters: [] }),
  keyword: () => ({ name: 'keyword', tokenizer: TOKENIZERS.keyword, filters: [] }),
  stop: () => ({ name: 'stop', tokenizer: TOKENIZERS.lowercase, filters: [FILTERS.stop] }),
}

function tokenizerOf(spec: unknown): Tokenizer {
  if (typeof spec === 'string') {
    const t = TOKENIZERS[spec]
    if (!t) throw new IllegalArgument(`failed to find global tokenizer under [${spec}]`)
    return t
  }
  if (isObject(spec) && typeof spec.type === 'string') return tokenizerOf(spec.type)
  throw new IllegalArgument('[tokenizer] must be a name or an object with a [type]')
}

function filterOf(spec: unknown): Filter {
  if (typeof spec === 'string') {
    const f = FILTERS[spec]
    if (!f) throw new IllegalArgument(`failed to find global filter under [${spec}]`)
    return f
  }
  if (isObject(spec) && typeof spec.type === 'string') {
    if (spec.type === 'stop') {
      const words = spec.stopwords
      const list =
        words === undefined || words === '_english_'
          ? ENGLISH_STOP
          : words === '_none_'
            ? new Set<string>()
            : new Set([words].flat().map(String))
      return stopFilter(list, spec.ignore_case === true)
    }
    if (spec.type === 'length') {
      const min = Number(spec.min ?? 0)
      const max = Number(spec.max ?? Number.MAX_SAFE_INTEGER)
      return (ts) => ts.filter((t) => t.token.length >= min && t.token.length <= max)
    }
    return filterOf(spec.type)
  }
  throw new IllegalArgument('[filter] must be a name or an object with a [type]')
}

export function analyzerOf(name: string): Analyzer {
  const a = ANALYZERS[name]
  if (!a) throw new IllegalArgument(`failed to find global analyzer [${name}]`)
  return a()
}

/** The analysis components an index's settings define (`index.analysis.{analyzer,tokenizer,filter}`), over the built-in ones. */
export function indexAnalysis(analysis: unknown) {
  const section = (k: string): Record<string, unknown> => {
    const v = isObject(analysis) ? analysis[k] : undefined
    return isObject(v) ? v : {}
  }
  const tokenizer = (spec: unknown): Tokenizer =>
    typeof spec === 'string' && isObject(section('tokenizer')[spec]) ? tokenizerOf(section('tokenizer')[spec]) : tokenizerOf(spec)
  const filter = (spec: unknown): Filter =>
    typeof spec === 'string' && isObject(section('filter')[spec]) ? filterOf(section('filter')[spec]) : filterOf(spec)
  const analyzer = (name: string): Analyzer | undefined => {
    const d = section('analyzer')[name]
    if (!isObject(d)) return undefined
    if (d.type === 'custom' || d.tokenizer !== undefined)
      return { name, tokenizer: tokenizer(d.tokenizer ?? 'standard'), filters: [d.filter ?? []].flat().map(filter) }
    const base = analyzerOf(String(d.type ?? 'standard'))
    const stop = d.stopwords === undefined ? [] : [filterOf({ type: 'stop', stopwords: d.stopwords })]
    return { ...base, name, filters: [...base.filters, ...stop] }
  }
  return { tokenizer, filter, analyzer }
}

/**
 * The analyzer a full-text query names: one the index's `analysis` settings define, else a
 * built-in one; undefined for any other name.
 */
export function namedAnalyzer(name: string, analysis?: unknown): Analyzer | undefined {
  const own = analysis === undefined ? undefined : indexAnalysis(analysis).analyzer(name)
  return own ?? (Object.hasOwn(ANALYZERS, name) ? ANALYZERS[name]() : undefined)
}

/**
 * The terms a full-text query's text is analysed into with the `analyzer` it names (see
 * namedAnalyzer; `standard` when it names none, or one neither defines: a caller's search is
 * refused such a name before, see query-guards.ts's analyzerRefusal).
 */
export function queryTerms(analyzer: unknown, analysis?: unknown): (text: string) => string[] {
  if (analyzer === undefined || analyzer === 'standard' || typeof analyzer !== 'string') return analyze
  const named = namedAnalyzer(analyzer, analysis)
  if (!named) return analyze
  const { tokenizer, filters } = named
  return (text) => {
    let tokens: Token[] = tokenizer(text).map((t, i) => ({
      token: t.token,
      start_offset: t.start,
      end_offset: t.end,
      type: t.type,
      position: i,
    }))
    for (const f of filters) tokens = f(tokens)
    return tokens.map((t) => t.token)
  }
}

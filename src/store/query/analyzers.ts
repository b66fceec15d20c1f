/**
 * The built-in analyzers (`standard`, `simple`, `whitespace`, `keyword`, `stop`), their tokenizers
 * and token filters: what `_analyze` answers with (indexer/analyze.ts), and what a full-text
 * query's `analyzer` parameter analyses its text with (`queryTerms`). Documents' text fields are
 * indexed with `standard` (analysis.ts), so another analyzer changes only the query's terms, as
 * a search analyzer does in OpenSearch.
 */
import { analyze, standardTokens } from './analysis'

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

/**
 * The terms a full-text query's text is analysed into with the `analyzer` it names: `standard`
 * unless it names another built-in one (a name an index's settings define is analysed as `standard`:
 * the store does not build an index's own analyzers).
 */
export function queryTerms(analyzer: unknown): (text: string) => string[] {
  if (analyzer === undefined || analyzer === 'standard' || typeof analyzer !== 'string') return analyze
  const make = Object.hasOwn(ANALYZERS, analyzer) ? ANALYZERS[analyzer] : undefined
  if (!make) return analyze
  const { tokenizer, filters } = make()
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

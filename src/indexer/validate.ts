/**
 * `_validate/query` (`GET|POST /_validate/query`, `/<index>/_validate/query`, body `{query}` or
 * `q=`): the query is compiled against each index's mapping (nothing is searched) and answered as
 * OpenSearch does: `{_shards, valid}`, with `explain=true` one explanation per index (a Lucene-like
 * rendering of the query); a query that does not parse is `{valid: false}` (`error` with explain).
 */
import { analyze } from '../store/query/analysis'
import { compile, expandFieldPattern } from '../store/query/compile'
import { type QueryableField, translateQueryString } from '../store/query/query-string'
import { isObject } from '../store/query/doc'
import { checkJsonDepth } from '../store/query/limits'
import { fieldSpecs } from '../store/embedded/mapping'
import { badRequest, type RequestContext } from './context'
import { hasMoreLikeThis } from './more-like-this'
import type { IndexRouter } from './router'
import { uriQuery } from './search'

export const VALIDATE_ACTION = 'indices:admin/validate/query'

function fieldValue(body: unknown, key: string): [string, unknown] {
  if (!isObject(body)) return ['', body]
  const [field, v] = Object.entries(body).find(([k]) => k !== 'boost' && k !== '_name') ?? ['', undefined]
  return [field, isObject(v) ? (v[key] ?? v.value) : v]
}

/** A Lucene-like rendering of common queries (what OpenSearch's explanation shows), JSON otherwise. */
export function explainQuery(q: unknown, text: (field: string) => boolean, expand?: (pattern: string) => QueryableField[]): string {
  if (!isObject(q)) return String(q)
  const [type, body] = Object.entries(q)[0] ?? ['match_all', {}]
  switch (type) {
    case 'match_all':
      return '*:*'
    case 'match_none':
      return 'MatchNoDocsQuery("")'
    case 'term': {
      const [f, v] = fieldValue(body, 'value')
      return `${f}:${String(v)}`
    }
    case 'terms': {
      const [f, v] = fieldValue(body, 'value')
      return `${f}:(${[v ?? []].flat().map(String).join(' ')})`
    }
    case 'match': {
      const [f, v] = fieldValue(body, 'query')
      if (!text(f)) return `${f}:${String(v)}`
      const tokens = analyze(String(v))
      return tokens.length === 1 ? `${f}:${tokens[0]}` : tokens.map((t) => `${f}:${t}`).join(' ')
    }
    case 'match_phrase': {
      const [f, v] = fieldValue(body, 'query')
      return `${f}:"${analyze(String(v)).join(' ')}"`
    }
    case 'prefix': {
      const [f, v] = fieldValue(body, 'value')
      return `${f}:${String(v)}*`
    }
    case 'wildcard': {
      const [f, v] = fieldValue(body, 'value')
      return `${f}:${String(v)}`
    }
    case 'exists':
      return `FieldExistsQuery [field=${isObject(body) ? String(body.field) : ''}]`
    case 'range': {
      if (!isObject(body)) break
      const [f, b] = Object.entries(body)[0] ?? ['', {}]
      if (!isObject(b)) break
      const lo = b.gte ?? b.gt ?? b.from
      const hi = b.lte ?? b.lt ?? b.to
      return `${f}:${b.gt !== undefined ? '{' : '['}${lo ?? '*'} TO ${hi ?? '*'}${b.lt !== undefined ? '}' : ']'}`
    }
    case 'bool': {
      if (!isObject(body)) break
      const parts: string[] = []
      const wrap = (x: unknown) => {
        const s = explainQuery(x, text, expand)
        return isObject(x) && 'bool' in x ? `(${s})` : s
      }
      for (const x of [body.must ?? []].flat()) parts.push(`+${wrap(x)}`)
      for (const x of [body.filter ?? []].flat()) parts.push(`#${wrap(x)}`)
      for (const x of [body.should ?? []].flat()) parts.push(wrap(x))
      for (const x of [body.must_not ?? []].flat()) parts.push(`-${wrap(x)}`)
      return parts.join(' ')
    }
    case 'constant_score':
      return `ConstantScore(${isObject(body) ? explainQuery(body.filter, text, expand) : ''})`
    case 'query_string':
    case 'simple_query_string':
      if (expand) return explainQuery(translateQueryString(body, type === 'simple_query_string', expand), text, expand)
      break
    default:
      break
  }
  return JSON.stringify(q)
}

function withoutMoreLikeThis(q: unknown): unknown {
  if (Array.isArray(q)) return q.map(withoutMoreLikeThis)
  if (!isObject(q)) return q
  if (Object.hasOwn(q, 'more_like_this')) {
    const m = q.more_like_this
    if (!isObject(m) || (m.like === undefined && m.like_text === undefined && m.ids === undefined && m.docs === undefined))
      throw new Error("more_like_this requires 'like' to be specified")
    return { match_all: {} }
  }
  return Object.fromEntries(Object.entries(q).map(([k, v]) => [k, withoutMoreLikeThis(v)]))
}

const KEYS = new Set(['query'])

async function validateQuery(ctx: RequestContext) {
  const expression = ctx.indexExpression()
  const body = (await ctx.json()) ?? {}
  for (const k of Object.keys(body)) if (!KEYS.has(k)) throw badRequest(`request does not support [${k}]`, 'parsing_exception')
  checkJsonDepth(body)
  const query = uriQuery(ctx) ?? body.query ?? { match_all: {} }
  const explain = ctx.flag('explain', false) === true
  const indices = await ctx.authorized(VALIDATE_ACTION, expression, ctx.resolveOptions())
  const mappings = indices.length > 0 ? await ctx.store.getMapping({ index: indices, expand_wildcards: 'all' }) : {}
  const shards = { total: indices.length, successful: indices.length, failed: 0 }
  const explanations: Array<Record<string, unknown>> = []
  try {
    if (!isObject(query)) throw new Error('[query] must be an object')
    for (const index of indices) {
      const types = fieldSpecs(mappings[index]?.mappings ?? {})
      // more_like_this is rewritten at search time (it reads the index): here it only has to be well formed.
      compile(hasMoreLikeThis(query) ? withoutMoreLikeThis(query) : query, types)
      const text = (f: string) => ['text', 'match_only_text'].includes(types.get(f)?.type ?? '')
      explanations.push({ index, valid: true, explanation: explainQuery(query, text, (p) => expandFieldPattern(types, p)) })
    }
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e)
    return explain ? { valid: false, error: message } : { valid: false }
  }
  return { _shards: shards, valid: true, ...(explain ? { explanations } : {}) }
}

export function validateRoutes(r: IndexRouter): void {
  r.on(['GET', 'POST'], ['/_validate/query', '/:index/_validate/query'], validateQuery)
}

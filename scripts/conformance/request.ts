/**
 * Turns a `do` step's API call into HTTP with the API's JSON spec, the way the README of the
 * suite describes the Java harness (deterministic where upstream picks randomly).
 */
import type { ApiSpec } from './suite'

export class RunnerError extends Error {}

export interface HttpCall {
  method: string
  path: string
  query: URLSearchParams
  body?: string
  headers: Record<string, string>
}

/** Scalars as text, lists joined with commas. */
export function paramText(value: unknown): string {
  if (Array.isArray(value)) return value.map(paramText).join(',')
  if (value === null || value === undefined) return ''
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

/** Percent-encodes one path part; commas and `*` stay literal as upstream sends them. */
export function encodePart(text: string): string {
  return encodeURIComponent(text).replace(/%2C/gi, ',').replace(/%2A/gi, '*')
}

/** Splits a string body into the JSON values it holds (NDJSON or concatenated JSON). */
export function parseJsonStream(text: string): unknown[] | undefined {
  const out: unknown[] = []
  let i = 0
  const n = text.length
  while (i < n) {
    while (i < n && /\s/.test(text[i])) i++
    if (i >= n) break
    const start = i
    let depth = 0
    let inString = false
    for (; i < n; i++) {
      const c = text[i]
      if (inString) {
        if (c === '\\') i++
        else if (c === '"') inString = false
        continue
      }
      if (c === '"') inString = true
      else if (c === '{' || c === '[') depth++
      else if (c === '}' || c === ']') {
        depth--
        if (depth === 0) {
          i++
          break
        }
      } else if (depth === 0 && /\s/.test(c)) break
    }
    try {
      out.push(JSON.parse(text.slice(start, i)))
    } catch {
      return undefined
    }
  }
  return out
}

function bodies(body: unknown): unknown[] {
  if (typeof body === 'string') return parseJsonStream(body) ?? [body]
  if (Array.isArray(body)) {
    return body.flatMap((b) => (typeof b === 'string' ? (parseJsonStream(b) ?? [b]) : [b]))
  }
  return [body]
}

function serialise(values: unknown[], bulk: boolean): string {
  const text = (v: unknown) => (typeof v === 'string' && parseJsonStream(v) === undefined ? v : JSON.stringify(v))
  if (values.length === 1 && !bulk) return text(values[0])
  return values.map((v) => text(v) + '\n').join('')
}

export function buildCall(
  api: ApiSpec,
  common: Set<string>,
  rawParams: Record<string, unknown>,
  headers: Record<string, string>,
): HttpCall {
  const params: Record<string, unknown> = { ...rawParams }
  const body = params.body
  delete params.body
  delete params.ignore

  const given = new Set(Object.keys(params))
  const candidates = api.paths.filter((p) => p.parts.every((part) => given.has(part)))
  if (candidates.length === 0) throw new RunnerError(`${api.name}: no path fits parameters [${[...given].join(', ')}]`)
  const most = Math.max(...candidates.map((p) => p.parts.length))
  const chosen = candidates.find((p) => p.parts.length === most)!

  let path = chosen.path
  for (const part of chosen.parts) {
    path = path.replace(`{${part}}`, encodePart(paramText(params[part])))
    delete params[part]
  }

  const query = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) {
    if (!api.params.has(key) && !common.has(key)) throw new RunnerError(`${api.name}: parameter [${key}] is not in the API spec`)
    query.set(key, paramText(value))
  }

  const out: HttpCall = { method: chosen.methods[0], path, query, headers: { ...headers } }
  if (body !== undefined && body !== null) {
    if (!api.body) throw new RunnerError(`${api.name}: the API takes no body`)
    out.body = serialise(bodies(body), api.body.serialize === 'bulk')
    // fetch cannot send a body with GET; OpenSearch accepts POST wherever GET takes a body.
    if (out.method === 'GET' || out.method === 'HEAD') out.method = chosen.methods.find((m) => m !== 'GET' && m !== 'HEAD') ?? 'POST'
    if (!Object.keys(out.headers).some((h) => h.toLowerCase() === 'content-type')) out.headers['Content-Type'] = 'application/json'
  } else if (api.body?.required) {
    throw new RunnerError(`${api.name}: the API requires a body`)
  }
  return out
}

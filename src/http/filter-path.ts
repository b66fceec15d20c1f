/**
 * OpenSearch's response filtering (`?filter_path=`), applied once to every JSON answer: a
 * comma-separated list of dotted paths, `*` matching within one name, `**` any number of levels,
 * a leading `-` excluding. Exclusions apply first, then inclusions. Arrays are transparent (each
 * element is filtered with the same paths) and objects or arrays left empty are dropped, as the
 * platform's filtering generator writes an object only once something in it is kept.
 */
import { isObject } from '../json'
import { jsonBody } from './json-body'

type Path = readonly string[]

interface Filters {
  include: Path[]
  exclude: Path[]
}

export function parseFilterPath(value: string): Filters | undefined {
  const include: Path[] = []
  const exclude: Path[] = []
  for (const raw of value.split(',')) {
    const f = raw.trim()
    if (f === '') continue
    if (f.startsWith('-')) exclude.push(f.slice(1).split('.'))
    else include.push(f.split('.'))
  }
  return include.length + exclude.length > 0 ? { include, exclude } : undefined
}

const globs = new Map<string, RegExp>()
function nameMatches(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name
  let re = globs.get(pattern)
  if (!re) {
    re = new RegExp(
      `^${pattern
        .split('*')
        .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
      's',
    )
    globs.set(pattern, re)
  }
  return re.test(name)
}

/** The paths that continue below `name`, and whether one of them ends at it (a full match). */
function step(paths: Path[], name: string): { rest: Path[]; whole: boolean } {
  const rest: Path[] = []
  let whole = false
  const visit = (p: Path) => {
    if (p.length === 0) return
    if (p[0] === '**') {
      rest.push(p) // `**` goes on matching deeper levels,
      if (p.length === 1) whole = true
      else visit(p.slice(1)) // or matches none.
      return
    }
    if (!nameMatches(p[0]!, name)) return
    if (p.length === 1) whole = true
    else rest.push(p.slice(1))
  }
  for (const p of paths) visit(p)
  return { rest, whole }
}

const DROP = Symbol('drop')

function filter(value: unknown, paths: Path[], inclusive: boolean): unknown {
  if (Array.isArray(value)) {
    const out: unknown[] = []
    for (const v of value) {
      const kept = filter(v, paths, inclusive)
      if (kept !== DROP) out.push(kept)
    }
    return out.length > 0 || (!inclusive && value.length === 0) ? out : DROP
  }
  if (!isObject(value)) return inclusive ? DROP : value
  const out: Record<string, unknown> = {}
  let any = false
  for (const [name, v] of Object.entries(value)) {
    const { rest, whole } = step(paths, name)
    let kept: unknown
    if (whole) kept = inclusive ? v : DROP
    else if (rest.length > 0) kept = filter(v, rest, inclusive)
    else kept = inclusive ? DROP : v
    if (kept === DROP) continue
    Object.defineProperty(out, name, { value: kept, writable: true, enumerable: true, configurable: true })
    any = true
  }
  return any || (!inclusive && Object.keys(value).length === 0) ? out : DROP
}

export function applyFilterPath(body: unknown, filters: Filters): unknown {
  let out = body
  if (filters.exclude.length > 0) out = filter(out, filters.exclude, false)
  if (out !== DROP && filters.include.length > 0) out = filter(out, filters.include, true)
  return out === DROP ? {} : out
}

/** The answer with `filter_path` applied, when the request asks for it and the answer is JSON. */
export async function filteredResponse(request: Request, response: Response): Promise<Response> {
  const query = new URL(request.url).searchParams
  const param = query.get('filter_path')
  const type = response.headers.get('content-type') ?? ''
  if (param === null || !response.body || !type.includes('json')) return response
  const filters = parseFilterPath(param)
  if (!filters) return response
  const text = await response.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers })
  }
  const filtered = applyFilterPath(body, filters)
  const pretty = query.has('pretty') && query.get('pretty') !== 'false'
  const headers = new Headers(response.headers)
  headers.delete('content-length')
  const out = pretty ? JSON.stringify(filtered, null, 2) + '\n' : jsonBody(filtered)
  return new Response(out, { status: response.status, statusText: response.statusText, headers })
}

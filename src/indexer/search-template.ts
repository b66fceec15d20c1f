/**
 * Search templates: `_search/template` (`GET|POST /_search/template`, `/<index>/_search/template`)
 * and `_render/template[/<id>]`, with an inline mustache `source` (a string or an object) and
 * `params`. The mustache subset: `{{var}}` and `{{{var}}}` (dotted paths, JSON-escaped as
 * OpenSearch's JSON encoder escapes them), sections `{{#var}}…{{/var}}` (lists repeat, `{{.}}`),
 * inverted sections `{{^var}}…{{/var}}`, `{{#toJson}}var{{/toJson}}`, `{{#join}}var{{/join}}` and
 * comments `{{! … }}`. A stored template (`id`) is a mustache script of `_scripts/<id>`.
 */
import { OpenSearchHttpError } from '../http/errors'
import type { Store } from '../store/port'
import { isObject } from '../store/query/doc'
import { badRequest, type RequestContext } from './context'
import type { IndexRouter } from './router'
import { checkSearchBody, SEARCH_KEYS, searchAs } from './search'
import { missingScript, storedScript } from './stored-scripts'

const MAX_TEMPLATE_OUTPUT = 1_000_000
export const SCRIPT_GET_ACTION = 'cluster:admin/script/get'

function lookup(stack: unknown[], name: string): unknown {
  if (name === '.') return stack[stack.length - 1]
  const [head, ...rest] = name.split('.')
  for (let i = stack.length - 1; i >= 0; i--) {
    const scope = stack[i]
    if (isObject(scope) && Object.hasOwn(scope, head)) {
      let v: unknown = scope[head]
      for (const step of rest) {
        if (isObject(v) && Object.hasOwn(v, step)) v = v[step]
        else if (Array.isArray(v) && /^\d+$/.test(step)) v = v[Number(step)]
        else return undefined
      }
      return v
    }
  }
  return undefined
}

function jsonEscape(s: string): string {
  return JSON.stringify(s).slice(1, -1)
}

function display(v: unknown): string {
  if (v === undefined || v === null) return ''
  if (Array.isArray(v)) return `[${v.map(display).join(', ')}]`
  if (isObject(v))
    return `{${Object.entries(v)
      .map(([k, x]) => `${k}=${display(x)}`)
      .join(', ')}}`
  return String(v)
}

function renderError(reason: string): OpenSearchHttpError {
  return new OpenSearchHttpError(400, 'general_script_exception', `Failed to compile inline script with lang [mustache]`, {
    caused_by: { type: 'mustache_exception', reason },
  })
}

/** Renders a mustache template against params. */
export function renderMustache(template: string, params: Record<string, unknown>): string {
  let out = ''
  const run = (tpl: string, stack: unknown[], depth: number): string => {
    if (depth > 50) throw renderError('sections nested too deeply')
    let res = ''
    let i = 0
    while (i < tpl.length) {
      const open = tpl.indexOf('{{', i)
      if (open < 0) {
        res += tpl.slice(i)
        break
      }
      res += tpl.slice(i, open)
      const triple = tpl.startsWith('{{{', open)
      const close = tpl.indexOf(triple ? '}}}' : '}}', open)
      if (close < 0) throw renderError(`Improperly closed variable at ${open}`)
      const tag = tpl.slice(open + (triple ? 3 : 2), close).trim()
      i = close + (triple ? 3 : 2)
      const sigil = tag[0]
      if (sigil === '!') continue
      if (sigil === '#' || sigil === '^') {
        const name = tag.slice(1).trim()
        const end = findClose(tpl, name, i)
        const inner = tpl.slice(i, end.start)
        i = end.after
        if (sigil === '#' && name === 'toJson') {
          res += JSON.stringify(lookup(stack, inner.trim()) ?? null)
          continue
        }
        if (sigil === '#' && (name === 'join' || name.startsWith('join '))) {
          const v = lookup(stack, inner.trim())
          res += Array.isArray(v) ? v.map(display).join(',') : display(v)
          continue
        }
        const v = lookup(stack, name)
        const truthy = Array.isArray(v) ? v.length > 0 : v !== undefined && v !== null && v !== false && v !== ''
        if (sigil === '^') {
          if (!truthy) res += run(inner, stack, depth + 1)
        } else if (Array.isArray(v)) for (const item of v) res += run(inner, [...stack, item], depth + 1)
        else if (truthy) res += run(inner, isObject(v) ? [...stack, v] : stack, depth + 1)
        continue
      }
      if (sigil === '/') throw renderError(`Unexpected close tag [${tag.slice(1)}]`)
      const name = sigil === '&' ? tag.slice(1).trim() : tag
      const v = lookup(stack, name)
      const text = isObject(v) || Array.isArray(v) ? display(v) : v === undefined || v === null ? '' : String(v)
      res += triple || sigil === '&' ? text : jsonEscape(text)
      if (out.length + res.length > MAX_TEMPLATE_OUTPUT) throw renderError('the rendered template is too large')
    }
    return res
  }
  out = run(template, [params], 0)
  return out
}

function findClose(tpl: string, name: string, from: number): { start: number; after: number } {
  let depth = 1
  const re = /\{\{\s*([#^/])\s*([^}]*?)\s*\}\}/g
  re.lastIndex = from
  for (let m = re.exec(tpl); m; m = re.exec(tpl)) {
    if (m[2] !== name) continue
    if (m[1] === '/') {
      if (--depth === 0) return { start: m.index, after: m.index + m[0].length }
    } else depth++
  }
  throw renderError(`Mismatched start/end tags: missing close tag for [${name}]`)
}

const TEMPLATE_KEYS = new Set(['source', 'inline', 'id', 'params', 'explain', 'profile', 'file'])

/** The search body a template request renders to. */
export async function renderTemplateRequest(
  store: Store,
  body: Record<string, unknown> | undefined,
  id?: string,
): Promise<Record<string, unknown>> {
  if (!body && id === undefined) throw badRequest('request body or source parameter is required', 'action_request_validation_exception')
  const b = body ?? {}
  for (const k of Object.keys(b)) if (!TEMPLATE_KEYS.has(k)) throw badRequest(`[search_template] unknown field [${k}]`, 'parsing_exception')
  const templateId = id ?? b.id
  let source = b.source ?? b.inline
  if (templateId !== undefined) {
    const stored = await storedScript(store, String(templateId))
    if (!stored) throw missingScript(String(templateId))
    if (stored.lang !== 'mustache')
      throw badRequest(`stored script [${String(templateId)}] is not a mustache template`, 'illegal_argument_exception')
    source = stored.source
  }
  if (source === undefined) throw badRequest('Validation Failed: 1: template is missing;', 'action_request_validation_exception')
  const params = b.params === undefined ? {} : b.params
  if (!isObject(params)) throw badRequest('[search_template] params must be an object', 'parsing_exception')
  const text = typeof source === 'string' ? source : JSON.stringify(source)
  const rendered = renderMustache(text, params)
  let parsed: unknown
  try {
    parsed = rendered.trim() === '' ? {} : JSON.parse(rendered)
  } catch (e) {
    throw badRequest(`Failed to parse the rendered template: ${(e as Error).message}`, 'x_content_parse_exception')
  }
  if (!isObject(parsed)) throw badRequest('the rendered template must be a JSON object', 'parsing_exception')
  return parsed
}

async function searchTemplate(ctx: RequestContext) {
  const raw = await ctx.json()
  const body = checkSearchBody(await renderTemplateRequest(ctx.store, raw), SEARCH_KEYS)
  // OpenSearch's parser takes numbers rendered as strings (`"size": "{{size}}"`).
  for (const k of ['from', 'size', 'terminate_after'])
    if (typeof body[k] === 'string' && /^-?\d+$/.test(body[k] as string)) body[k] = Number(body[k])
  if (raw?.explain === true) body.explain = true
  if (raw?.profile === true) body.profile = true
  if (ctx.str('scroll') !== undefined) throw badRequest('[scroll] with a search template is not supported by this server')
  return searchAs(ctx, {
    expression: ctx.indexExpression(),
    namedIndices: ctx.part('index') !== undefined,
    body,
    options: ctx.resolveOptions(),
    restTotalHitsAsInt: ctx.flag('rest_total_hits_as_int', false),
  })
}

async function renderTemplate(ctx: RequestContext) {
  // A stored template is a stored script: reading it needs the platform's script read action.
  if (ctx.part('id') !== undefined) await ctx.authorizeCluster(SCRIPT_GET_ACTION)
  return { template_output: await renderTemplateRequest(ctx.store, await ctx.json(), ctx.part('id')) }
}

export function searchTemplateRoutes(r: IndexRouter): void {
  r.on(['GET', 'POST'], ['/_search/template', '/:index/_search/template'], searchTemplate)
  r.on(['GET', 'POST'], ['/_render/template', '/_render/template/:id'], renderTemplate)
}

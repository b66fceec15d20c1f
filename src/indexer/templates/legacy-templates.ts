/** `_template`: legacy (v1) index templates, as OpenSearch's RestPutIndexTemplateAction reads them. */
import { LegacyTemplateBody } from '../../store/port'
import { isObject } from '../../json'
import { badRequest, type RequestContext } from '../context'
import { flatSettings } from '../indices'
import { Reply, validate, type IndexRouter } from '../router'

const LEGACY_TEMPLATE_ACTIONS = {
  put: 'indices:admin/template/put',
  get: 'indices:admin/template/get',
  delete: 'indices:admin/template/delete',
} as const

const KEYS = new Set(Object.keys(LegacyTemplateBody.properties))

/** `order` may come as a numeric string, as Java's integer parsing reads it. */
function orderOf(v: unknown): unknown {
  if (typeof v !== 'string') return v
  if (!/^[-+]?\d+$/.test(v.trim())) throw badRequest(`For input string: "${v}"`, 'number_format_exception')
  return Number(v)
}

/** The checks of the REST layer, before the body's shape is checked against the port's schema. */
function checkedBody(body: Record<string, unknown>): LegacyTemplateBody {
  for (const key of Object.keys(body)) if (!KEYS.has(key)) throw badRequest(`unknown key [${key}] in the template `, 'parse_exception')
  if (body.index_patterns === undefined)
    throw badRequest('Validation Failed: 1: index patterns are missing;', 'action_request_validation_exception')
  if (body.version !== undefined && !Number.isInteger(body.version)) throw badRequest('Malformed [version] value, should be an integer')
  const mappings = body.mappings
  if (isObject(mappings) && Object.keys(mappings).length === 1 && isObject(mappings._doc))
    throw badRequest('The mapping definition cannot be nested under a type')
  const order = body.order === undefined ? {} : { order: orderOf(body.order) }
  return validate<LegacyTemplateBody>(LegacyTemplateBody, { ...body, ...order }, 'template')
}

async function putLegacyTemplate(ctx: RequestContext) {
  await ctx.authorizeCluster(LEGACY_TEMPLATE_ACTIONS.put)
  const body = await ctx.json()
  if (body === undefined) throw badRequest('request body is required', 'parse_exception')
  const order = ctx.int('order')
  return ctx.store.putTemplate({
    name: ctx.part('name')!,
    body: checkedBody(body),
    create: ctx.flag('create', false),
    ...(order === undefined ? {} : { order }),
  })
}

/** Names that match none are left out; when none is found the answer is `{}` with a 404. */
async function getLegacyTemplate(ctx: RequestContext) {
  await ctx.authorizeCluster(LEGACY_TEMPLATE_ACTIONS.get)
  const name = ctx.part('name')
  const res = await ctx.store.getTemplate(name === undefined ? {} : { name })
  if (ctx.flag('flat_settings', false))
    for (const t of Object.values(res)) t.settings = flatSettings((t.settings ?? {}) as Record<string, unknown>)
  return name !== undefined && Object.keys(res).length === 0 ? new Reply(404, res) : res
}

async function deleteLegacyTemplate(ctx: RequestContext) {
  await ctx.authorizeCluster(LEGACY_TEMPLATE_ACTIONS.delete)
  return ctx.store.deleteTemplate({ name: ctx.part('name')! })
}

export function legacyTemplateRoutes(r: IndexRouter): void {
  r.on(['PUT', 'POST'], '/_template/:name', putLegacyTemplate)
  r.on(['GET', 'HEAD'], ['/_template', '/_template/:name'], getLegacyTemplate)
  r.on('DELETE', '/_template/:name', deleteLegacyTemplate)
}

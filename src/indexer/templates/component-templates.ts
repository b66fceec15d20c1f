/** `_component_template`: the parts index templates are composed of. */
import { ComponentTemplateBody } from '../../store/port'
import { badRequest, type RequestContext } from '../context'
import { Reply, validate, type IndexRouter } from '../router'

const COMPONENT_TEMPLATE_ACTIONS = {
  put: 'cluster:admin/component_template/put',
  get: 'cluster:admin/component_template/get',
  delete: 'cluster:admin/component_template/delete',
} as const

const FIELDS = new Set(Object.keys(ComponentTemplateBody.properties))

async function putComponentTemplate(ctx: RequestContext) {
  await ctx.authorizeCluster(COMPONENT_TEMPLATE_ACTIONS.put)
  const body = await ctx.json()
  if (body === undefined) throw badRequest('request body is required', 'parse_exception')
  for (const key of Object.keys(body))
    if (!FIELDS.has(key)) throw badRequest(`[component_template] unknown field [${key}]`, 'x_content_parse_exception')
  if (body.template === undefined) throw badRequest('Required [template]')
  const template = validate<ComponentTemplateBody>(ComponentTemplateBody, body, 'component_template')
  return ctx.store.putComponentTemplate({ name: ctx.part('name')!, body: template, create: ctx.flag('create', false) })
}

/** A pattern that matches none answers 404 with the empty list; a missing name is the store's 404 error. */
async function getComponentTemplate(ctx: RequestContext) {
  await ctx.authorizeCluster(COMPONENT_TEMPLATE_ACTIONS.get)
  const name = ctx.part('name')
  const res = await ctx.store.getComponentTemplate(name === undefined ? {} : { name })
  return name !== undefined && res.component_templates.length === 0 ? new Reply(404, res) : res
}

async function deleteComponentTemplate(ctx: RequestContext) {
  await ctx.authorizeCluster(COMPONENT_TEMPLATE_ACTIONS.delete)
  return ctx.store.deleteComponentTemplate({ name: ctx.part('name')! })
}

export function componentTemplateRoutes(r: IndexRouter): void {
  r.on(['PUT', 'POST'], '/_component_template/:name', putComponentTemplate)
  r.on(['GET', 'HEAD'], ['/_component_template', '/_component_template/:name'], getComponentTemplate)
  r.on('DELETE', '/_component_template/:name', deleteComponentTemplate)
}

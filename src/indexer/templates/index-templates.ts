/** `_index_template`: composable index templates, and what they would give a new index (`_simulate_index`, `_simulate`). */
import { IndexTemplateBody } from '../../store/port'
import { badRequest, type RequestContext } from '../context'
import { Reply, validate, type IndexRouter } from '../router'

const TEMPLATE_ACTIONS = {
  put: 'indices:admin/index_template/put',
  get: 'indices:admin/index_template/get',
  delete: 'indices:admin/index_template/delete',
  simulateIndex: 'indices:admin/index_template/simulate_index',
  simulate: 'indices:admin/index_template/simulate',
} as const

async function templateBody(ctx: RequestContext): Promise<IndexTemplateBody | undefined> {
  const body = await ctx.json()
  return body === undefined ? undefined : validate<IndexTemplateBody>(IndexTemplateBody, body, 'index_template')
}

async function putTemplate(ctx: RequestContext) {
  await ctx.authorizeCluster(TEMPLATE_ACTIONS.put)
  const body = await ctx.json()
  if (body === undefined) throw badRequest('Validation Failed: 1: index template is missing;', 'action_request_validation_exception')
  if (body.index_patterns === undefined) throw badRequest('Required [index_patterns]')
  const template = validate<IndexTemplateBody>(IndexTemplateBody, body, 'index_template')
  return ctx.store.putIndexTemplate({ name: ctx.part('name')!, body: template, create: ctx.flag('create', false) })
}

/**
 * Settings come back nested whatever `flat_settings` says, as OpenSearch answers for composable
 * templates; a pattern that matches none answers 404 with the empty list.
 */
async function getTemplate(ctx: RequestContext) {
  await ctx.authorizeCluster(TEMPLATE_ACTIONS.get)
  const name = ctx.part('name')
  const res = await ctx.store.getIndexTemplate(name === undefined ? {} : { name })
  return name !== undefined && res.index_templates.length === 0 ? new Reply(404, res) : res
}

async function deleteTemplate(ctx: RequestContext) {
  await ctx.authorizeCluster(TEMPLATE_ACTIONS.delete)
  return ctx.store.deleteIndexTemplate({ name: ctx.part('name')! })
}

async function simulateIndex(ctx: RequestContext) {
  await ctx.authorizeCluster(TEMPLATE_ACTIONS.simulateIndex)
  const body = await templateBody(ctx)
  return ctx.store.simulateIndexTemplate({ index: ctx.part('name')!, ...(body === undefined ? {} : { body }) })
}

async function simulate(ctx: RequestContext) {
  await ctx.authorizeCluster(TEMPLATE_ACTIONS.simulate)
  const name = ctx.part('name')
  const body = await templateBody(ctx)
  return ctx.store.simulateTemplate({ ...(name === undefined ? {} : { name }), ...(body === undefined ? {} : { body }) })
}

export function indexTemplateRoutes(r: IndexRouter): void {
  r.on('POST', '/_index_template/_simulate_index/:name', simulateIndex)
  r.on('POST', ['/_index_template/_simulate', '/_index_template/_simulate/:name'], simulate)
  r.on(['PUT', 'POST'], '/_index_template/:name', putTemplate)
  r.on(['GET', 'HEAD'], ['/_index_template', '/_index_template/:name'], getTemplate)
  r.on('DELETE', '/_index_template/:name', deleteTemplate)
}

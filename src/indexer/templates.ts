/**
 * Composable index templates and data streams.
 */
import { IndexTemplateBody } from '../store/port'
import { badRequest, type RequestContext } from './context'
import { Reply, validate, type IndexRouter } from './router'
import { flatSettings } from './indices'

export const TEMPLATE_ACTIONS = {
  put: 'indices:admin/index_template/put',
  get: 'indices:admin/index_template/get',
  delete: 'indices:admin/index_template/delete',
} as const

export const DATA_STREAM_ACTIONS = {
  create: 'indices:admin/data_stream/create',
  get: 'indices:admin/data_stream/get',
  delete: 'indices:admin/data_stream/delete',
} as const

async function putTemplate(ctx: RequestContext) {
  await ctx.authorizeCluster(TEMPLATE_ACTIONS.put)
  const body = await ctx.json()
  if (body === undefined) throw badRequest('Validation Failed: 1: index template is missing;', 'action_request_validation_exception')
  const template = validate<IndexTemplateBody>(IndexTemplateBody, body, 'index_template')
  return ctx.store.putIndexTemplate({ name: ctx.part('name')!, body: template, create: ctx.flag('create', false) })
}

async function getTemplate(ctx: RequestContext) {
  await ctx.authorizeCluster(TEMPLATE_ACTIONS.get)
  const name = ctx.part('name')
  const res = await ctx.store.getIndexTemplate(name === undefined ? {} : { name })
  if (ctx.request.method === 'HEAD') return {}
  if (!ctx.flag('flat_settings', false)) return res
  return {
    index_templates: res.index_templates.map((t) => {
      const settings = t.index_template.template?.settings
      if (!settings) return t
      return { ...t, index_template: { ...t.index_template, template: { ...t.index_template.template, settings: flatSettings(settings) } } }
    }),
  }
}

async function deleteTemplate(ctx: RequestContext) {
  await ctx.authorizeCluster(TEMPLATE_ACTIONS.delete)
  return ctx.store.deleteIndexTemplate({ name: ctx.part('name')! })
}

/** Data stream names a request names (wildcards expanded over existing streams) for authorization. */
async function streamNames(ctx: RequestContext, expression: string | undefined): Promise<string[]> {
  if (expression === undefined || expression.includes('*') || expression === '_all') {
    const { data_streams } = await ctx.store.getDataStream(expression === undefined ? {} : { name: expression })
    return data_streams.map((d) => d.name)
  }
  return expression.split(',')
}

async function createDataStream(ctx: RequestContext) {
  const name = ctx.part('name')!
  ctx.deps.security.authorizeIndices(ctx.caller, DATA_STREAM_ACTIONS.create, [name])
  return ctx.store.createDataStream({ name })
}

async function getDataStream(ctx: RequestContext) {
  const name = ctx.part('name')
  const res = await ctx.store.getDataStream(name === undefined ? {} : { name })
  ctx.deps.security.authorizeIndices(
    ctx.caller,
    DATA_STREAM_ACTIONS.get,
    res.data_streams.map((d) => d.name),
  )
  return res
}

async function deleteDataStream(ctx: RequestContext) {
  const name = ctx.part('name')!
  const names = await streamNames(ctx, name)
  ctx.deps.security.authorizeIndices(ctx.caller, DATA_STREAM_ACTIONS.delete, names)
  return ctx.store.deleteDataStream({ name })
}

export function templateRoutes(r: IndexRouter): void {
  r.on(['PUT', 'POST'], '/_index_template/:name', putTemplate)
  r.on(['GET', 'HEAD'], ['/_index_template', '/_index_template/:name'], getTemplate)
  r.on('DELETE', '/_index_template/:name', deleteTemplate)
  r.on('PUT', '/_data_stream/:name', createDataStream)
  r.on('GET', ['/_data_stream', '/_data_stream/:name'], getDataStream)
  r.on('DELETE', '/_data_stream/:name', deleteDataStream)
}

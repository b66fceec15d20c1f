/** `_data_stream`: create, get and delete, authorized on the streams' names. */
import type { RequestContext } from '../context'
import type { IndexRouter } from '../router'

const DATA_STREAM_ACTIONS = {
  create: 'indices:admin/data_stream/create',
  get: 'indices:admin/data_stream/get',
  delete: 'indices:admin/data_stream/delete',
} as const

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

export function dataStreamRoutes(r: IndexRouter): void {
  r.on('PUT', '/_data_stream/:name', createDataStream)
  r.on('GET', ['/_data_stream', '/_data_stream/:name'], getDataStream)
  r.on('DELETE', '/_data_stream/:name', deleteDataStream)
}

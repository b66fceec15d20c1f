/**
 * Ingest pipelines are not supported yet: no pipeline exists, so every request that names one
 * (`?pipeline=`, a bulk item's `pipeline`, a reindex `dest.pipeline`) is refused with OpenSearch's
 * error for a missing pipeline instead of being written without it; `_none` (no pipeline) is
 * accepted. `GET _ingest/pipeline` lists none, as OpenSearch does on a cluster without any.
 */
import { badRequest, type RequestContext } from './context'
import { Reply, type IndexRouter } from './router'

/** OpenSearch's own name for "no pipeline". */
const NONE = '_none'

/** The refusal of a named pipeline, or undefined when there is none to run. */
export function missingPipeline(id: unknown): ReturnType<typeof badRequest> | undefined {
  if (id === undefined || id === null || id === NONE) return undefined
  return badRequest(`pipeline with id [${String(id)}] does not exist`)
}

/** Throws the refusal when the request names a pipeline. */
export function requireNoPipeline(id: unknown): void {
  const refused = missingPipeline(id)
  if (refused) throw refused
}

async function getPipelines(ctx: RequestContext): Promise<Reply> {
  await ctx.authorizeCluster('cluster:admin/ingest/pipeline/get')
  // A named pipeline (or pattern) matches none: OpenSearch answers an empty object with 404.
  return ctx.part('id') === undefined ? new Reply(200, {}) : new Reply(404, {})
}

export function ingestRoutes(r: IndexRouter): void {
  r.on('GET', '/_ingest/pipeline', getPipelines)
  r.on('GET', '/_ingest/pipeline/:id', getPipelines)
}

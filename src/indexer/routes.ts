/**
 * The index API of embedded mode: OpenSearch's REST shapes over the Store port, every route
 * authenticated and authorized with OpenSearch's action names on concrete indices.
 */
import { catPoolRoutes } from './cat-pools'
import { StatusCounter } from './status-counter'
import { aliasRoutes } from './aliases'
import { analyzeRoutes } from './analyze'
import { bulkRoutes } from './bulk'
import { byQueryRoutes } from './by-query'
import { catRoutes } from './cat'
import { catClusterRoutes } from './cat-cluster'
import { catNodeRoutes } from './cat-node'
import { clusterRoutes } from './cluster'
import type { IndexApiDeps } from './context'
import { documentRoutes } from './documents'
import { explainRoutes } from './explain'
import { fieldCapsRoutes } from './field-caps'
import { indexRoutes } from './indices'
import { ingestRoutes } from './ingest'
import { ismRoutes } from './ism'
import { mgetRoutes } from './mget'
import { msearchRoutes } from './msearch'
import { nodeRoutes } from './nodes'
import { resolveRoutes } from './resolve'
import { rolloverRoutes } from './rollover'
import { IndexRouter } from './router'
import { scrollRoutes } from './scroll'
import { searchRoutes } from './search'
import { searchTemplateRoutes } from './search-template'
import { storedScriptRoutes } from './stored-scripts'
import { taskRoutes } from './tasks'
import { templateRoutes } from './templates/routes'
import { validateRoutes } from './validate'

export type { IndexApiDeps } from './context'
export { COMPATIBLE_OPENSEARCH_VERSION } from './cluster'

export function indexApiRoutes(deps: IndexApiDeps) {
  // Set on the caller's object, not a copy: a caller may swap its store in (tests' reset).
  deps.statusCounter ??= new StatusCounter()
  const r = new IndexRouter(deps)
  // Static prefixes first: they must win over the `/:index` routes.
  clusterRoutes(r)
  catRoutes(r)
  catClusterRoutes(r)
  catNodeRoutes(r)
  catPoolRoutes(r)
  nodeRoutes(r)
  resolveRoutes(r)
  fieldCapsRoutes(r)
  templateRoutes(r)
  ismRoutes(r)
  ingestRoutes(r)
  aliasRoutes(r)
  scrollRoutes(r)
  searchTemplateRoutes(r)
  searchRoutes(r)
  analyzeRoutes(r)
  validateRoutes(r)
  rolloverRoutes(r)
  storedScriptRoutes(r)
  msearchRoutes(r)
  mgetRoutes(r)
  explainRoutes(r)
  bulkRoutes(r)
  byQueryRoutes(r)
  taskRoutes(r)
  indexRoutes(r)
  documentRoutes(r)
  return r.app
}

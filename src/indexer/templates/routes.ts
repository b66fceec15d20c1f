/** The template routes: composable index templates, component templates, legacy templates; and data streams, which templates make. */
import type { IndexRouter } from '../router'
import { componentTemplateRoutes } from './component-templates'
import { dataStreamRoutes } from './data-streams'
import { indexTemplateRoutes } from './index-templates'
import { legacyTemplateRoutes } from './legacy-templates'

export function templateRoutes(r: IndexRouter): void {
  indexTemplateRoutes(r)
  componentTemplateRoutes(r)
  legacyTemplateRoutes(r)
  dataStreamRoutes(r)
}

import type { Store } from '../port'
import { EmbeddedStore, type EmbeddedStoreOptions } from './store'

export { searchLimitsOf } from './search-limits'
export { EmbeddedStore, autoId, backingIndexName, OPENSEARCH_VERSION_ID, type EmbeddedStoreOptions } from './store'
export type { Synchronous } from './schema'
export { dynamicTemplateFor, fieldSpecs } from './mapping'
export { ISM_CONFIG_INDEX, parseIsmPolicy } from '../lifecycle-policies'
export { markerPath, StoreFileError } from './integrity'
export { SCHEMA_MIGRATIONS, latestVersion, type Migration } from './migrations'

/** Open (or create) the embedded store in one SQLite file; `:memory:` for a throwaway store. */
export function openEmbeddedStore(path: string, options?: EmbeddedStoreOptions): Store & EmbeddedStore {
  return new EmbeddedStore(path, options)
}

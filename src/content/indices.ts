// The indices this module reads and writes. Their definitions belong to the Setup bootstrap
// (src/setup/indices); content code imports the names from here only.
export { CONTENT_ALIASES, RESOURCE_LOCKS_INDEX } from '../setup/indices/names'
import { RESOURCE_LOCKS } from '../setup/indices/system'

/** Body the lock index is (re)created with when the content manager finds it missing. */
export const RESOURCE_LOCKS_DEFINITION = RESOURCE_LOCKS.body

// The indices this module reads and writes. Their definitions belong to the Setup bootstrap
// (src/setup/indices); content code imports the names from here only.
export { CONTENT_ALIASES, RESOURCE_LOCKS_INDEX } from '../setup/indices/names'

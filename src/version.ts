// The version file is embedded at build time, so the compiled binary reports
// the version it was built from wherever it is copied.
import versionFile from '../VERSION' with { type: 'text' }

export const VERSION = versionFile.trim()
export const PRODUCT = 'svc'
/** Sent to the CTI API as User-Agent (spec: `<product> Indexer <version>`). */
export const USER_AGENT = `${PRODUCT} Indexer ${VERSION}`

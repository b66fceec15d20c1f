import { Client } from '@opensearch-project/opensearch'
import { PlatformNodes } from './nodes'
import { PlatformStore } from './store'

export { PlatformStore } from './store'
export { storeErrorFrom } from './errors'
export { withoutPcre } from './pcre'
export { PlatformNodes } from './nodes'

export interface PlatformConnection {
  /** The platform's nodes: requests stick to one and fail over to the next (./nodes). */
  url: string | readonly string[]
  /** Service account for the service's own calls; none means anonymous (or credentials in the URL). */
  username?: string
  password?: string
  /** Accept any TLS certificate (tests against self-signed platforms only). */
  insecure?: boolean
  /** PEM of the CAs trusted for the platform's certificate. */
  ca?: string
  requestTimeoutMillis?: number
}

/**
 * The Store over an OpenSearch cluster (or anything speaking its REST API). Retries are off:
 * a create-only lock write retried after a lost answer would report a conflict with itself;
 * callers own their retry policies. Failing over to another node follows the rules of ./nodes.
 */
export function openPlatformStore(c: PlatformConnection): PlatformStore {
  const urls = typeof c.url === 'string' ? [c.url] : c.url
  return new PlatformStore(
    new PlatformNodes(
      urls.map((url) => client(url, c)),
      clientUnreachable,
    ),
  )
}

/** The client's failures of the connection itself (no answer of the platform came back). */
const clientUnreachable = (e: unknown) =>
  e instanceof Error && ['ConnectionError', 'TimeoutError', 'NoLivingConnectionsError'].includes(e.name)

function client(url: string, c: PlatformConnection): Client {
  return new Client({
    node: url,
    ...(c.username ? { auth: { username: c.username, password: c.password ?? '' } } : {}),
    ssl: { rejectUnauthorized: !c.insecure, ...(c.ca ? { ca: c.ca } : {}) },
    maxRetries: 0,
    requestTimeout: c.requestTimeoutMillis ?? 60_000,
    suggestCompression: false,
    // `__proto__`/`constructor` are ordinary field names to OpenSearch: parse them as JSON.parse
    // does (own data properties), as the embedded store does, instead of failing the response.
    disablePrototypePoisoningProtection: true,
  })
}

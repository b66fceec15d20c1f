import { PlatformNodes } from '../../store/platform/nodes'

/** Where the platform is and how to reach it; shared by authentication and the index API forwarding. */
export interface PlatformEndpoint {
  /** Base URLs of the platform's nodes, e.g. `https://opensearch:9200` (sticky with failover). */
  nodes: PlatformNodes<string>
  /** Accept any TLS certificate (tests against self-signed platforms only). */
  insecure: boolean
  /** PEM of the CAs trusted for the platform's certificate (storage.platform.ssl.certificate_authorities). */
  ca?: string
}

/** A fetch that got no answer: the connection failed, broke or timed out (not the caller's abort). */
const fetchUnreachable = (e: unknown) =>
  e instanceof Error && e.name !== 'AbortError' && (e.name === 'TimeoutError' || typeof (e as { code?: unknown }).code === 'string')

/** The endpoint of a platform at `urls` (one node or several). */
export function endpointAt(urls: string | readonly string[], tls: { insecure?: boolean; ca?: string } = {}): PlatformEndpoint {
  const list = (typeof urls === 'string' ? [urls] : urls).map((u) => u.replace(/\/+$/, ''))
  return { nodes: new PlatformNodes(list, fetchUnreachable), insecure: tls.insecure === true, ca: tls.ca }
}

/** Bun's TLS options for a platform request: the configured CA, or none checked at all when insecure. */
export function platformTls(endpoint: PlatformEndpoint): { rejectUnauthorized: false } | { ca: string } | undefined {
  if (endpoint.insecure) return { rejectUnauthorized: false }
  return endpoint.ca ? { ca: endpoint.ca } : undefined
}

/**
 * A request to the platform: `pathAndQuery` starts with `/`. Redirects are answers, not followed.
 * A body sent to a platform of several nodes must be one that can be sent again (not a stream).
 */
export function platformFetch(endpoint: PlatformEndpoint, pathAndQuery: string, init: RequestInit): Promise<Response> {
  return endpoint.nodes.run(init.method ?? 'GET', (base) =>
    fetch(base + pathAndQuery, {
      ...init,
      redirect: 'manual',
      tls: platformTls(endpoint),
    }),
  )
}

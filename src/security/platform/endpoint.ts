/** Where the platform is and how to reach it; shared by authentication and the index API forwarding. */
export interface PlatformEndpoint {
  /** Base URL, e.g. `https://opensearch:9200` (no trailing slash needed). */
  url: string
  /** Accept any TLS certificate (tests against self-signed platforms only). */
  insecure: boolean
  /** PEM of the CAs trusted for the platform's certificate (storage.platform.ssl.certificate_authorities). */
  ca?: string
}

/** Bun's TLS options for a platform request: the configured CA, or none checked at all when insecure. */
export function platformTls(endpoint: PlatformEndpoint): { rejectUnauthorized: false } | { ca: string } | undefined {
  if (endpoint.insecure) return { rejectUnauthorized: false }
  return endpoint.ca ? { ca: endpoint.ca } : undefined
}

/** A request to the platform: `pathAndQuery` starts with `/`. Redirects are answers, not followed. */
export function platformFetch(endpoint: PlatformEndpoint, pathAndQuery: string, init: RequestInit): Promise<Response> {
  const base = endpoint.url.replace(/\/+$/, '')
  return fetch(base + pathAndQuery, {
    ...init,
    redirect: 'manual',
    tls: platformTls(endpoint),
  })
}

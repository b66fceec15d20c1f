/** Where the platform is and how to reach it; shared by authentication and the index API forwarding. */
export interface PlatformEndpoint {
  /** Base URL, e.g. `https://opensearch:9200` (no trailing slash needed). */
  url: string
  /** Accept any TLS certificate (tests against self-signed platforms only). */
  insecure: boolean
}

/** A request to the platform: `pathAndQuery` starts with `/`. Redirects are answers, not followed. */
export function platformFetch(endpoint: PlatformEndpoint, pathAndQuery: string, init: RequestInit): Promise<Response> {
  const base = endpoint.url.replace(/\/+$/, '')
  return fetch(base + pathAndQuery, {
    ...init,
    redirect: 'manual',
    ...(endpoint.insecure ? { tls: { rejectUnauthorized: false } } : {}),
  })
}

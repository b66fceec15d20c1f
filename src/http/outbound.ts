/**
 * The one bounded outbound HTTP call of the service (the CTI API, notification channels): a total
 * timeout that also covers reading the answer (a stalled body cannot hang the caller), an answer
 * size cap, and the caller's redirect policy. Errors say what bound was hit, never a header value.
 */

export type OutboundErrorKind = 'timeout' | 'aborted' | 'unreachable' | 'too_large'

export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundErrorKind,
    message: string,
  ) {
    super(message)
  }
}

export interface OutboundRequest {
  method?: string
  headers?: Record<string, string>
  body?: string
  /** Whole call, answer body included (unless `headersOnly`). */
  timeoutMs: number
  signal?: AbortSignal
  /** `manual` answers a 3xx as it is (nothing followed); `follow` follows redirects. */
  redirect: 'follow' | 'manual'
  /** Answer bodies larger than this fail with `too_large` (unbounded when absent). */
  maxResponseBytes?: number
  /** Streaming downloads: the timeout covers the wait for the answer's headers only. */
  headersOnly?: boolean
  /** Names the peer in error messages (a URL without its query or secrets). */
  what: string
}

export async function boundedFetch(url: string, req: OutboundRequest): Promise<Response> {
  const timer = new AbortController()
  const timeout = setTimeout(
    () => timer.abort(new OutboundError('timeout', `${req.what} did not answer within ${req.timeoutMs} ms`)),
    req.timeoutMs,
  )
  const signal = req.signal ? AbortSignal.any([req.signal, timer.signal]) : timer.signal
  try {
    const res = await fetch(url, { method: req.method ?? 'GET', headers: req.headers, body: req.body, signal, redirect: req.redirect })
    if (req.headersOnly) return res
    const bytes = await readCapped(res, req.maxResponseBytes, req.what)
    return new Response(bytes, { status: res.status, statusText: res.statusText, headers: res.headers })
  } catch (e) {
    if (e instanceof OutboundError) throw e
    if (req.signal?.aborted) throw new OutboundError('aborted', `${req.what}: request aborted`)
    if (timer.signal.aborted) throw timer.signal.reason as OutboundError
    throw new OutboundError('unreachable', `${req.what} unreachable: ${(e as Error).message}`)
  } finally {
    clearTimeout(timeout)
  }
}

async function readCapped(res: Response, max: number | undefined, what: string): Promise<Uint8Array> {
  if (max === undefined || !res.body) return new Uint8Array(await res.arrayBuffer())
  const declared = Number(res.headers.get('content-length'))
  if (Number.isFinite(declared) && declared > max) {
    await res.body.cancel().catch(() => {})
    throw new OutboundError('too_large', `${what} answered more than ${max} bytes`)
  }
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = res.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > max) {
      await reader.cancel().catch(() => {})
      throw new OutboundError('too_large', `${what} answered more than ${max} bytes`)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks)
}

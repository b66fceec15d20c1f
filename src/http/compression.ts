/**
 * HTTP compression as OpenSearch does it: request bodies sent with `Content-Encoding: gzip` or
 * `deflate` are decoded (always; log shippers compress their `_bulk`), and responses are compressed
 * for a client that accepts gzip or deflate while `http.compression` is on, at
 * `http.compression_level`.
 */
import { deflateSync, gzipSync } from 'node:zlib'
import { Gzip, Zlib } from 'fflate'
import { OpenSearchHttpError } from './errors'

const DECODERS: Record<string, 'gzip' | 'deflate'> = { gzip: 'gzip', 'x-gzip': 'gzip', deflate: 'deflate' }

/**
 * The request's body as its decoded bytes. The decoder is a stream that hands out at most 64 KiB at
 * a time, so a reader that counts what it receives (the body limits) stops a small compressed body
 * that would expand without bound at the limit, having held no more than one chunk of it.
 */
export function decodedBody(request: Request): ReadableStream<Uint8Array> | null {
  const body = request.body
  const encoding = request.headers.get('content-encoding')?.trim().toLowerCase()
  if (!body || !encoding || encoding === 'identity') return body
  const format = DECODERS[encoding]
  if (!format) throw new OpenSearchHttpError(400, 'illegal_argument_exception', `unsupported Content-Encoding [${encoding}]`)
  return body.pipeThrough(new DecompressionStream(format))
}

/** A decoder's failure (a corrupt or truncated compressed body), as the 400 it is. */
export function undecodableBody(request: Request, error: unknown): OpenSearchHttpError | undefined {
  if (!request.headers.has('content-encoding') || error instanceof OpenSearchHttpError) return undefined
  const why = error instanceof Error ? error.message : String(error)
  return new OpenSearchHttpError(400, 'illegal_argument_exception', `the request body could not be decoded: ${why}`)
}

type Coding = 'gzip' | 'deflate'

/** The coding the client prefers among those we produce (gzip first on a tie), by its q-values. */
export function acceptedCoding(header: string | null): Coding | undefined {
  if (!header) return undefined
  const q: Record<string, number> = {}
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';')
    const weight = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined)
    q[name!] = weight === undefined ? 1 : Number(weight)
  }
  const of = (c: Coding) => q[c] ?? (c === 'gzip' ? q['x-gzip'] : undefined) ?? q['*'] ?? 0
  const best = (['gzip', 'deflate'] as const).filter((c) => of(c) > 0).sort((a, b) => of(b) - of(a))
  return best[0]
}

/**
 * Bytes of an answer read before deciding how to compress it: an answer that has ended by then
 * is compressed at once by the native zlib, a longer one goes through a streaming compressor. A
 * body made of one string still arrives in pieces (16 KiB, then the rest): a 1,000-item `_bulk`
 * answer took the streaming compressor, which is JavaScript, ~4 ms of CPU per request.
 */
const AT_ONCE_BYTES = 1024 * 1024

/** The response compressed for the request's Accept-Encoding, or as it is when there is nothing to compress. */
export async function compressedResponse(request: Request, response: Response, level: number): Promise<Response> {
  const coding = acceptedCoding(request.headers.get('accept-encoding'))
  if (!coding || !response.body || request.method === 'HEAD' || response.headers.has('content-encoding')) return response
  if (response.status === 204 || response.status === 304) return response
  const headers = new Headers(response.headers)
  headers.delete('content-length')
  headers.set('content-encoding', coding)
  const answer = (body: Uint8Array | ReadableStream<Uint8Array>) =>
    new Response(body, { status: response.status, statusText: response.statusText, headers })
  const reader = response.body.getReader()
  const head: Uint8Array[] = []
  let bytes = 0
  for (;;) {
    const next = await reader.read()
    if (next.done) {
      const whole = head.length === 1 ? head[0] : Buffer.concat(head)
      return answer(coding === 'gzip' ? gzipSync(whole, { level }) : deflateSync(whole, { level }))
    }
    const chunk = bytesOf(next.value)
    head.push(chunk)
    bytes += chunk.byteLength
    if (bytes > AT_ONCE_BYTES) break
  }
  const rest = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of head.splice(0)) controller.enqueue(chunk)
    },
    async pull(controller) {
      const next = await reader.read()
      if (next.done) controller.close()
      else controller.enqueue(bytesOf(next.value))
    },
    cancel: (reason) => reader.cancel(reason),
  })
  return answer(rest.pipeThrough(compressor(coding, level as 3)))
}

const encoder = new TextEncoder()
const bytesOf = (chunk: Uint8Array | string): Uint8Array => (typeof chunk === 'string' ? encoder.encode(chunk) : chunk)

function compressor(coding: Coding, level: 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9): TransformStream<Uint8Array, Uint8Array> {
  let stream: Gzip | Zlib
  return new TransformStream({
    start(controller) {
      const ondata = (chunk: Uint8Array) => {
        if (chunk.byteLength > 0) controller.enqueue(chunk)
      }
      stream = coding === 'gzip' ? new Gzip({ level }, ondata) : new Zlib({ level }, ondata)
    },
    transform(chunk) {
      stream.push(chunk)
    },
    flush() {
      stream.push(new Uint8Array(0), true)
    },
  })
}

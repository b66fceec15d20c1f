/** A pass-through HTTP proxy that records what crossed the wire, to assert on exact requests. */
export interface Recorded {
  method: string
  path: string
  authorization: string | null
  body: string
}

export function startRecordingProxy(target: string): { url: string; seen: Recorded[]; stop(): void } {
  const seen: Recorded[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const body = request.method === 'GET' || request.method === 'HEAD' ? '' : await request.text()
      seen.push({ method: request.method, path: url.pathname + url.search, authorization: request.headers.get('authorization'), body })
      const headers = new Headers(request.headers)
      headers.delete('host')
      const answer = await fetch(target + url.pathname + url.search, {
        method: request.method,
        headers,
        body: body === '' ? undefined : body,
      })
      // fetch has decoded a compressed answer already: its encoding and length no longer apply.
      const answered = new Headers(answer.headers)
      for (const h of ['content-encoding', 'content-length']) answered.delete(h)
      return new Response(request.method === 'HEAD' ? null : await answer.arrayBuffer(), { status: answer.status, headers: answered })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, seen, stop: () => void server.stop(true) }
}

/**
 * A small closed-loop load generator: `concurrency` clients each send the
 * next request when the previous answered, for `durationMs`. Run it in a
 * different process from the server under test so they do not share a loop.
 */
export interface LoadResult {
  requests: number
  errors: number
  rps: number
  p50: number
  p99: number
}

export interface LoadOptions {
  url: string
  method?: string
  headers?: Record<string, string>
  body?: () => string | undefined
  concurrency: number
  durationMs: number
  /** Requests sent before measuring (JIT, caches). */
  warmupMs?: number
  tls?: { rejectUnauthorized: boolean }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const once = async () => {
    const body = o.body?.()
    const res = await fetch(o.url, { method: o.method ?? 'GET', headers: o.headers, body, tls: o.tls } as RequestInit)
    await res.arrayBuffer()
    return res.ok
  }
  const phase = async (ms: number, record: boolean) => {
    const latencies: number[] = []
    let errors = 0
    const end = performance.now() + ms
    await Promise.all(
      Array.from({ length: o.concurrency }, async () => {
        while (performance.now() < end) {
          const t = performance.now()
          const ok = await once().catch(() => false)
          if (record) latencies.push(performance.now() - t)
          if (!ok) errors++
        }
      }),
    )
    return { latencies, errors }
  }
  if (o.warmupMs) await phase(o.warmupMs, false)
  const started = performance.now()
  const { latencies, errors } = await phase(o.durationMs, true)
  const elapsed = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return {
    requests: latencies.length,
    errors,
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  }
}

export function fmt(r: LoadResult): string {
  return `${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  (${r.requests} requests, ${r.errors} errors)`
}

/**
 * A trivial `GET /` served on this process's event loop and asked continuously (every 5 ms) until
 * `stop`: its latencies show whether work on the same loop lets the node serve.
 */
export function probeEventLoop(): { stop(): Promise<{ requests: number; p50: number; p99: number; max: number }> } {
  const http = Bun.serve({ port: 0, fetch: () => new Response('{"ok":true}') })
  const latencies: number[] = []
  let running = true
  const prober = (async () => {
    while (running) {
      const t0 = performance.now()
      await (await fetch(`http://127.0.0.1:${http.port}/`)).text()
      latencies.push(performance.now() - t0)
      await Bun.sleep(5)
    }
  })()
  return {
    async stop() {
      running = false
      await prober
      http.stop(true)
      latencies.sort((a, b) => a - b)
      return {
        requests: latencies.length,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        max: latencies[latencies.length - 1] ?? NaN,
      }
    },
  }
}

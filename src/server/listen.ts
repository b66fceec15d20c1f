import type { Server } from 'bun'
import type { Logger } from '../http/log'
import type { NodeConfig } from '../config/node-config'
import { createApp, type App } from '../app'

export interface RunningServer {
  url: string
  port: number
  app: App
  /** Stops accepting, lets in-flight requests finish (up to the grace period), then closes storage. */
  stop(graceSeconds?: number): Promise<void>
}

/**
 * Starts svc-ext on the configured address: HTTPS when a certificate is
 * configured (the spec says every request uses HTTPS), plain HTTP otherwise.
 */
export async function startServer(
  node: NodeConfig,
  log: Logger,
  opts: { env?: Record<string, string | undefined> } = {},
): Promise<RunningServer> {
  const app = await createApp(node, log, opts)
  const cert = node.values.get('http.tls.certificate') as string
  const key = node.values.get('http.tls.key') as string
  const tls = cert ? { cert: Bun.file(cert), key: Bun.file(key) } : undefined
  let server: Server<undefined>
  try {
    server = Bun.serve({
      hostname: (node.values.get('http.host') as readonly string[])[0] ?? '127.0.0.1',
      port: node.values.get('http.port') as number,
      tls,
      maxRequestBodySize: node.values.get('http.max_body_bytes') as number,
      // Long sync and promotion requests must not be cut by the default 10 s idle timeout.
      idleTimeout: 255,
      fetch: (request, srv) => app.fetch(request, srv),
      error: (error) => {
        log.error('request failed outside the app', { error })
        return new Response(JSON.stringify({ message: 'Internal Server Error.', status: 500 }), {
          status: 500,
          headers: { 'content-type': 'application/json' },
        })
      },
    })
  } catch (e) {
    await app.close()
    throw e
  }
  const url = `${tls ? 'https' : 'http'}://${server.hostname}:${server.port}`
  let stopping: Promise<void> | undefined
  return {
    url,
    port: server.port!,
    app,
    stop(graceSeconds = node.values.get('http.shutdown_grace_seconds') as number) {
      stopping ??= (async () => {
        // Background work stops beside the drain: a detector run ends at its next batch boundary.
        const quiesced = app.quiesce()
        const drained = server.stop(false)
        const timedOut = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceSeconds * 1000).unref?.())
        if ((await Promise.race([drained, timedOut])) === 'timeout') {
          log.warn('grace period over, closing remaining connections', { graceSeconds })
          await server.stop(true)
        }
        await quiesced
        await app.close()
      })()
      return stopping
    },
  }
}

// The spec's rolling upgrade (issue 17 item 5), proven: two platform-mode nodes (the compiled
// binary) over one platform node; while a client writes sessions and documents without pause
// through both, each node in turn goes through the five steps (allocation to primaries, flush,
// stop, replace the binary, start, _cat/nodes, allocation back to all). No acknowledged write is
// lost, and every write ends acknowledged: the only failures are connection refusals or 5xx from
// a stopping node, which the client (like a load balancer) retries on the other node.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SESSIONS_STREAM } from '../../src/setup/indices'
import { basicAuth, send, type Reply } from '../helpers/app'
import { ADMIN, type TestServer } from '../helpers/server'
import { binaryPath, spawnBinary, type SpawnedServer, requireBinary } from '../helpers/spawn-binary'
import { forEachPlatform, type PlatformUnderTest } from '../platform/cluster-helpers'

// Several owners: each has the 500 saved sessions cap, which a slow run must not reach.
const WRITERS = Array.from({ length: 8 }, (_, i) => ({ name: `writer${i}`, password: `Writer-pass-${i}` }))
forEachPlatform({ users: WRITERS.map((w) => ({ ...w, backend_roles: ['writer'] })) }, (current) => {
  let platform: PlatformUnderTest
  let work: string
  const nodes: Array<SpawnedServer | undefined> = [undefined, undefined]

  const nodeBinary = (i: number) => join(work, `node-${i}`, 'svc-ext')

  async function startNodeProcess(i: number): Promise<SpawnedServer> {
    return spawnBinary({
      binary: nodeBinary(i),
      dataDir: join(work, `node-${i}`, 'data'),
      env: {
        SVC_SETTING_node__name: `node-${i}`,
        // The platform's settings for a node (URL, service account, its CA), as the environment spells them.
        ...Object.fromEntries(Object.entries(platform.nodeSettings).map(([k, v]) => [`SVC_SETTING_${k.replaceAll('.', '__')}`, String(v)])),
      },
    })
  }

  beforeAll(async () => {
    requireBinary()
    work = mkdtempSync(join(tmpdir(), 'svc-rolling-'))
    platform = current()
    for (const i of [0, 1]) {
      mkdirSync(join(work, `node-${i}`, 'data'), { recursive: true })
      copyFileSync(binaryPath, nodeBinary(i))
      nodes[i] = await startNodeProcess(i)
    }
  }, 120_000)

  afterAll(async () => {
    for (const n of nodes) await n?.stop()
  }, 60_000)

  interface Outcome {
    acked: boolean
    attempts: Array<number | 'refused'>
  }

  /** One write through the "load balancer": the next live node, the other one on refusal or 5xx. */
  async function write(k: number, attempt: (url: string) => Promise<Reply>): Promise<{ outcome: Outcome; reply?: Reply }> {
    const attempts: Outcome['attempts'] = []
    for (let tries = 0; tries < 40; tries++) {
      const n = nodes[(k + tries) % 2]
      if (!n) {
        await Bun.sleep(25)
        continue
      }
      try {
        const r = await attempt(n.url)
        attempts.push(r.status)
        if (r.status < 500) return { outcome: { acked: r.status < 300, attempts }, reply: r }
      } catch {
        attempts.push('refused')
      }
      await Bun.sleep(25)
    }
    return { outcome: { acked: false, attempts } }
  }

  test('a rolling upgrade of two nodes under continuous writes loses no acknowledged write', async () => {
    const admin = basicAuth(ADMIN)
    // Both nodes serve before the client starts (the setup bootstrap ran on one of them).
    for (const n of nodes) {
      for (let i = 0; ; i++) {
        const r = await send(n!.url, 'GET', '/_plugins/_content_manager/version/check', { authorization: admin })
        if (r.status !== 503) break
        if (i > 200) throw new Error('node not ready')
        await Bun.sleep(50)
      }
    }

    const sessions: string[] = []
    const docs: string[] = []
    const outcomes: Outcome[] = []
    let stop = false
    const client = (async () => {
      for (let k = 0; !stop; k++) {
        if (k % 2 === 0) {
          const { outcome, reply } = await write(k, (url) =>
            send(url, 'POST', '/_plugins/_setup/ai_assistant/sessions', {
              authorization: basicAuth(WRITERS[(k / 2) % WRITERS.length]),
              body: { title: `s${k}`, messages: [] },
            }),
          )
          outcomes.push(outcome)
          if (outcome.acked) sessions.push(reply!.body.id)
        } else {
          const { outcome } = await write(k, (url) =>
            send(url, 'PUT', `/rolling/_doc/d${k}`, { authorization: admin, body: { k, at: Date.now() } }),
          )
          outcomes.push(outcome)
          if (outcome.acked) docs.push(`d${k}`)
        }
        await Bun.sleep(5) // a steady client, not a flood
      }
    })()

    const ok = (r: Reply) => expect(r.status, r.text).toBe(200)
    for (const i of [0, 1]) {
      const other = nodes[1 - i]!
      await Bun.sleep(300) // writes flow through both nodes before each step
      // 1. Primaries only, 2. flush: asked through the node about to go, as the spec's procedure does.
      ok(
        await send(nodes[i]!.url, 'PUT', '/_cluster/settings', {
          authorization: admin,
          body: { persistent: { 'cluster.routing.allocation.enable': 'primaries' } },
        }),
      )
      ok(await send(nodes[i]!.url, 'POST', '/_flush', { authorization: admin }))
      // 3. Stop (SIGTERM drains in-flight requests), replace the binary, start on the same data directory.
      const n = nodes[i]!
      nodes[i] = undefined
      expect(await n.stop()).toBe(0)
      copyFileSync(binaryPath, nodeBinary(i))
      await Bun.sleep(200) // writes go to the other node alone meanwhile
      nodes[i] = await startNodeProcess(i)
      // 4. The node is back; 5. allocation back to all.
      const cat = await send(nodes[i]!.url, 'GET', '/_cat/nodes?v', { authorization: admin })
      ok(cat)
      expect(cat.text).toContain('name')
      ok(
        await send(other.url, 'PUT', '/_cluster/settings', {
          authorization: admin,
          body: { persistent: { 'cluster.routing.allocation.enable': 'all' } },
        }),
      )
    }
    await Bun.sleep(300)
    stop = true
    await client

    // Every write ended acknowledged; the only failures seen were refusals and 5xx the client retried.
    expect(outcomes.length).toBeGreaterThan(20)
    expect(outcomes.filter((o) => !o.acked)).toEqual([])
    const retried = outcomes.filter((o) => o.attempts.length > 1)
    for (const o of retried) expect(o.attempts.slice(0, -1).every((a) => a === 'refused' || a >= 500)).toBe(true)
    // And every acknowledged write is on the platform.
    const store = platform.store
    await store.refresh({ index: [SESSIONS_STREAM, 'rolling'], expand_wildcards: 'all' })
    const sessionHits = await store.search({
      index: SESSIONS_STREAM,
      body: { size: 10000, query: { ids: { values: sessions } }, _source: false },
    })
    expect(sessionHits.hits.hits.map((h) => h._id).sort()).toEqual([...sessions].sort())
    const docHits = await store.search({ index: 'rolling', body: { size: 10000, query: { ids: { values: docs } }, _source: false } })
    expect(docHits.hits.hits.map((h) => h._id).sort()).toEqual([...docs].sort())
    expect(sessions.length).toBeGreaterThan(5)
    expect(docs.length).toBeGreaterThan(5)

    // In platform mode each node answers /_prometheus/metrics itself (it is not forwarded to the platform).
    const metrics = await send(nodes[0]!.url, 'GET', '/_prometheus/metrics', { authorization: admin })
    expect(metrics.status).toBe(200)
    expect(metrics.text).toMatch(
      /svc_http_request_duration_seconds_count\{method="POST",route="\/_plugins\/_setup\/ai_assistant\/sessions",status="200"\} [1-9]/,
    )
  }, 240_000)
})

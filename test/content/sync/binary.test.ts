// The compiled binary against the CTI test server: kill -9 at random moments of a snapshot load and
// of change application, restart, sync again, and the content is the same, document by document,
// as after an uninterrupted run (issue 15 item 3, issue 19 items 1, 2 and 5). A truncated first
// snapshot leaves the consumer `failed` with nothing visible, never `ready`.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { payloads, startCtiServer, type CtiServer, type FakeConsumer } from '../../fixtures/cti/server'
import { spawnBinary, type SpawnedServer } from '../../helpers/spawn-binary'
import { feedConsumers, feedEnv } from './harness'
import { nodeCall } from '../../helpers/calls'
import { waitFor } from '../../helpers/wait'

const { IOCS, VULNS } = feedConsumers('5')
const KILLS = 10

let cti: CtiServer
let iocs: FakeConsumer
let vulns: FakeConsumer
const dirs: string[] = []

/** A feed with a snapshot and changes after it (creates, updates of snapshot and new documents, deletes). */
function seed() {
  iocs = cti.consumer(IOCS.context, IOCS.name)
  vulns = cti.consumer(VULNS.context, VULNS.name)
  for (let n = 1; n <= 2000; n++)
    iocs.create(String(n), payloads.ioc(String(n), n % 3 === 0 ? { type: 'url', name: `http://bad.example/${n}` } : {}))
  for (let n = 1; n <= 2000; n++) vulns.create(`CVE-2024-${n}`, payloads.cve(`CVE-2024-${n}`, { score: n % 10 }))
  iocs.publishSnapshot({ linesPerEntry: 500 })
  vulns.publishSnapshot({ linesPerEntry: 500 })
  for (let n = 0; n < 800; n++) {
    const id = String(1 + ((n * 7) % 2000))
    if (n % 4 === 0) iocs.create(`new-${n}`, payloads.ioc(`new-${n}`))
    else if (n % 4 === 1) iocs.update(id, [{ op: 'replace', path: '/document/confidence', value: n % 100 }])
    else if (n % 4 === 2) iocs.update(`new-${n - 2}`, [{ op: 'replace', path: '/document/tags', value: [`t${n}`] }])
    else iocs.delete(String(2000 - n))
  }
  for (let n = 0; n < 400; n++) {
    if (n % 2 === 0) vulns.create(`CVE-2025-${n}`, payloads.cve(`CVE-2025-${n}`))
    else vulns.update(`CVE-2024-${n}`, [{ op: 'replace', path: '/severity', value: `s${n}` }])
  }
}

const env = () => feedEnv(cti, iocs, vulns, 5000)

const dataDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'svc-sync-e2e-'))
  dirs.push(d)
  return d
}

const call = (s: SpawnedServer, method: string, path: string, body?: unknown) => nodeCall(s, method, path, body)

async function consumer(s: SpawnedServer, type: string): Promise<any> {
  const r = await call(s, 'GET', `/.svc-cti-consumers/_doc/${encodeURIComponent(type)}`)
  return r.status === 200 ? r.body._source : undefined
}

/** Waits until both consumers are `ready` at the feed's last offset with their post-sync done. */
async function synced(s: SpawnedServer, timeoutMs = 120_000): Promise<void> {
  const done = (c: any, f: FakeConsumer) => c?.status === 'ready' && c.local_offset === f.lastOffset && !c.post_sync_pending
  await waitFor(async () => done(await consumer(s, IOCS.type), iocs) && done(await consumer(s, VULNS.type), vulns), {
    timeoutMs,
    intervalMs: 100,
    what: 'both consumers synchronised',
  }).catch((e: Error) => {
    throw new Error(`${e.message}:\n${s.output.slice(-20).join('\n')}`)
  })
}

/** Resolves when the node logs that its start-up sync pass began. */
async function syncStarted(s: SpawnedServer, timeoutMs = 60_000): Promise<void> {
  await waitFor(() => s.output.some((l) => l.includes('"content sync started"')), { timeoutMs, intervalMs: 10, what: 'a sync pass' }).catch(
    (e: Error) => {
      throw new Error(`${e.message}:\n${s.output.slice(-20).join('\n')}`)
    },
  )
}

/** Every document of an alias, `_id` -> `_source`, paged by `_id`. */
async function contents(s: SpawnedServer, alias: string): Promise<Map<string, unknown>> {
  await call(s, 'POST', `/${alias}/_refresh?expand_wildcards=all`)
  const out = new Map<string, unknown>()
  let after: unknown[] | undefined
  for (;;) {
    const r = await call(s, 'POST', `/${alias}/_search?expand_wildcards=all`, {
      size: 2000,
      sort: [{ _id: 'asc' }],
      ...(after ? { search_after: after } : {}),
    })
    if (r.status !== 200) throw new Error(`search ${alias}: ${r.status} ${JSON.stringify(r.body)}`)
    const hits = r.body.hits.hits
    for (const h of hits) out.set(h._id, h._source)
    if (hits.length < 2000) return out
    after = hits[hits.length - 1].sort
  }
}

function expectSame(actual: Map<string, unknown>, expected: Map<string, unknown>) {
  expect(actual.size).toBe(expected.size)
  const differing = [...expected].filter(([id, src]) => !Bun.deepEquals(actual.get(id), src)).map(([id]) => id)
  expect(differing).toEqual([])
}

beforeAll(() => {
  cti = startCtiServer()
  seed()
})
afterAll(async () => {
  await cti.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('kill -9 during a sync', () => {
  test(`${KILLS} kills at random moments of snapshot loads and change application: the content equals an uninterrupted run`, async () => {
    // The uninterrupted run: its content is the reference, its duration bounds the kill moments.
    const ref = await spawnBinary({ env: env(), dataDir: dataDir() })
    await syncStarted(ref)
    const t0 = Date.now()
    await synced(ref)
    const duration = Date.now() - t0
    const expected = { iocs: await contents(ref, IOCS.alias), vulns: await contents(ref, VULNS.alias) }
    await ref.stop()
    expect(expected.iocs.size).toBeGreaterThan(2000)
    expect(expected.iocs.has('__ioc_type_hashes__')).toBe(true)

    const dir = dataDir()
    const moments: number[] = []
    for (let k = 0; k < KILLS; k++) {
      const s = await spawnBinary({ env: env(), dataDir: dir })
      // Moments of the sync pass (a kill during Setup's bootstrap is another subject).
      await syncStarted(s)
      const at = Math.round(Math.random() * duration * 1.2)
      moments.push(at)
      await Bun.sleep(at)
      await s.stop('SIGKILL')
    }
    const last = await spawnBinary({ env: env(), dataDir: dir })
    try {
      await synced(last)
      expectSame(await contents(last, IOCS.alias), expected.iocs)
      expectSame(await contents(last, VULNS.alias), expected.vulns)
      // No download of a killed process is left behind.
      const snapshots = join(dir, 'cti-snapshots')
      expect(existsSync(snapshots) ? readdirSync(snapshots).filter((n) => n.includes('.download-')) : []).toEqual([])
      console.log(`kill moments (ms after the pass started, uninterrupted pass ${duration} ms): ${moments.join(', ')}`)
    } finally {
      const code = await Promise.race([last.stop(), Bun.sleep(20_000).then(() => 'hung')])
      if (code === 'hung') {
        console.log(last.output.slice(-30).join('\n'))
        process.kill(last.pid, 'SIGKILL')
      }
      expect(code).toBe(0)
    }
  }, 400_000)
})

describe('a truncated first snapshot', () => {
  test('the consumer ends failed with nothing visible; once the archive is whole the next pass loads it', async () => {
    const c = cti.consumer('t1-vd-trunc', 'public-vd-trunc')
    for (let n = 1; n <= 2000; n++) c.create(`CVE-2023-${n}`, payloads.cve(`CVE-2023-${n}`))
    c.publishSnapshot({ linesPerEntry: 200 })
    const whole = c.snapshot!.zip
    c.snapshot!.zip = whole.slice(0, Math.floor(whole.length * 0.6))
    const s = await spawnBinary({
      env: { ...env(), SVC_SETTING_plugins__content_manager__catalog__vulnerabilities: c.url },
      dataDir: dataDir(),
    })
    try {
      const until = Date.now() + 30_000
      let state: any
      while (Date.now() < until && (state = await consumer(s, VULNS.type))?.status !== 'failed') await Bun.sleep(100)
      expect(state).toMatchObject({ status: 'failed', local_offset: 0 })
      expect((await call(s, 'GET', `/${VULNS.alias}/_count?expand_wildcards=all`)).body.count).toBe(0)

      c.snapshot!.zip = whole
      // 409 while the failed pass still runs its one retry; 202 once it is over.
      let started = 0
      for (const until = Date.now() + 30_000; Date.now() < until && started !== 202; await Bun.sleep(100))
        started = (await call(s, 'POST', '/_plugins/_content_manager/update')).status
      expect(started).toBe(202)
      const ready = Date.now() + 30_000
      while (Date.now() < ready && (state = await consumer(s, VULNS.type))?.status !== 'ready') await Bun.sleep(100)
      expect(state).toMatchObject({ status: 'ready', local_offset: c.lastOffset })
      expect((await call(s, 'GET', `/${VULNS.alias}/_count?expand_wildcards=all`)).body.count).toBe(2000)
    } finally {
      await s.stop()
    }
  }, 90_000)
})

// End to end (issue 29 item 3), the compiled binary: `ready` means the IoC post-sync ran over exactly
// the stored IoCs, i.e. the `__ioc_type_hashes__` summary is the digest of the IoCs stored. Checked
// after a kill -9 during the post-sync's scan and restart, and after writes to the IoC index the
// post-sync never saw (an operator's delete and update through the index API): the next pass
// notices that the index is not what the last post-sync read and runs it again.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { IOC_SUMMARY_ID, SetDigest } from '../../src/content/sync/ioc-post-sync'
import { payloads, startCtiServer, type CtiServer, type FakeConsumer } from '../fixtures/cti/server'
import { spawnBinary, type SpawnedServer, requireBinary } from '../helpers/spawn-binary'
import { feedConsumers, feedEnv } from '../content/sync/harness'
import { waitFor } from '../helpers/wait'

const { IOCS, VULNS } = feedConsumers('postsync-kill')
const IOC_COUNT = 20_000
let cti: CtiServer
let iocs: FakeConsumer
let node: SpawnedServer | undefined
const root = mkdtempSync(join(tmpdir(), 'svc-ioc-kill-'))
const dataDir = join(root, 'data')
// The export is written beside the Engine's socket directory: its temporary file shows the scan running.
const socket = join(root, 'engine', 'sockets', 'engine.sock')
const exportDir = join(root, 'engine', 'data')

const env = () => ({
  ...feedEnv(cti, iocs, cti.consumer(VULNS.context, VULNS.name), 5000),
  SVC_SETTING_plugins__content_manager__engine__socket_path: socket,
  SVC_SETTING_plugins__content_manager__max_items_per_bulk: '1000',
})

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(node!.url + path, {
    method,
    headers: { authorization: node!.auth, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, body: await res.json().catch(() => undefined) }
}

const consumer = async () => {
  const r = await call('GET', `/.svc-cti-consumers/_doc/${encodeURIComponent(IOCS.type)}`)
  return r.status === 200 ? r.body._source : undefined
}

const until = <T>(what: string, check: () => Promise<T | undefined>, ms = 120_000) =>
  waitFor(check, { timeoutMs: ms, what, intervalMs: 50 }).catch((e: Error) => {
    throw new Error(`${e.message}:\n${node?.output.slice(-20).join('\n')}`)
  })

const readyAtFeed = () =>
  until('the IoC consumer ready at the feed', async () => {
    const s = await consumer()
    return s?.status === 'ready' && s.local_offset === iocs.lastOffset && !s.post_sync_pending ? s : undefined
  })

/** The summary's per-type hashes recomputed from the stored IoCs, as the post-sync computes them. */
async function storedDigests(): Promise<Record<string, string>> {
  await call('POST', `/${IOCS.alias}/_refresh?expand_wildcards=all`)
  const perType = new Map<string, SetDigest>()
  let after: unknown[] | undefined
  for (;;) {
    const r = await call('POST', `/${IOCS.alias}/_search?expand_wildcards=all`, {
      size: 5000,
      sort: [{ _id: 'asc' }],
      _source: ['document.type', 'hash.sha256'],
      query: { bool: { must_not: [{ ids: { values: [IOC_SUMMARY_ID] } }] } },
      ...(after ? { search_after: after } : {}),
    })
    const hits = r.body.hits.hits
    for (const h of hits) {
      const type = String(h._source.document?.type ?? '')
      if (!perType.has(type)) perType.set(type, new SetDigest())
      perType.get(type)!.add(h._id, String(h._source.hash?.sha256 ?? ''))
    }
    if (hits.length < 5000) break
    after = hits[hits.length - 1].sort
  }
  return Object.fromEntries([...perType.keys()].sort().map((t) => [t, perType.get(t)!.digest()]))
}

async function summary(): Promise<Record<string, string>> {
  const r = await call('GET', `/${IOCS.alias}/_doc/${IOC_SUMMARY_ID}`)
  expect(r.status).toBe(200)
  return Object.fromEntries(Object.entries(r.body._source.type_hashes).map(([t, v]: [string, any]) => [t, v.hash.sha256]))
}

beforeAll(() => {
  requireBinary()
  mkdirSync(join(root, 'engine', 'sockets'), { recursive: true })
  cti = startCtiServer()
  iocs = cti.consumer(IOCS.context, IOCS.name)
  for (let n = 1; n <= IOC_COUNT; n++)
    iocs.create(String(n), payloads.ioc(String(n), n % 3 === 0 ? { type: 'url', name: `http://bad.example/${n}` } : {}))
  iocs.publishSnapshot({ linesPerEntry: 5000 })
  for (let n = 1; n <= 200; n++) iocs.update(String(n), [{ op: 'replace', path: '/document/confidence', value: n % 100 }])
})
afterAll(async () => {
  await node?.stop('SIGKILL')
  await cti?.stop()
  rmSync(root, { recursive: true, force: true })
})

test('killed during the IoC post-sync: the restarted node redoes it before ready', async () => {
  node = await spawnBinary({ dataDir, env: env() })
  const scanning = () => existsSync(exportDir) && readdirSync(exportDir).some((n) => n.includes('.tmp-'))
  await until('the post-sync scan', async () => scanning() || undefined)
  await Bun.sleep(100 + Math.random() * 200)
  expect(await node.stop('SIGKILL')).not.toBe(0)

  node = await spawnBinary({ dataDir, env: env() })
  expect(await readyAtFeed()).toMatchObject({ pending_sync_phases: [] })
  expect(await summary()).toEqual(await storedDigests())
}, 300_000)

test('IoCs written behind the post-sync are caught by the next pass, which runs it again', async () => {
  const before = await summary()
  const index = (await call('GET', `/${IOCS.alias}/_alias?expand_wildcards=all`)).body
  const physical = Object.keys(index)[0]!
  expect((await call('DELETE', `/${physical}/_doc/7?refresh=true`)).status).toBe(200)
  const eight = (await call('GET', `/${physical}/_doc/8`)).body._source
  eight.document.type = 'domain'
  eight.hash.sha256 = 'changed-by-hand'
  expect((await call('PUT', `/${physical}/_doc/8?refresh=true`, eight)).status).toBe(200)
  expect(await storedDigests()).not.toEqual(before)

  const last = (await consumer()).last_pass.finished_at
  expect((await call('POST', '/_plugins/_content_manager/update')).status).toBe(202)
  const after = await until('the next pass', async () => {
    const s = await consumer()
    return s?.status === 'ready' && s.last_pass?.finished_at !== last ? s : undefined
  })
  expect(after).toMatchObject({ local_offset: iocs.lastOffset, pending_sync_phases: [] })
  expect(await summary()).toEqual(await storedDigests())
  expect(node!.output.some((l) => l.includes('the IoC summary does not describe the stored IoCs'))).toBe(true)
}, 120_000)

// Air-gapped nodes (issue 15 item 9), against the binary: content synchronised on a connected node
// is exported with `svc-ext content export`, imported on a node that cannot reach the CTI API with
// `svc-ext content import`, and its next sync pass loads it through the snapshot code path: the
// same documents (ids, documents, hashes, offsets) as on the connected node.
import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { payloads, startCtiServer, type CtiServer } from '../../fixtures/cti/server'
import { runBinary, spawnBinary, type SpawnedServer } from '../../helpers/spawn-binary'

const dirs: string[] = []
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'svc-offline-'))
  dirs.push(d)
  return d
}
let cti: CtiServer | undefined
afterAll(async () => {
  await cti?.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const TYPES = {
  ruleset: 'cti:catalog:consumer:ruleset',
  iocs: 'cti:catalog:consumer:iocs',
  vulnerabilities: 'cti:catalog:consumer:vulnerabilities',
}

async function get(s: SpawnedServer, path: string): Promise<any> {
  const r = await fetch(s.url + path, { headers: { authorization: s.auth } })
  return r.status === 200 ? r.json() : undefined
}

async function allReady(s: SpawnedServer, kinds: Array<keyof typeof TYPES>): Promise<void> {
  const until = Date.now() + 60_000
  for (;;) {
    const states = await Promise.all(kinds.map((k) => get(s, `/.svc-cti-consumers/_doc/${encodeURIComponent(TYPES[k])}`)))
    if (states.every((d) => d?._source?.status === 'ready' && d._source.local_offset > 0 && !d._source.post_sync_pending)) return
    if (Date.now() > until)
      throw new Error(`not ready: ${JSON.stringify(states.map((d) => d?._source))}\n${s.output.slice(-15).join('\n')}`)
    await Bun.sleep(100)
  }
}

async function docs(s: SpawnedServer, alias: string, query: unknown = { match_all: {} }): Promise<Map<string, any>> {
  const r = await fetch(`${s.url}/${alias}/_search?expand_wildcards=all`, {
    method: 'POST',
    headers: { authorization: s.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ size: 1000, query }),
  })
  const body: any = await r.json()
  return new Map(body.hits.hits.map((h: any) => [h._id, h._source]))
}

describe('air-gapped nodes', () => {
  test('export on a connected node, import on a node without the CTI API: the same content after its next pass', async () => {
    cti = startCtiServer()
    const rules = cti.consumer('t1-ruleset-5', 'public-ruleset-5')
    for (const id of ['r1', 'r2']) rules.create(id, payloads.rule(id))
    rules.create('d1', payloads.decoder('d1'))
    rules.create('k1', payloads.kvdb('k1'))
    rules.create('i1', payloads.integration('i1', { rules: ['r1', 'r2'], decoders: ['d1'], kvdbs: ['k1'] }))
    rules.create('p1', payloads.policy('p1', { integrations: ['i1'] }))
    rules.publishSnapshot()
    const iocs = cti.consumer('t1-iocs-5', 'public-iocs-5')
    for (let n = 1; n <= 30; n++) iocs.create(String(n), payloads.ioc(String(n)))
    iocs.publishSnapshot()
    const vulns = cti.consumer('t1-vd-5', 'public-vd-5')
    for (let n = 1; n <= 20; n++) vulns.create(`CVE-2024-${n}`, payloads.cve(`CVE-2024-${n}`))
    vulns.publishSnapshot()
    vulns.create('CVE-2025-1', payloads.cve('CVE-2025-1')) // a change after the snapshot

    const online = fresh()
    const a = await spawnBinary({
      dataDir: online,
      env: {
        SVC_SETTING_plugins__content_manager__cti__api: cti.base,
        SVC_SETTING_plugins__content_manager__catalog__ruleset: rules.url,
        SVC_SETTING_plugins__content_manager__catalog__iocs: iocs.url,
        SVC_SETTING_plugins__content_manager__catalog__vulnerabilities: vulns.url,
        SVC_SETTING_plugins__content_manager__catalog__update_on_start: 'true',
        SVC_SETTING_plugins__content_manager__engine__mock: 'true',
      },
    })
    let expected: Record<string, Map<string, any>>
    try {
      await allReady(a, ['ruleset', 'iocs', 'vulnerabilities'])
      const standard = { term: { 'space.name': 'standard' } }
      expected = {
        rules: await docs(a, 'svc-threatintel-rules', standard),
        decoders: await docs(a, 'svc-threatintel-decoders', standard),
        kvdbs: await docs(a, 'svc-threatintel-kvdbs', standard),
        integrations: await docs(a, 'svc-threatintel-integrations', standard),
        iocs: await docs(a, 'svc-threatintel-enrichments', { bool: { must_not: { ids: { values: ['__ioc_type_hashes__'] } } } }),
        vulns: await docs(a, '.svc-threatintel-vulnerabilities'),
      }
    } finally {
      await a.stop()
    }
    expect(expected.rules.size).toBe(2)
    expect(expected.vulns.size).toBe(21)

    const archive = join(fresh(), 'content.zip')
    const env = { SVC_SETTING_path__data: online, HOME: process.env.HOME ?? '/tmp' }
    const exported = await runBinary(['content', 'export', '--out', archive, '--iocs', '--vulnerabilities'], undefined, env)
    expect(exported.stderr).toBe('')
    expect(exported.code).toBe(0)
    expect(JSON.parse(exported.stdout).documents).toMatchObject({
      rules: 2,
      decoders: 1,
      kvdbs: 1,
      integrations: 1,
      enrichments: 30,
      vulnerabilities: 21,
    })
    expect(existsSync(archive)).toBe(true)

    // The air-gapped node: a CTI API that does not answer.
    const offline = fresh()
    const bad = join(fresh(), 'bad.zip')
    writeFileSync(bad, 'not a zip')
    const refused = await runBinary(['content', 'import', bad], undefined, { ...env, SVC_SETTING_path__data: offline })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('not a readable snapshot')
    const imported = await runBinary(['content', 'import', archive], undefined, { ...env, SVC_SETTING_path__data: offline })
    expect(imported.code).toBe(0)
    expect(JSON.parse(imported.stdout).consumers).toEqual(['ruleset', 'iocs', 'vulnerabilities'])

    const b = await spawnBinary({
      dataDir: offline,
      env: {
        SVC_SETTING_plugins__content_manager__cti__api: 'http://127.0.0.1:9/api/v1',
        SVC_SETTING_plugins__content_manager__catalog__update_on_start: 'true',
        SVC_SETTING_plugins__content_manager__engine__mock: 'true',
      },
    })
    try {
      await allReady(b, ['ruleset', 'iocs', 'vulnerabilities'])
      const standard = { term: { 'space.name': 'standard' } }
      const same = (actual: Map<string, any>, wanted: Map<string, any>) => {
        expect([...actual.keys()].sort()).toEqual([...wanted.keys()].sort())
        for (const [id, src] of wanted) {
          expect(actual.get(id).document).toEqual(src.document)
          expect(actual.get(id).hash).toEqual(src.hash)
          expect(actual.get(id).offset).toEqual(src.offset)
        }
      }
      same(await docs(b, 'svc-threatintel-rules', standard), expected.rules)
      same(await docs(b, 'svc-threatintel-decoders', standard), expected.decoders)
      same(await docs(b, 'svc-threatintel-kvdbs', standard), expected.kvdbs)
      same(await docs(b, 'svc-threatintel-integrations', standard), expected.integrations)
      same(
        await docs(b, 'svc-threatintel-enrichments', { bool: { must_not: { ids: { values: ['__ioc_type_hashes__'] } } } }),
        expected.iocs,
      )
      same(await docs(b, '.svc-threatintel-vulnerabilities'), expected.vulns)
    } finally {
      await b.stop()
    }
  }, 120_000)

  test('a fresh install with no CTI API and no snapshot of its own loads the packaged sample content, once', async () => {
    const s = await spawnBinary({
      dataDir: fresh(),
      env: {
        SVC_SETTING_plugins__content_manager__cti__api: 'http://127.0.0.1:9/api/v1',
        SVC_SETTING_plugins__content_manager__catalog__update_on_start: 'true',
        SVC_SETTING_plugins__content_manager__engine__mock: 'true',
      },
    })
    try {
      await allReady(s, ['ruleset', 'iocs'])
      const standard = { term: { 'space.name': 'standard' } }
      expect((await docs(s, 'svc-threatintel-rules', standard)).size).toBe(3)
      expect((await docs(s, 'svc-threatintel-integrations', standard)).size).toBe(2)
      expect((await docs(s, 'svc-threatintel-decoders', standard)).size).toBe(2)
      expect((await docs(s, 'svc-threatintel-kvdbs', standard)).size).toBe(1)
      expect((await docs(s, 'svc-threatintel-filters', standard)).size).toBe(1)
      const policy = [...(await docs(s, 'svc-threatintel-policies', standard)).values()][0]
      expect(policy.document.integrations).toHaveLength(2)
      const iocs = await docs(s, 'svc-threatintel-enrichments')
      expect(iocs.size).toBe(6) // five IoCs and the type-hash summary
      expect(Object.keys(iocs.get('__ioc_type_hashes__').type_hashes).sort()).toEqual(['domain', 'ip', 'ip:port', 'url'])
      // Consumed: it is now the stable snapshot, and no packaged copy is left to load again.
      expect(existsSync(join(s.dataDir, 'cti-snapshots', 'ruleset.stable.zip'))).toBe(true)
      expect(existsSync(join(s.dataDir, 'cti-snapshots', 'ruleset.zip'))).toBe(false)
    } finally {
      await s.stop()
    }
  }, 60_000)
})

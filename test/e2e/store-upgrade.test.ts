// Data directory upgrades (issue 17 item 4): a data directory of the current schema, made by
// scripts/fixtures/make-data-dir.ts, opened after a simulated schema change (a test-only step
// appended to the product's migration list): migrated in place after a backup, in one
// transaction; then the binary, which knows only the current schema, refuses the newer directory.
import { beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { indexApiRoutes } from '../../src/indexer/routes'
import { latestVersion, type Migration, openEmbeddedStore, SCHEMA_MIGRATIONS } from '../../src/store/embedded'
import { FIXTURE_DOCS, makeDataDir } from '../../scripts/fixtures/make-data-dir'
import { startTestApp } from '../helpers/app'
import { runBinary, requireBinary } from '../helpers/spawn-binary'

const CURRENT = latestVersion(SCHEMA_MIGRATIONS)

beforeAll(() => {
  requireBinary()
})

function userVersion(file: string): number {
  const db = new Database(file, { readonly: true })
  try {
    return (db.query('PRAGMA user_version').get() as { user_version: number }).user_version
  } finally {
    db.close()
  }
}
function tables(file: string): string[] {
  const db = new Database(file, { readonly: true })
  try {
    return (db.query("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')").all() as Array<{ name: string }>).map((r) => r.name)
  } finally {
    db.close()
  }
}

/** The simulated schema change: a new column with a backfill and a new index over it. */
const nextStep: Migration = {
  version: CURRENT + 1,
  description: 'test: documents carry their source length',
  up(db) {
    db.run('ALTER TABLE docs ADD COLUMN src_len INTEGER')
    db.run('UPDATE docs SET src_len = length(src)')
    db.run('CREATE INDEX docs_src_len ON docs (ix, src_len)')
  },
}

describe('data directory upgrades', () => {
  test('a newer schema migrates the directory in place after a backup; the data is served over HTTP', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'svc-upgrade-')), 'data')
    const { file } = await makeDataDir(dataDir)
    expect(userVersion(file)).toBe(CURRENT)

    const app = await startTestApp({
      users: [{ name: 'admin', password: 'Admin-pass-1', roles: ['all_access'] }],
      dataDir,
      storeOptions: { migrations: [...SCHEMA_MIGRATIONS, nextStep] },
      settingsIn: 'memory',
      bootstrap: false,
      routes: (deps) => ({ pluginRoutes: [], groups: [indexApiRoutes(deps)] }),
    })
    try {
      for (const d of FIXTURE_DOCS) {
        const r = await app.request('GET', `/legacy-read/_doc/${d.id}`, { user: 'admin' })
        expect(r.status).toBe(200)
        expect(r.body._source).toEqual(d.body)
      }
      const hits = await app.request('POST', '/legacy/_search', { user: 'admin', body: { query: { range: { level: { gte: 7 } } } } })
      expect(hits.body.hits.hits.map((h: { _id: string }) => h._id).sort()).toEqual(['b', 'c'])
      const put = await app.request('PUT', '/legacy/_doc/d?refresh=true', { user: 'admin', body: { title: 'after upgrade', level: 1 } })
      expect(put.status).toBe(201)
    } finally {
      await app.stop()
    }
    expect(userVersion(file)).toBe(CURRENT + 1)
    expect(tables(file)).toContain('docs_src_len')

    // The backup is the directory as it was: the old schema version, the old documents.
    const backups = readdirSync(dataDir).filter((f) => f.startsWith(`store.db.schema-v${CURRENT}.`) && f.endsWith('.bak'))
    expect(backups).toHaveLength(1)
    const backup = join(dataDir, backups[0])
    expect(userVersion(backup)).toBe(CURRENT)
    expect(tables(backup)).not.toContain('docs_src_len')
    const copy = new Database(backup, { readonly: true })
    expect((copy.query('SELECT count(*) AS n FROM docs').get() as { n: number }).n).toBe(FIXTURE_DOCS.length)
    copy.close()

    // The binary knows only CURRENT: it refuses the migrated directory, exits non-zero, says why.
    const r = await runBinary(['serve'], undefined, {
      SVC_SETTING_http__port: '0',
      SVC_SETTING_path__data: dataDir,
      SVC_SETTING_plugins__content_manager__catalog__update_on_start: 'false',
      SVC_INITIAL_ADMIN_PASSWORD: 'e2e-Admin-pass-1',
    })
    expect(r.code).toBe(1)
    expect(r.stdout).not.toContain('"svc-ext started"')
    expect(r.stderr).toContain(`has schema version ${CURRENT + 1}, newer than the ${CURRENT} this svc-ext supports`)
    expect(r.stderr).toContain(file)
    expect(userVersion(file)).toBe(CURRENT + 1) // left as it was
  })

  test('a failing step leaves the store exactly as it was (one transaction)', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'svc-upgrade-')), 'data')
    const { file } = await makeDataDir(dataDir)
    const failing: Migration = {
      version: CURRENT + 1,
      description: 'test: fails half way',
      up(db) {
        db.run('CREATE TABLE half_done (x)')
        db.run('DELETE FROM docs')
        throw new Error('step failed half way')
      },
    }
    expect(() => openEmbeddedStore(file, { migrations: [...SCHEMA_MIGRATIONS, failing] })).toThrow('step failed half way')
    expect(userVersion(file)).toBe(CURRENT)
    expect(tables(file)).not.toContain('half_done')
    const store = openEmbeddedStore(file)
    try {
      expect((await store.count({ index: 'legacy' })).count).toBe(FIXTURE_DOCS.length)
    } finally {
      await store.close()
    }
  })
})

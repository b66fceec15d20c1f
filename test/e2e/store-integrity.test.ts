// Store integrity at start (issue 12 item 7), against the compiled binary: a lost, emptied, stale or
// corrupted store file stops the start with an error naming the file; data files are private.
import { beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { copyFileSync, existsSync, mkdtempSync, openSync, closeSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runBinary, spawnBinary, requireBinary } from '../helpers/spawn-binary'

beforeAll(() => {
  requireBinary()
})

const newDir = () => mkdtempSync(join(tmpdir(), 'svc-integrity-'))

/** Starts the binary on `dataDir`, writes one acknowledged document, stops it with `signal`. */
async function writeOne(dataDir: string, id: string, signal: NodeJS.Signals = 'SIGTERM') {
  const node = await spawnBinary({ dataDir })
  const res = await fetch(`${node.url}/keep/_doc/${id}?refresh=true`, {
    method: 'PUT',
    headers: { authorization: node.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ n: 1 }),
  })
  expect(res.status).toBeLessThan(300)
  await node.stop(signal)
}

/** A start that must be refused: exits non-zero before listening, naming the file. */
async function refusedStart(dataDir: string) {
  const r = await runBinary(['serve'], undefined, {
    SVC_SETTING_http__port: '0',
    SVC_SETTING_path__data: dataDir,
    SVC_SETTING_plugins__content_manager__catalog__update_on_start: 'false',
    SVC_SETTING_plugins__content_manager__telemetry__enabled: 'false',
    SVC_INITIAL_ADMIN_PASSWORD: 'e2e-Admin-pass-1',
  })
  expect(r.code).not.toBe(0)
  expect(r.stdout).not.toContain('"svc-ext started"')
  expect(r.stderr).toContain(join(dataDir, 'store.db'))
  // The same reason as one JSON log line.
  const line = r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .find((l) => l.msg === 'store check failed, not starting')
  expect(line?.file).toContain('store.db')
  return r.stderr
}

describe('store integrity at start', () => {
  test('data files are created 0600 in a 0700 directory, with a marker beside the store', async () => {
    const dataDir = join(newDir(), 'data')
    await writeOne(dataDir, '1')
    expect(statSync(dataDir).mode & 0o777).toBe(0o700)
    for (const f of ['store.db', 'store.db.marker', 'journal.db']) expect(statSync(join(dataDir, f)).mode & 0o777).toBe(0o600)
  })

  test('a deleted store file with its WAL left in place stops the start', async () => {
    const dataDir = newDir()
    await writeOne(dataDir, '1', 'SIGKILL') // kill -9 leaves the WAL
    expect(existsSync(join(dataDir, 'store.db-wal'))).toBe(true)
    rmSync(join(dataDir, 'store.db'))
    const err = await refusedStart(dataDir)
    expect(err).toContain('is missing')
    expect(err).toContain('Restore the data directory')
  })

  test('an emptied store file stops the start', async () => {
    const dataDir = newDir()
    await writeOne(dataDir, '1', 'SIGKILL')
    truncateSync(join(dataDir, 'store.db'), 0)
    expect(await refusedStart(dataDir)).toContain('is empty')
  })

  test('a store file older than its marker (an earlier copy put back) stops the start', async () => {
    const dataDir = newDir()
    await writeOne(dataDir, '1')
    copyFileSync(join(dataDir, 'store.db'), join(dataDir, 'old.db'))
    await writeOne(dataDir, '2')
    copyFileSync(join(dataDir, 'old.db'), join(dataDir, 'store.db'))
    expect(await refusedStart(dataDir)).toContain('older than the generation')
  })

  test("a corrupted store file fails SQLite's check and stops the start", async () => {
    const dataDir = newDir()
    await writeOne(dataDir, '1')
    const file = join(dataDir, 'store.db')
    const size = statSync(file).size
    // Garbage over every page after the first (the header stays valid, so SQLite opens the file).
    const fd = openSync(file, 'r+')
    const junk = new Uint8Array(4096).map((_, i) => (i * 131 + 7) & 0xff)
    for (let off = 16384; off < size; off += 8192) writeSync(fd, junk, 0, junk.length, off)
    closeSync(fd)
    expect(await refusedStart(dataDir)).toMatch(/quick_check|cannot be opened/)
  })

  test('a healthy store restarts with its data after kill -9 and after a clean stop', async () => {
    const dataDir = newDir()
    await writeOne(dataDir, '1', 'SIGKILL')
    await writeOne(dataDir, '2')
    const node = await spawnBinary({ dataDir })
    try {
      const res = await fetch(`${node.url}/keep/_count`, { headers: { authorization: node.auth } })
      expect(((await res.json()) as { count: number }).count).toBe(2)
    } finally {
      await node.stop()
    }
    // The marker and the store agree on the generation after a clean stop.
    const db = new Database(join(dataDir, 'store.db'), { readonly: true })
    const gen = (db.query("SELECT value FROM store_meta WHERE key = 'generation'").get() as { value: string }).value
    db.close()
    expect(JSON.parse(await Bun.file(join(dataDir, 'store.db.marker')).text()).generation).toBe(Number(gen))
  })
})

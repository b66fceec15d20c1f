// Cost of the resource-creation lock: 1,000 rule creations from 8 concurrent clients through the
// real ResourceService (embedded store on disk, real security, mocked Engine), once with the
// (type, space) lock and once with the same count-and-create run without it, in the same process.
// Each variant gets a fresh store so both start from an empty draft space. Without the lock the
// limit is not enforced under concurrency (that is what the lock is for), so the limit is set far
// above the count and only throughput is compared.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClusterSettings, memoryPersistence } from '../../src/config/cluster-settings'
import { buildNodeConfig } from '../../src/config/node-config'
import type { CreationLock } from '../../src/content/resources/creation-lock'
import { createContentManager } from '../../src/content/manager'
import { createLogger } from '../../src/http/log'
import { Journal } from '../../src/journal/journal'
import { createSecurity } from '../../src/security'
import { CONTENT } from '../../src/setup/indices'
import { EmbeddedStore } from '../../src/store/embedded/store'

const CREATIONS = 1000
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 8)
const USER = 'bench'
const PASSWORD = 'bench-password-1'

const noLock: CreationLock = (_deps, _settings, _lock, fn) => fn(async () => {})

async function run(label: string, creationLock: CreationLock | undefined) {
  const root = mkdtempSync(join(tmpdir(), 'svc-content-bench-'))
  mkdirSync(join(root, 'security'), { recursive: true })
  const hash = await Bun.password.hash(PASSWORD, { algorithm: 'bcrypt', cost: 4 })
  writeFileSync(join(root, 'security', 'internal_users.yml'), `${USER}:\n  hash: "${hash}"\n  backend_roles: ["admin"]\n`)
  const log = createLogger({ level: 'error' })
  const node = buildNodeConfig(
    { 'plugins.content_manager.engine.mock': true, 'plugins.content_manager.max_rules': CREATIONS * 10 },
    'bench',
    root,
  )
  const { security } = await createSecurity({ node, dataDir: join(root, 'data'), log, env: {} })
  const store = new EmbeddedStore(join(root, 'store.db'), { synchronous: 'NORMAL' })
  for (const def of CONTENT)
    await store.createIndex({ index: def.index, body: { ...def.body, aliases: { [def.alias]: def.aliasDefinition } } })
  const journal = new Journal(join(root, 'journal.db'))
  const settings = new ClusterSettings(node, memoryPersistence())
  const content = createContentManager({ store, settings, security, log, now: Date.now, journal, creationLock })
  await content.start()

  const auth = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`
  const caller = await security.authenticate(new Request('http://bench/', { headers: { authorization: auth } }))
  const parent = await content.resources.create(
    'integration',
    { resource: { metadata: { title: 'bench', author: 'b' }, category: 'applications' } },
    caller,
  )

  let next = 0
  let failures = 0
  const client = async () => {
    for (let i = next++; i < CREATIONS; i = next++) {
      const body = {
        integration: parent,
        resource: {
          metadata: { title: `rule ${i}`, author: 'bench' },
          level: 'low',
          logsource: { product: 'bench' },
          detection: { condition: 'selection', selection: { 'event.action': [`a${i}`] } },
        },
      }
      try {
        await content.resources.create('rule', body, caller)
      } catch {
        failures++
      }
    }
  }
  const t0 = performance.now()
  await Promise.all(Array.from({ length: CLIENTS }, client))
  const seconds = (performance.now() - t0) / 1000
  const stored = (await store.count({ index: 'svc-threatintel-rules' })).count
  const listed = ((await content.repo.getById('svc-threatintel-integrations', parent))!.document.rules as unknown[]).length
  const perSecond = CREATIONS / seconds
  console.log(
    `${label.padEnd(12)} ${perSecond.toFixed(1).padStart(8)} creations/s  (${seconds.toFixed(2)} s, stored ${stored}, listed ${listed}, failed ${failures})`,
  )
  await store.close()
  journal.close()
  rmSync(root, { recursive: true, force: true })
  return perSecond
}

console.log(`${CREATIONS} rule creations, ${CLIENTS} concurrent clients`)
const withLock = await run('with lock', undefined)
const without = await run('without lock', noLock)
console.log(`ratio with/without lock: ${(withLock / without).toFixed(2)}`)

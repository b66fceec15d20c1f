/**
 * Synthetic security events and Sigma rules for detector benchmarks: ~1 KB Linux events over
 * ~1,000 hosts, and rules as selective as real ones (a few percent of the documents match).
 * Deterministic (seeded), so runs compare.
 */
import { join } from 'node:path'
import { ClusterSettings, memoryPersistence } from '../../../src/config/cluster-settings'
import { buildNodeConfig } from '../../../src/config/node-config'
import { createLogger } from '../../../src/http/log'
import { createRuleset } from '../../../src/ruleset'
import { EVENT_STREAMS, FINDING_STREAMS } from '../../../src/setup/indices'
import { openEmbeddedStore } from '../../../src/store/embedded'
import type { Store } from '../../../src/store/port'
import { DETECTORS_INDEX } from '../../../src/ruleset/indices'
import { nextSeed } from './random'
let seed = 7
/** Starts the sequence again (or from a point `seedNow` told): the same rules and events as a run before in the same process. */
export const reseed = (from = 7) => void (seed = from)
export const seedNow = () => seed
const rnd = () => (seed = nextSeed(seed)) / 0x80000000
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]
const ACTIONS = ['login', 'logout', 'exec', 'file_open', 'connect', 'sudo', 'passwd_change', 'cron_run']
const OUTCOMES = ['success', 'failure', 'unknown']
const USERS = ['alice', 'bob', 'root', 'daemon', 'www-data', 'postgres', 'svc_backup']
const BINS = ['/usr/bin/curl', '/usr/bin/wget', '/bin/bash', '/usr/bin/python3', '/usr/sbin/sshd', '/usr/bin/nc', '/usr/bin/base64']
const PAD = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor '.repeat(8)

/** The first event's time; event i comes i seconds later. */
export const FIRST_EVENT_MS = 1_780_000_000_000

export function event(i: number) {
  const bin = pick(BINS)
  return {
    '@timestamp': new Date(FIRST_EVENT_MS + i * 1000).toISOString(),
    agent: { id: String(i % 997), name: `host-${i % 997}` },
    host: { name: `host-${i % 997}`, os: { family: 'linux', version: '6.1' } },
    event: { action: pick(ACTIONS), outcome: pick(OUTCOMES), category: 'process', kind: 'event' },
    user: { name: pick(USERS) },
    process: {
      executable: bin,
      name: bin.split('/').pop(),
      pid: i % 65536,
      command_line: `${bin} ${pick(['-O', '-c', '--quiet', '-e'])} ${pick(['http://x.example/a', '/etc/shadow', 'id', 'sh -i', 'backup.tar'])}`,
    },
    source: { ip: `10.${i % 256}.${(i >> 8) % 256}.${i % 7}`, port: 1024 + (i % 60000) },
    svc: { integration: { name: 'linux', category: 'security' } },
    message: `${i} ${PAD}`,
  }
}

// Rules as selective as real ones: each also names one of ~1,000 hosts, so a few percent of the
// documents match something (a finding-per-document stream would measure the writer, not detection).
export function rule(n: number) {
  const host = { 'host.name': `host-${(n * 37) % 997}` }
  const kinds = [
    { sel: { 'event.action': pick(ACTIONS), 'event.outcome': 'failure', 'user.name': pick(USERS), ...host }, condition: 'sel' },
    {
      sel: { 'process.command_line|contains': pick(['/etc/shadow', 'sh -i', 'http://']), 'user.name': pick(USERS), ...host },
      filter: { 'user.name': 'root' },
      condition: 'sel and not filter',
    },
    {
      sel: {
        'process.executable|endswith': [pick(BINS).split('/').pop(), pick(BINS).split('/').pop()],
        'event.outcome': 'failure',
        ...host,
      },
      net: { 'source.port|gte': 30000 },
      condition: 'sel and net',
    },
    {
      sel: { 'process.command_line|re': `${pick(['curl', 'wget', 'nc'])} .*(http|sh)`, 'user.name': pick(USERS), ...host },
      condition: 'sel',
    },
    { a: { 'user.name|startswith': 'svc_', ...host }, b: { 'event.action': ['sudo', 'passwd_change'] }, condition: 'all of them' },
  ]
  return {
    id: `bench-${n}`,
    metadata: { title: `bench rule ${n}` },
    level: 'medium',
    status: 'stable',
    logsource: { product: 'linux' },
    detection: kinds[n % kinds.length],
  }
}

/** The security port of an in-process bench: everything allowed, no document filters. */
export const BENCH_SECURITY = {
  authorizeIndices() {},
  documentFilter: () => undefined,
  hasDocumentFilters: () => false,
  hasClusterPermission: () => true,
}

/** A Ruleset Management over `store` with the named streams' templates and data streams, and the standard integration `integration`. */
export async function benchRuleset(root: string, store: Store, streams: readonly string[], integration: { id: string; title: string }) {
  const node = buildNodeConfig({ 'path.data': root }, 'bench', root)
  const settings = new ClusterSettings(node, memoryPersistence(), Date.now, 0)
  const log = createLogger({ level: 'error', write: () => {} })
  for (const def of [...EVENT_STREAMS, ...FINDING_STREAMS].filter((d) => streams.includes(d.name))) {
    await store.putIndexTemplate({ name: def.template.name, body: def.template.body })
    await store.createDataStream({ name: def.name })
  }
  const ruleset = createRuleset({ store, settings, log, now: Date.now, security: BENCH_SECURITY })
  const { id, title } = integration
  await ruleset.sync.upsertIntegration('standard', { id, metadata: { title }, category: 'security' }, false)
  return { settings, ruleset }
}

/** A Ruleset Management over `store` (by default an embedded store in `root`) with the security streams and `rules` generated rules of `int-linux`. */
export async function openBenchRuleset(root: string, rules: number, store: Store = openEmbeddedStore(join(root, 'store.db'))) {
  const streams = [...EVENT_STREAMS, ...FINDING_STREAMS].map((d) => d.name).filter((name) => name.endsWith('-security'))
  const { settings, ruleset } = await benchRuleset(root, store, streams, { id: 'int-linux', title: 'linux' })
  for (let n = 0; n < rules; n++) await ruleset.sync.upsertRule('standard', rule(n), 'int-linux', false)
  return { store, settings, ruleset }
}

/** The detector `int-linux` over the first `rules` generated rules, allowed to hold them all. */
export async function createBenchDetector(
  { settings, ruleset }: Awaited<ReturnType<typeof openBenchRuleset>>,
  rules: number,
): Promise<void> {
  await settings.update({ persistent: { 'plugins.security_analytics.max_rules_per_detector': Math.max(50, rules) } })
  await ruleset.sync.upsertDetector({
    integrationId: 'int-linux',
    logType: 'linux',
    category: 'security',
    ruleIds: Array.from({ length: rules }, (_, n) => `bench-${n}`),
    enabled: true,
  })
}

/** `docs` events into `index` (events `first`.. of the sequence), in bulks of 5,000. */
export async function indexEvents(store: Store, index: string, docs: number, first = 0): Promise<void> {
  for (let at = first; at < first + docs; at += 5000) {
    const lines = []
    for (let i = at; i < Math.min(first + docs, at + 5000); i++) lines.push({ create: { _index: index } }, event(i))
    const r = await store.bulk({ body: lines })
    if (r.errors) throw new Error('bulk failed')
  }
}

/** Turns the bench detector's `threat_intel_enabled` on or off, as an update of its stored document. */
export async function setThreatIntel(store: Store, on: boolean): Promise<void> {
  const got = await store.get({ index: DETECTORS_INDEX, id: 'int-linux' })
  if (!got.found) throw new Error('the bench detector is missing')
  const source = got._source as { detector: Record<string, unknown> }
  await store.index({
    index: DETECTORS_INDEX,
    id: 'int-linux',
    body: { detector: { ...source.detector, threat_intel_enabled: on } },
    refresh: true,
  })
}

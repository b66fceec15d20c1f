import type { ClusterSettings } from '../config/cluster-settings'
import type { Logger } from '../http/log'
import type { LeaseSpec } from '../locks/lease'
import { claimTurn } from '../locks/single-runner'
import { AlreadyExists, IndexNotFound } from '../store/errors'
import type { Store } from '../store/port'
import {
  LIFECYCLE_POLICIES,
  RESOURCE_LOCKS,
  SETTINGS_DOC_ID,
  SETTINGS_INDEX,
  SETUP_DEFINITIONS,
  SETUP_STATUS_INDEX,
  type ContentIndexDef,
  type LifecyclePolicy,
  type DataStreamDef,
  type PlainIndexDef,
  type SetupDef,
  type TemplateDef,
} from './indices'
import { ensureIndex } from './ensure'
import { writeLifecyclePolicy } from './lifecycle'
import { readSetupStatus, writeSetupStatus } from './status'

/**
 * The Setup bootstrap (reference 1.1-1.8): every template, index, data stream,
 * content alias and lifecycle policy is provisioned idempotently in registration order, each
 * step with its own timeout and retry budget. One node runs it at a time
 * (a lease document); the others wait for its outcome.
 */

export interface BootstrapDeps {
  store: Store
  settings: ClusterSettings
  log: Logger
  now: () => number
}

/** One retryable step; `name` is `<kind>:<resource>`, e.g. `template:settings`, `stream:svc-events-raw-v5`. */
export interface BootstrapTask {
  name: string
  run: () => Promise<void>
}

export interface BootstrapOptions {
  definitions?: SetupDef[]
  /**
   * Test seam: every task passes through it before running, so a test can
   * make one fail. Not reachable from configuration or HTTP.
   */
  wrapTask?: (task: BootstrapTask) => BootstrapTask
  sleep?: (ms: number) => Promise<void>
  /** A lease older than this is taken over (its holder is presumed dead). */
  leaseStaleMillis?: number
  /** How often a waiting node looks at the lease while another node bootstraps. */
  pollMillis?: number
  /** The node is stopping: a node waiting for another's bootstrap stops waiting. */
  signal?: AbortSignal
}

export interface BootstrapResult {
  /** `stopped`: the node stopped while it waited for another node's bootstrap (nothing ran here). */
  status: 'ready' | 'failed' | 'stopped'
  /** False when another node ran it and this one waited for the outcome. */
  ranHere: boolean
  completed: string[]
  failedTask?: string
  skipped: string[]
}

export const BOOTSTRAP_LEASE_ID = 'setup-bootstrap'
// The holder renews the lease every third of this, so only a dead holder's lease gets this old.
const DEFAULT_LEASE_STALE_MILLIS = 60_000

export class TaskTimeout extends Error {
  constructor(task: string, seconds: number) {
    super(`setup task ${task} did not finish within ${seconds}s`)
  }
}

async function withTimeout<T>(work: Promise<T>, seconds: number, task: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TaskTimeout(task, seconds)), seconds * 1000)
  })
  try {
    return await Promise.race([work, expired])
  } finally {
    clearTimeout(timer)
  }
}

const ignoreExists = (e: unknown) => {
  if (!(e instanceof AlreadyExists)) throw e
}

function templateTask(store: Store, t: TemplateDef): BootstrapTask {
  // Overwritten on every boot (create = false), as the reference does.
  return { name: `template:${t.name}`, run: async () => void (await store.putIndexTemplate({ name: t.name, body: t.body, create: false })) }
}

function indexTask(store: Store, d: PlainIndexDef): BootstrapTask {
  return {
    name: `index:${d.name}`,
    run: () => ensureIndex(store, d),
  }
}

function streamTask(store: Store, d: DataStreamDef): BootstrapTask {
  return {
    name: `stream:${d.name}`,
    run: async () => {
      const existing = await store.getDataStream({ name: d.name }).catch((e) => {
        if (e instanceof IndexNotFound || (e as { status?: number }).status === 404) return { data_streams: [] }
        throw e
      })
      if (existing.data_streams.some((s) => s.name === d.name)) return
      await store.createDataStream({ name: d.name }).catch(ignoreExists)
    },
  }
}

/**
 * A content alias must always point at a physical index, never be a concrete
 * index itself (an early write to the alias name auto-creates one with
 * dynamic mappings, which breaks sorting and aggregations for good).
 */
function contentTask(store: Store, d: ContentIndexDef): BootstrapTask {
  return {
    name: `content:${d.alias}`,
    run: async () => {
      const concrete = await store.resolve(d.alias, { expand_wildcards: 'all', ignore_unavailable: true, allow_no_indices: true })
      if (concrete.includes(d.alias)) await store.deleteIndex({ index: d.alias })
      else if (concrete.length > 0) return // the alias already points at its live slot (-a, or -b after a swap)
      if (await store.existsIndex({ index: d.index, expand_wildcards: 'all' })) {
        await store.updateAliases({ body: { actions: [{ add: { index: d.index, alias: d.alias, ...d.aliasDefinition } }] } })
        return
      }
      try {
        await store.createIndex({ index: d.index, body: { ...d.body, aliases: { [d.alias]: d.aliasDefinition } } })
      } catch (e) {
        ignoreExists(e)
        await store.updateAliases({ body: { actions: [{ add: { index: d.index, alias: d.alias, ...d.aliasDefinition } }] } })
      }
    },
  }
}

/** Reference 1.5, in both modes: the policy goes through the Store's ISM API (the platform's ISM, or the embedded copy). */
function policyTask(deps: BootstrapDeps, p: LifecyclePolicy): BootstrapTask {
  return { name: `policy:${p.id}`, run: () => writeLifecyclePolicy(deps.store, p, deps.now()) }
}

/** Reference 1.8: the default settings document is written only when absent; a failure is a warning. */
function defaultSettingsTask(deps: BootstrapDeps): BootstrapTask {
  return {
    name: `document:${SETTINGS_INDEX}/${SETTINGS_DOC_ID}`,
    run: async () => {
      try {
        await deps.store.index({
          index: SETTINGS_INDEX,
          id: SETTINGS_DOC_ID,
          op_type: 'create',
          body: { engine: { index_raw_events: false } },
          refresh: true,
        })
      } catch (e) {
        if ((e as { status?: number }).status === 409) return // present already: keep the operator's value
        deps.log.warn('default settings document not written', { error: e })
      }
    },
  }
}

/** The ordered task list of one bootstrap. The marker is written right after its index exists. */
export function bootstrapTasks(deps: BootstrapDeps, definitions: SetupDef[] = SETUP_DEFINITIONS): BootstrapTask[] {
  const { store } = deps
  const tasks: BootstrapTask[] = []
  for (const d of definitions) {
    if (d.kind !== 'index' || d.template) tasks.push(templateTask(store, d.template!))
    if (d.kind === 'index') tasks.push(indexTask(store, d))
    else if (d.kind === 'stream') tasks.push(streamTask(store, d))
    else tasks.push(contentTask(store, d))
    if (d.kind === 'index' && d.name === SETUP_STATUS_INDEX) {
      tasks.push({ name: `marker:running`, run: () => writeSetupStatus(deps, 'running') })
      // Reference 1.2 step 2: the policies exist before the streams they govern.
      for (const p of LIFECYCLE_POLICIES) tasks.push(policyTask(deps, p))
    }
    if (d.kind === 'index' && d.name === SETTINGS_INDEX) tasks.push(defaultSettingsTask(deps))
  }
  return tasks
}

interface RetryPolicy {
  timeoutSeconds: number
  backoffSeconds: number
  maxRetries: number
}

async function runWithRetries(task: BootstrapTask, policy: RetryPolicy, sleep: (ms: number) => Promise<void>, log: Logger): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await withTimeout(task.run(), policy.timeoutSeconds, task.name)
      return
    } catch (e) {
      if (attempt >= policy.maxRetries) throw e
      log.warn('setup task failed, retrying', { task: task.name, attempt: attempt + 1, backoff_seconds: policy.backoffSeconds, error: e })
      await sleep(policy.backoffSeconds * 1000)
    }
  }
}

/** Runs every task on this node; the caller holds the lease. */
export async function runTasks(deps: BootstrapDeps, opts: BootstrapOptions = {}): Promise<BootstrapResult> {
  const s = await deps.settings.snapshot()
  const policy: RetryPolicy = {
    timeoutSeconds: s.num('plugins.setup.timeout'),
    backoffSeconds: s.num('plugins.setup.backoff'),
    maxRetries: s.num('plugins.setup.max_retries'),
  }
  const sleep = opts.sleep ?? ((ms: number) => Bun.sleep(ms))
  const tasks = bootstrapTasks(deps, opts.definitions).map((t) => (opts.wrapTask ? opts.wrapTask(t) : t))
  const completed: string[] = []
  for (let i = 0; i < tasks.length; i++) {
    const task = tasks[i]
    try {
      // The marker write is best-effort (reference 1.6): logged and swallowed, never retried.
      if (task.name.startsWith('marker:')) await task.run().catch((e) => deps.log.warn('setup marker not written', { error: e }))
      else await runWithRetries(task, policy, sleep, deps.log)
      completed.push(task.name)
    } catch (e) {
      const skipped = tasks.slice(i + 1).map((t) => t.name)
      deps.log.error('setup task failed, later tasks skipped', { task: task.name, skipped: skipped.length, error: e })
      await writeSetupStatus(deps, 'failed').catch((err) => deps.log.warn('setup marker not written', { error: err }))
      return { status: 'failed', ranHere: true, completed, failedTask: task.name, skipped }
    }
  }
  await writeSetupStatus(deps, 'ready').catch((e) => deps.log.warn('setup marker not written', { error: e }))
  deps.log.info('setup ready', { tasks: completed.length })
  return { status: 'ready', ranHere: true, completed, skipped: [] }
}

/**
 * The turn of a node that waited for another's bootstrap: the holder may have released the lease
 * between this node's last look and its claim. Its outcome is reported then; only a holder that
 * never finished (a stolen stale lease: the marker still running) leaves the tasks to run here.
 */
async function outcomeOrRun(deps: BootstrapDeps, opts: BootstrapOptions): Promise<BootstrapResult> {
  const status = await readSetupStatus(deps.store)
  if (status === 'ready' || status === 'failed') return { status, ranHere: false, completed: [], skipped: [] }
  return runTasks(deps, opts)
}

/** The lease lives in the resource-locks index, which therefore exists before anything else runs. */
const ensureLeaseIndex = (store: Store) => ensureIndex(store, RESOURCE_LOCKS)

/** `sleep`, cut short when the signal aborts. */
const pause = (sleep: (ms: number) => Promise<void>, ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
    void sleep(ms).then(done)
  })

/**
 * Runs the bootstrap on whichever node takes the lease first. A node that
 * finds the lease taken polls until it is released (then reports the
 * marker's outcome) or goes stale (then takes over and runs it itself).
 */
export async function runBootstrap(deps: BootstrapDeps, opts: BootstrapOptions = {}): Promise<BootstrapResult> {
  const sleep = opts.sleep ?? ((ms: number) => Bun.sleep(ms))
  const spec: LeaseSpec = {
    index: RESOURCE_LOCKS.name,
    id: BOOTSTRAP_LEASE_ID,
    staleMillis: opts.leaseStaleMillis ?? DEFAULT_LEASE_STALE_MILLIS,
  }
  const runner = {
    store: deps.store,
    now: deps.now,
    onReleaseError: (e: unknown) => deps.log.warn('setup lease not released', { error: e }),
  }
  try {
    await ensureLeaseIndex(deps.store)
  } catch (e) {
    // Without the lease index the tasks (all idempotent) still run; they will report what is wrong.
    deps.log.warn('setup lease index unavailable, bootstrapping without the lease', { error: e })
    return runTasks(deps, opts)
  }
  let waited = false
  for (;;) {
    // Renewed while the tasks run (their retries can outlast the stale age); released after.
    const turn = await claimTurn(runner, spec)
    if (turn) return turn.run(() => (waited ? outcomeOrRun(deps, opts) : runTasks(deps, opts)))
    waited = true
    // The holder may be a node killed mid-bootstrap, whose lease only goes stale after a minute:
    // a stop meanwhile must not wait for that.
    if (opts.signal?.aborted) return { status: 'stopped', ranHere: false, completed: [], skipped: [] }
    await pause(sleep, opts.pollMillis ?? 1000, opts.signal)
    if (opts.signal?.aborted) return { status: 'stopped', ranHere: false, completed: [], skipped: [] }
    const lease = await deps.store.get({ index: spec.index, id: spec.id })
    if (!lease.found) {
      const status = await readSetupStatus(deps.store)
      if (status === 'ready' || status === 'failed') return { status, ranHere: false, completed: [], skipped: [] }
    }
  }
}

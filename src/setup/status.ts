import type { Logger } from '../http/log'
import type { Store } from '../store/port'
import { SETUP_STATUS_DOC_ID, SETUP_STATUS_INDEX } from './indices'

export type SetupStatus = 'running' | 'ready' | 'failed'

/** Writes the readiness marker (`{status, timestamp}`), refreshed at once so readers see it. */
export async function writeSetupStatus(deps: { store: Store; now: () => number }, status: SetupStatus): Promise<void> {
  await deps.store.index({
    index: SETUP_STATUS_INDEX,
    id: SETUP_STATUS_DOC_ID,
    body: { status, timestamp: new Date(deps.now()).toISOString() },
    refresh: true,
  })
}

/** The marker as a consumer reads it: a missing document or a read error counts as `running`. */
export async function readSetupStatus(store: Store): Promise<SetupStatus> {
  try {
    const doc = await store.get({ index: SETUP_STATUS_INDEX, id: SETUP_STATUS_DOC_ID })
    const status = doc.found ? (doc._source as { status?: unknown } | undefined)?.status : undefined
    return status === 'ready' || status === 'failed' ? status : 'running'
  } catch {
    return 'running'
  }
}

export interface SetupWaitOptions {
  /** Re-checks after the first one (`plugins.content_manager.setup_wait.max_retries`). */
  retries: number
  /** Base of the `base * 2^n` seconds delay (`plugins.content_manager.setup_wait.backoff_base_seconds`). */
  baseSeconds: number
  sleep?: (ms: number) => Promise<void>
  /**
   * This node's own bootstrap, when it runs here: its end cuts a wait short (the marker is read
   * again at once). A sync asked for during the bootstrap otherwise slept out its backoff, up to
   * 40 s past a marker written a second into it.
   */
  settled?: Promise<unknown>
}

/**
 * Spec background 4: waits for the Setup marker with exponential backoff.
 * `failed` gives up at once; `timeout` means the retries ran out while the
 * marker was still `running` (or absent).
 */
export async function waitForSetupReady(
  deps: { store: Store; log?: Logger },
  { retries, baseSeconds, sleep = (ms) => Bun.sleep(ms), settled }: SetupWaitOptions,
): Promise<'ready' | 'failed' | 'timeout'> {
  for (let n = 0; ; n++) {
    const status = await readSetupStatus(deps.store)
    if (status === 'ready') return 'ready'
    if (status === 'failed') {
      deps.log?.error('setup failed; not waiting for it', {})
      return 'failed'
    }
    if (n >= retries) {
      deps.log?.warn('setup not ready after waiting', { retries })
      return 'timeout'
    }
    const delay = baseSeconds * 2 ** n
    deps.log?.info('waiting for setup', { attempt: n + 1, delay_seconds: delay })
    await (settled ? Promise.race([sleep(delay * 1000), settled]) : sleep(delay * 1000))
  }
}

// Per-node loader that keeps the Engine's spaces in step with their aggregate hashes (reference
// 2.7 and 7.9): one reload at a time, bounded in time, a hash recorded only after an Engine 200 so a
// failure is retried by the next trigger, and best-effort throughout (it logs, it never throws).
import type { EngineClient } from './client'
import { EngineError } from './errors'
import type { FullPolicy } from './schemas'

/** A space's policy as it stands now, or null while its content indices are not readable yet. */
export type PolicySource = () => Promise<{ hash: string; fullPolicy: FullPolicy } | null>

export type ReloadOutcome = 'loaded' | 'unchanged' | 'deferred' | 'failed'

export interface PolicyReloader {
  /** Load `space` if its hash differs from the last one the Engine accepted; queued behind any reload in flight. */
  reload(space: string, source: PolicySource): Promise<ReloadOutcome>
  /** The hash the Engine last accepted for `space` on this node. */
  loadedHash(space: string): string | undefined
}

export function createPolicyReloader(engine: EngineClient, now: () => number = Date.now): PolicyReloader {
  const { log, reloadTimeoutMinutes, notReadyGraceMinutes } = engine.options
  const loaded = new Map<string, string>()
  const notReadySince = new Map<string, number>()
  // Triggers that arrive while a reload of the same space waits its turn share that reload: it reads
  // the source when it starts, so it already sees whatever the later trigger was about.
  const queued = new Map<string, Promise<ReloadOutcome>>()
  let tail: Promise<unknown> = Promise.resolve()

  async function run(space: string, source: PolicySource): Promise<ReloadOutcome> {
    queued.delete(space)
    const limitMs = reloadTimeoutMinutes * 60_000
    let timer: ReturnType<typeof setTimeout> | undefined
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new EngineError(`Engine reload of '${space}' exceeded ${reloadTimeoutMinutes} min`)), limitMs)
    })
    try {
      const current = await Promise.race([source(), expired])
      if (current === null) return defer(space)
      notReadySince.delete(space)
      if (loaded.get(space) === current.hash) return 'unchanged'
      const reply = await Promise.race([engine.validatePolicy(space, current.fullPolicy), expired])
      // 202 means the Engine took it but has not confirmed the load: retry on the next trigger.
      if (reply.status !== 200) {
        log.warn('Engine accepted the policy without loading it; will retry', { space, status: reply.status })
        return 'failed'
      }
      loaded.set(space, current.hash)
      // Not `hash`: the node logger masks keys that look like secrets.
      log.info('Policy loaded into the Engine', { space, aggregate: current.hash })
      return 'loaded'
    } catch (error) {
      log.error('Policy could not be loaded into the Engine', {
        space,
        error: error instanceof Error ? error.message : String(error),
      })
      return 'failed'
    } finally {
      clearTimeout(timer)
    }
  }

  function defer(space: string): ReloadOutcome {
    const since = notReadySince.get(space) ?? now()
    notReadySince.set(space, since)
    const waitedMs = now() - since
    const fields = { space, waitedMs }
    if (waitedMs >= notReadyGraceMinutes * 60_000) log.warn('Engine reload still deferred: content is not readable', fields)
    else log.debug('Engine reload deferred: content is not readable yet', fields)
    return 'deferred'
  }

  return {
    reload(space, source) {
      const pending = queued.get(space)
      if (pending) return pending
      const next = tail.then(() => run(space, source))
      queued.set(space, next)
      tail = next
      return next
    },
    loadedHash: (space) => loaded.get(space),
  }
}

// Spec background 8: whenever the standard space's aggregate hash changes, the whole standard
// policy is built and loaded into the Engine, best-effort. The reload loader of the Engine client
// does the single-flight and remembers what the Engine accepted; this file builds what it sends.
import type { FullPolicy, PolicyReloader, ReloadOutcome } from '../engine'
import { CONTENT_ALIASES } from '../indices'
import type { ContentRepository } from '../repository'
import { storedSpaceHash } from '../space-hash'
import type { Space } from '../spaces'

/** The policy of a space and every Engine resource of that space (rules are never sent). */
export async function buildFullPolicy(repo: ContentRepository, space: Space): Promise<{ hash: string; fullPolicy: FullPolicy } | null> {
  const policy = await repo.policy(space)
  if (!policy) return null
  const hash = storedSpaceHash(policy)
  if (hash === undefined) return null
  const docs = async (alias: string) => (await repo.list(alias, space)).map((d) => d.document)
  const [integrations, kvdbs, decoders, filters] = await Promise.all(
    [CONTENT_ALIASES.integrations, CONTENT_ALIASES.kvdbs, CONTENT_ALIASES.decoders, CONTENT_ALIASES.filters].map(docs),
  )
  return { hash, fullPolicy: { policy: policy.document, resources: { integrations, kvdbs, decoders, filters } } }
}

/** What this node knows of a space's Engine load (metrics). */
export interface EngineLoadState {
  space: Space
  /** The hash the Engine last accepted on this node. */
  loadedHash?: string
  lastOutcome?: ReloadOutcome
  /** Milliseconds since the epoch when the last load finished. */
  lastAt?: number
  inFlight: boolean
}

export interface EngineLoads {
  /** Starts loading `space` into the Engine in the background; never throws, never blocks the caller. */
  trigger(space: Space): void
  /**
   * Issue 15 item 8: compares the space's stored aggregate hash with the one this node's Engine
   * last accepted and loads the space when they differ (a sync or promotion on another node, or a
   * fresh process). Cheap when equal: one read of the policy document.
   */
  ensure(space: Space): Promise<ReloadOutcome>
  /** Resolves when every load started so far has finished (tests, shutdown). */
  settled(): Promise<ReloadOutcome[]>
  /** Every space triggered so far on this node. */
  states(): EngineLoadState[]
}

export function engineLoads(repo: ContentRepository, reloader: PolicyReloader, now: () => number = Date.now): EngineLoads {
  const inFlight = new Set<Promise<ReloadOutcome>>()
  const last = new Map<Space, { outcome?: ReloadOutcome; at?: number; running: number }>()
  const start = (space: Space) => {
    const entry = last.get(space) ?? { running: 0 }
    last.set(space, entry)
    entry.running++
    const p = reloader.reload(space, () => buildFullPolicy(repo, space))
    inFlight.add(p)
    void p
      .then((outcome) => Object.assign(entry, { outcome, at: now() }))
      .finally(() => {
        entry.running--
        inFlight.delete(p)
      })
    return p
  }
  return {
    trigger: (space) => void start(space),
    async ensure(space) {
      const policy = await repo.policy(space).catch(() => undefined)
      const hash = policy ? storedSpaceHash(policy) : undefined
      if (hash === undefined) return 'deferred'
      if (reloader.loadedHash(space) === hash) return 'unchanged'
      return start(space)
    },
    settled: () => Promise.all([...inFlight]),
    states: () =>
      [...last].map(([space, e]) => ({
        space,
        loadedHash: reloader.loadedHash(space),
        lastOutcome: e.outcome,
        lastAt: e.at,
        inFlight: e.running > 0,
      })),
  }
}

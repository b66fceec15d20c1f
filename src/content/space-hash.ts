// Reference 2.7: a space's aggregate hash covers its policy and everything the policy references,
// in the policy's order. It lives on the policy document (`space.hash.sha256`).
import { VersionConflict } from '../store/errors'
import { sha256Hex } from './hash'
import { CONTENT_ALIASES } from './indices'
import { isObject, type ContentRepository, type Stored } from './repository'
import type { Space } from './spaces'

const ids = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])

/** `document.id -> hash` of every document of a space in one index (one query instead of one get per id). */
async function hashes(repo: ContentRepository, alias: string, space: string): Promise<Map<string, string>> {
  const docs = await repo.list(alias, space, { source: ['document.id', 'hash.sha256', 'space.name'] })
  return new Map(docs.map((d) => [String(d.document.id), d.hash]))
}

/**
 * The aggregate hash of a space as its stored documents stand now. Resources are looked up by
 * `document.id` within the same space (upstream looks up by `_id`, which resolves test/custom
 * copies to the draft ones; reference appendix A.14). Missing references are skipped.
 */
export async function computeSpaceHash(repo: ContentRepository, policy: Stored): Promise<string> {
  const space = policy.space
  const integrations = await repo.list(CONTENT_ALIASES.integrations, space, {
    source: ['document.id', 'document.decoders', 'document.kvdbs', 'document.rules', 'hash.sha256', 'space.name'],
  })
  const byId = new Map(integrations.map((d) => [String(d.document.id), d]))
  const [decoders, kvdbs, rules, filters] = await Promise.all(
    [CONTENT_ALIASES.decoders, CONTENT_ALIASES.kvdbs, CONTENT_ALIASES.rules, CONTENT_ALIASES.filters].map((a) => hashes(repo, a, space)),
  )
  const parts = [policy.hash]
  const add = (table: Map<string, string>, id: string) => {
    const h = table.get(id)
    if (h !== undefined) parts.push(h)
  }
  for (const id of ids(policy.document.integrations)) {
    const integration = byId.get(id)
    if (!integration) continue
    parts.push(integration.hash)
    for (const d of ids(integration.document.decoders)) add(decoders, d)
    for (const k of ids(integration.document.kvdbs)) add(kvdbs, k)
    for (const r of ids(integration.document.rules)) add(rules, r)
  }
  for (const f of ids(policy.document.filters)) add(filters, f)
  return sha256Hex(parts.join(''))
}

export const storedSpaceHash = (policy: Stored): string | undefined => {
  const space = policy.source.space
  return isObject(space) && isObject(space.hash) && typeof space.hash.sha256 === 'string' ? space.hash.sha256 : undefined
}

export interface SpaceHashResult {
  space: Space
  hash: string | undefined
  changed: boolean
}

/**
 * Recomputes and stores a space's hash. The write is conditional on the policy version read
 * before the resources were read, so a recompute that raced a newer one loses and starts over
 * with fresh content: the stored value always ends up describing the latest content.
 */
export async function recomputeSpaceHash(repo: ContentRepository, space: Space, attempts = 10): Promise<SpaceHashResult> {
  for (let i = 1; ; i++) {
    const policy = await repo.policy(space)
    if (!policy) return { space, hash: undefined, changed: false }
    const hash = await computeSpaceHash(repo, policy)
    if (hash === storedSpaceHash(policy)) return { space, hash, changed: false }
    try {
      await repo.setSpaceHash(policy, hash)
      return { space, hash, changed: true }
    } catch (e) {
      if (!(e instanceof VersionConflict) || i >= attempts) throw e
    }
  }
}

/** The hash a space has now, for callers that only read it (promotion, the Engine loader). */
export async function spaceHash(repo: ContentRepository, space: Space): Promise<string | undefined> {
  const policy = await repo.policy(space)
  return policy ? storedSpaceHash(policy) : undefined
}

export interface SpaceHashes {
  /**
   * Recomputes `space` after a change. Concurrent requests on this node share work: the promise
   * returned always belongs to a recompute that started after the call, so it sees the caller's
   * change, but N writers finishing together cost two recomputes, not N racing ones.
   */
  recompute(space: Space): Promise<SpaceHashResult>
}

export function spaceHashes(repo: ContentRepository, onChanged: (r: SpaceHashResult) => void): SpaceHashes {
  const running = new Map<Space, Promise<SpaceHashResult>>()
  const queued = new Map<Space, Promise<SpaceHashResult>>()
  const start = (space: Space): Promise<SpaceHashResult> => {
    const p = recomputeSpaceHash(repo, space).then((r) => {
      if (r.changed) onChanged(r)
      return r
    })
    running.set(space, p)
    const clear = () => {
      if (running.get(space) === p) running.delete(space)
    }
    p.then(clear, clear)
    return p
  }
  return {
    recompute(space) {
      const current = running.get(space)
      if (!current) return start(space)
      const waiting = queued.get(space)
      if (waiting) return waiting
      const next = current
        .catch(() => undefined)
        .then(() => {
          queued.delete(space)
          return start(space)
        })
      queued.set(space, next)
      return next
    },
  }
}

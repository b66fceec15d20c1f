// Reference 2.7: a space's aggregate hash covers its policy and everything the policy references,
// in the policy's order. It lives on the policy document (`space.hash.sha256`).
import { VersionConflict } from '../store/errors'
import { Lru } from '../lru'
import { CONTENT_ALIASES } from './indices'
import { isObject, type ContentRepository, type Stored } from './repository'
import type { Space } from './spaces'

const ids = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])

/** The fields of a space's documents its hash is made of. */
const HASHED_FIELDS = ['document.id', 'document.decoders', 'document.kvdbs', 'document.rules', 'hash.sha256', 'space.name']

/**
 * A copy of one space's documents of one index (the hashed fields only), kept current by reading
 * the documents written since the last read: a space of 10,000 rules is otherwise read whole on
 * every write to it. That read sees the documents written in every space, so one moved to
 * another space leaves the copy there; a deleted one is not seen and leaves the copy larger than
 * the space's count: the copy is then read again whole, as it is when the alias moves to another
 * index.
 */
interface SpaceCopy {
  index: string
  seq: number
  rows: Map<string, Stored>
  table: HashTable
}

/**
 * `document.id -> hash` of a copy's rows, kept with them (not rebuilt from 10,000 rows on every
 * write), with the ids changed since (`log`) and, per list that references them (an integration's
 * rules), that list's hashes as last computed: a list that only grew since, the usual change, is
 * brought up to date by its new ids and the log, not looked up again id by id.
 */
interface HashTable {
  hashes: Map<string, string>
  log: string[]
  lists: Map<string, ListHashes>
}

/**
 * One list's hashes as last computed: per position (undefined where no document has the id), where
 * each id stands, and their concatenation, which only grows while the list only grows and the
 * documents it lists do not change (the aggregate is a SHA-256 over that concatenation).
 */
interface ListHashes {
  ids: unknown[]
  hashes: Array<string | undefined>
  /** First position of each id; `shared` when an id is listed twice (positions are then searched). */
  at: Map<unknown, number>
  shared: boolean
  joined: string
  /** How much of the table's log this state has seen. */
  seen: number
}
const copies = new WeakMap<ContentRepository, Lru<string, SpaceCopy>>()

/** Copies kept per repository (spaces × content indices). */
const MAX_COPIES = 64
/** Changed ids logged before the lists are computed afresh. */
const MAX_LOG = 10_000

const docId = (d: Stored) => String(d.document.id)

function tableOf(docs: Iterable<Stored>): HashTable {
  const hashes = new Map<string, string>()
  for (const d of docs) hashes.set(docId(d), d.hash)
  return { hashes, log: [], lists: new Map() }
}

/** The space's documents of `alias` (hashed fields only) and their hash table. */
async function spaceDocs(repo: ContentRepository, alias: string, space: string): Promise<{ docs: Iterable<Stored>; table: HashTable }> {
  let mine = copies.get(repo)
  if (!mine) copies.set(repo, (mine = new Lru(MAX_COPIES)))
  const key = `${alias}\u0000${space}`
  let copy = mine.get(key)
  for (let pass = 0; pass < 2; pass++) {
    const changed = await repo.changedSince(alias, space, copy, HASHED_FIELDS)
    if (!changed) break
    if (!copy || copy.index !== changed.index) copy = { index: changed.index, seq: -1, rows: new Map(), table: tableOf([]) }
    const { table } = copy
    if (table.log.length > MAX_LOG) ((table.log = []), table.lists.clear())
    for (const d of changed.docs) {
      if (d.seqNo > copy.seq) copy.seq = d.seqNo
      const before = copy.rows.get(d._id)
      if (before && (docId(before) !== docId(d) || d.space !== space)) (table.hashes.delete(docId(before)), table.log.push(docId(before)))
      if (d.space !== space) {
        copy.rows.delete(d._id) // moved to another space, or never in this one
        continue
      }
      copy.rows.set(d._id, d)
      table.hashes.set(docId(d), d.hash)
      table.log.push(docId(d))
    }
    if (copy.rows.size === changed.count) {
      mine.set(key, copy)
      return { docs: copy.rows.values(), table }
    }
    copy = undefined // something left the space, or was missed: read it again whole
  }
  mine.delete(key)
  const docs = await repo.list(alias, space, { source: HASHED_FIELDS })
  return { docs, table: tableOf(docs) }
}

async function hashTable(repo: ContentRepository, alias: string, space: string): Promise<HashTable> {
  return (await spaceDocs(repo, alias, space)).table
}

const listOf = (list: unknown): unknown[] => (Array.isArray(list) ? list : [])

/** Whether `listed` is `before` with ids appended (or the same array). */
const onlyGrew = (before: unknown[], listed: unknown[]) =>
  before === listed || (before.length <= listed.length && before.every((id, i) => id === listed[i]))

function freshList(table: HashTable, listed: unknown[]): ListHashes {
  const state: ListHashes = { ids: [], hashes: [], at: new Map(), shared: false, joined: '', seen: table.log.length }
  append(table, state, listed)
  return state
}

function append(table: HashTable, state: ListHashes, listed: unknown[]): void {
  for (let i = state.ids.length; i < listed.length; i++) {
    const id = listed[i]
    const h = typeof id === 'string' ? table.hashes.get(id) : undefined
    state.hashes.push(h)
    if (h !== undefined) state.joined += h
    if (state.at.has(id)) state.shared = true
    else state.at.set(id, i)
  }
  state.ids = listed
}

/**
 * The concatenated hashes of the documents a list names, in its order (none where no document has
 * the id), kept for `key`: the documents changed since the last call are looked up by position,
 * and the concatenation is built again only when one of them is listed with another hash.
 */
function listedHashes(table: HashTable, key: string, list: unknown): string {
  const listed = listOf(list)
  const last = table.lists.get(key)
  let state: ListHashes
  if (last && onlyGrew(last.ids, listed)) {
    state = last
    let changed = false
    const hashOf = (id: string) => table.hashes.get(id)
    for (let k = state.seen; k < table.log.length; k++) {
      const id = table.log[k]
      const first = state.at.get(id)
      if (first === undefined) continue
      for (let i = first; i >= 0 && i < state.ids.length; i = state.shared ? state.ids.indexOf(id, i + 1) : -1) {
        const h = hashOf(id)
        if (state.hashes[i] !== h) ((state.hashes[i] = h), (changed = true))
      }
    }
    if (changed) state.joined = state.hashes.filter((h) => h !== undefined).join('')
    append(table, state, listed)
    state.seen = table.log.length
  } else state = freshList(table, listed)
  table.lists.set(key, state)
  return state.joined
}

/**
 * The aggregate hash of a space as its stored documents stand now. Resources are looked up by
 * `document.id` within the same space (upstream looks up by `_id`, which resolves test/custom
 * copies to the draft ones; reference appendix A.14). Missing references are skipped.
 */
export async function computeSpaceHash(repo: ContentRepository, policy: Stored): Promise<string> {
  const space = policy.space
  const byId = new Map<string, Stored>()
  for (const d of (await spaceDocs(repo, CONTENT_ALIASES.integrations, space)).docs) byId.set(docId(d), d)
  const [decoders, kvdbs, rules, filters] = await Promise.all(
    [CONTENT_ALIASES.decoders, CONTENT_ALIASES.kvdbs, CONTENT_ALIASES.rules, CONTENT_ALIASES.filters].map((a) => hashTable(repo, a, space)),
  )
  // The SHA-256 of the concatenation, fed in pieces: the same bytes as the reference's joined parts.
  const hasher = new Bun.CryptoHasher('sha256').update(policy.hash)
  for (const id of ids(policy.document.integrations)) {
    const integration = byId.get(id)
    if (!integration) continue
    hasher.update(integration.hash)
    hasher.update(listedHashes(decoders, id, integration.document.decoders))
    hasher.update(listedHashes(kvdbs, id, integration.document.kvdbs))
    hasher.update(listedHashes(rules, id, integration.document.rules))
  }
  hasher.update(listedHashes(filters, '', policy.document.filters))
  return hasher.digest('hex')
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

// Content built through the real resource API, full dumps of a space, and an independent oracle of
// what a promotion must leave behind (reference 4.7 copy rules and the 2.7 aggregate hash).
import { expect } from 'bun:test'
import { CONTENT_ALIASES } from '../../../src/setup/indices'
import { decoderBody, filterBody, integrationBody, kvdbBody, PREFIX, ruleBody, startHarness, type Harness } from '../harness'

export const LISTS = ['policy', 'integrations', 'kvdbs', 'decoders', 'filters', 'rules'] as const
export type List = (typeof LISTS)[number]
export const ALIAS: Record<List, string> = {
  policy: CONTENT_ALIASES.policies,
  integrations: CONTENT_ALIASES.integrations,
  kvdbs: CONTENT_ALIASES.kvdbs,
  decoders: CONTENT_ALIASES.decoders,
  filters: CONTENT_ALIASES.filters,
  rules: CONTENT_ALIASES.rules,
}
const PLURAL = { integration: 'integrations', decoder: 'decoders', kvdb: 'kvdbs', rule: 'rules', filter: 'filters' } as const
type Kind = keyof typeof PLURAL

export interface DumpedDoc {
  _id: string
  _source: any
}
/** Every document of a space, per list, keyed by `document.id` (the policy under 'policy'). */
export type Dump = Record<List, Record<string, DumpedDoc>>

export async function dump(h: Harness, space: string): Promise<Dump> {
  const out = {} as Dump
  for (const list of LISTS) {
    const r = await h.store.search({
      index: ALIAS[list],
      body: { query: { term: { 'space.name': space } }, size: 10_000, sort: [{ 'document.id': 'asc' }] },
    })
    out[list] = {}
    for (const hit of r.hits.hits) {
      const key = list === 'policy' ? 'policy' : String((hit._source as any).document.id)
      expect(out[list][key]).toBeUndefined() // one document per logical id and space
      out[list][key] = { _id: hit._id, _source: hit._source }
    }
  }
  return out
}

const sha256 = (s: string) => new Bun.CryptoHasher('sha256').update(s).digest('hex')
const strings = (v: unknown): string[] => (Array.isArray(v) ? v : [])

/** Reference 2.7, written out independently of the product: the aggregate hash of a dumped space. */
export function oracleSpaceHash(d: Dump): string | undefined {
  const policy = d.policy.policy?._source
  if (!policy) return undefined
  const parts = [policy.hash.sha256]
  const hashOf = (list: List, id: string) => d[list][id]?._source.hash.sha256
  for (const id of strings(policy.document.integrations)) {
    const integration = d.integrations[id]?._source
    if (!integration) continue
    parts.push(integration.hash.sha256)
    for (const [list, ids] of [
      ['decoders', integration.document.decoders],
      ['kvdbs', integration.document.kvdbs],
      ['rules', integration.document.rules],
    ] as const) {
      for (const x of strings(ids)) if (hashOf(list, x)) parts.push(hashOf(list, x))
    }
  }
  for (const id of strings(policy.document.filters)) if (hashOf('filters', id)) parts.push(hashOf('filters', id))
  return sha256(parts.join(''))
}

export interface Change {
  operation: 'add' | 'update' | 'remove'
  id: string
}
export type Changes = Record<List, Change[]>
export const noChanges = (): Changes => ({ policy: [], integrations: [], kvdbs: [], decoders: [], filters: [], rules: [] })

/**
 * What the target must hold after promoting `changes` from `source` (reference 4.7): the entire
 * stored source copied with `space.name` replaced, removals gone, everything else untouched, and
 * the policy's aggregate hash recomputed over the result.
 */
export function expectedTarget(before: Dump, source: Dump, changes: Changes, target: string): Dump {
  const out = structuredClone(before)
  for (const list of LISTS) {
    for (const c of changes[list]) {
      const key = list === 'policy' ? 'policy' : c.id
      if (c.operation === 'remove') delete out[list][key]
      else {
        const from = structuredClone(source[list][key]._source)
        from.space = { ...from.space, name: target }
        out[list][key] = { _id: before[list][key]?._id ?? '<new>', _source: from }
      }
    }
  }
  const policy = out.policy.policy?._source
  if (policy) policy.space = { ...policy.space, hash: { sha256: oracleSpaceHash(out) } }
  return out
}

/** Compares an actual dump with an expected one document by document (new copies: any fresh `_id`). */
export function expectDump(actual: Dump, expected: Dump): void {
  for (const list of LISTS) {
    expect(Object.keys(actual[list]).sort()).toEqual(Object.keys(expected[list]).sort())
    for (const [key, want] of Object.entries(expected[list])) {
      const got = actual[list][key]
      expect({ list, key, source: got._source }).toEqual({ list, key, source: want._source })
      if (want._id === '<new>')
        expect(got._id).not.toBe(key) // a copy never reuses the draft's `_id`
      else expect({ list, key, _id: got._id }).toEqual({ list, key, _id: want._id })
    }
  }
}

/** A content harness (options as startHarness's) and the content API over it. */
export async function startContentApi(...opts: Parameters<typeof startHarness>): Promise<{ h: Harness; api: ContentApi }> {
  const h = await startHarness(...opts)
  return { h, api: contentApi(h) }
}

/** The content API, as a client drives it. */
export function contentApi(h: Harness) {
  const create = async (kind: Kind, body: unknown): Promise<string> => {
    const r = await h.request('POST', `${PREFIX}/${PLURAL[kind]}`, { body })
    expect({ kind, status: r.status, body: r.body }).toMatchObject({ kind, status: 201 })
    return r.body.message
  }
  const stored = async (kind: Kind, id: string): Promise<any> => {
    const r = await h.store.get({ index: ALIAS[PLURAL[kind]], id })
    if (!r.found) throw new Error(`${kind} ${id} not found`)
    return r._source
  }
  return {
    create,
    stored,
    integration: (title: string) => create('integration', integrationBody(title)),
    decoder: (integration: string, name: string) => create('decoder', decoderBody(integration, name)),
    kvdb: (integration: string, title: string) => create('kvdb', kvdbBody(integration, title)),
    rule: (integration: string, title: string, product: string) => create('rule', ruleBody(integration, title, product)),
    filter: (name: string) => create('filter', filterBody('draft', name)),
    async update(kind: Kind, id: string, change: (doc: any) => any, extra: Record<string, unknown> = {}) {
      const doc = structuredClone((await stored(kind, id)).document)
      const r = await h.request('PUT', `${PREFIX}/${PLURAL[kind]}/${id}`, { body: { ...extra, resource: change(doc) } })
      expect({ kind, id, status: r.status, body: r.body }).toMatchObject({ kind, id, status: 200 })
    },
    async remove(kind: Kind, id: string) {
      const r = await h.request('DELETE', `${PREFIX}/${PLURAL[kind]}/${id}`)
      expect({ kind, id, status: r.status, body: r.body }).toMatchObject({ kind, id, status: 200 })
    },
    async draftPolicy(change: (doc: any) => any) {
      const policy = (await h.content.repo.policy('draft'))!.document
      const r = await h.request('PUT', `${PREFIX}/policy/draft`, { body: { resource: change(structuredClone(policy)) } })
      expect({ status: r.status, body: r.body }).toMatchObject({ status: 200 })
    },
    preview: (space: string) => h.request('GET', `${PREFIX}/promote?space=${space}`),
    promote: (space: string, changes: Changes, user?: 'admin' | 'editor' | 'clusterOnly') =>
      h.request('POST', `${PREFIX}/promote`, { body: { space, changes }, user }),
  }
}

export type ContentApi = ReturnType<typeof contentApi>

/** Sorts every list of a changeset, so previews compare regardless of order. */
export const sorted = (c: Changes): Changes =>
  Object.fromEntries(LISTS.map((l) => [l, [...c[l]].sort((a, b) => (a.id + a.operation).localeCompare(b.id + b.operation))])) as Changes

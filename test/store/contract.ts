/**
 * The Store contract: OpenSearch semantics every adapter must show. Run it with
 * `runStoreContract(name, makeStore)`; each test gets a fresh, empty store.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import {
  AliasesNotFound,
  AlreadyExists,
  DocumentMissing,
  IllegalArgument,
  IndexNotFound,
  InvalidIndexName,
  MapperParsing,
  ParsingError,
  SearchContextMissing,
  StoreError,
  StrictMappingViolation,
  VersionConflict,
} from '../../src/store/errors'
import type { SearchBody, SearchResponse, Store } from '../../src/store/port'
import { storeDetailsContract } from './contract-details'
import { storeLifecycleContract } from './contract-lifecycle'

/**
 * Indices a real platform keeps for itself (the security plugin's `.opendistro_security`, other
 * plugins' `.plugins-*`/`.opensearch-*`, tasks): they are there before svc-ext writes anything, so
 * assertions about "every index" leave them out.
 */
export const PLATFORM_OWN = /^\.(opendistro|opensearch|plugins|ql-|kibana|tasks)/

export interface ContractOptions {
  /** Nodes holding shard copies behind the store (a real cluster's); 1 for the embedded store. */
  dataNodes?: number
}

export function runStoreContract(name: string, makeStore: () => Store | Promise<Store>, options: ContractOptions = {}): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store
    beforeEach(async () => {
      store = await makeStore()
    })
    afterEach(async () => {
      await store.close()
    })

    const ids = (r: SearchResponse) => r.hits.hits.map((h) => h._id)
    const search = (index: string, body: SearchBody) => store.search({ index, body })
    const everyIndex = async (expression: string, options?: Parameters<Store['resolve']>[1]) =>
      (await store.resolve(expression, options)).filter((n) => !PLATFORM_OWN.test(n))
    const total = (r: SearchResponse) => (typeof r.hits.total === 'number' ? r.hits.total : r.hits.total?.value)

    async function seed(index = 'people') {
      await store.createIndex({
        index,
        body: {
          mappings: {
            properties: {
              name: { type: 'keyword' },
              bio: { type: 'text' },
              age: { type: 'integer' },
              born: { type: 'date' },
              active: { type: 'boolean' },
              ip: { type: 'ip' },
              tags: { type: 'keyword' },
              city: { type: 'text', fields: { raw: { type: 'keyword' } } },
            },
          },
        },
      })
      const docs: Array<[string, Record<string, unknown>]> = [
        [
          '1',
          {
            name: 'Alice',
            bio: 'Loves quick brown foxes',
            age: 31,
            born: '1993-04-01',
            active: true,
            ip: '10.0.0.1',
            tags: ['a', 'b'],
            city: 'New York',
          },
        ],
        [
          '2',
          {
            name: 'bob',
            bio: 'Lazy dogs and cats',
            age: 25,
            born: '1999-01-15T10:00:00Z',
            active: false,
            ip: '192.168.1.9',
            tags: ['b'],
            city: 'Paris',
          },
        ],
        [
          '3',
          {
            name: 'Carol',
            bio: 'The quick red fox\nsecond line',
            age: 42,
            born: '1982-12-31',
            active: true,
            ip: '10.2.3.4',
            tags: [],
            city: 'new york',
          },
        ],
        ['4', { name: 'dave', age: null, born: '2001-07-04', active: true, city: 'Berlin' }],
      ]
      for (const [id, body] of docs) await store.index({ index, id, body, refresh: true })
    }

    describe('indices', () => {
      test('create, exists, get, delete', async () => {
        const r = await store.createIndex({ index: 'idx', body: { settings: { number_of_shards: 1, index: { hidden: false } } } })
        expect(r).toEqual({ acknowledged: true, shards_acknowledged: true, index: 'idx' })
        expect(await store.existsIndex({ index: 'idx' })).toBe(true)
        expect(await store.existsIndex({ index: 'nope' })).toBe(false)
        const got = await store.getIndex({ index: 'idx' })
        expect(got.idx.settings.index.number_of_shards).toBe('1')
        expect(got.idx.settings.index.hidden).toBe('false')
        expect(typeof got.idx.settings.index.uuid).toBe('string')
        expect(got.idx.settings.index.provided_name).toBe('idx')
        await expect(store.createIndex({ index: 'idx' })).rejects.toBeInstanceOf(AlreadyExists)
        expect(await store.deleteIndex({ index: 'idx' })).toEqual({ acknowledged: true })
        expect(await store.existsIndex({ index: 'idx' })).toBe(false)
        await expect(store.deleteIndex({ index: 'idx' })).rejects.toBeInstanceOf(IndexNotFound)
      })

      test('invalid names are refused with invalid_index_name_exception', async () => {
        for (const bad of ['UPPER', '_under', 'has space', 'a*b', 'a,b', '..'])
          await expect(store.createIndex({ index: bad })).rejects.toBeInstanceOf(InvalidIndexName)
      })

      test('hidden indices only match wildcards with expand_wildcards hidden/all, or dot-patterns', async () => {
        await store.createIndex({ index: 'visible' })
        await store.createIndex({ index: 'secret', body: { settings: { 'index.hidden': true } } })
        await store.createIndex({ index: '.dotted', body: { settings: { index: { hidden: true } } } })
        expect(await everyIndex('*')).toEqual(['visible'])
        expect(await everyIndex('*', { expand_wildcards: 'all' })).toEqual(['.dotted', 'secret', 'visible'])
        expect(await everyIndex('*', { expand_wildcards: ['open', 'hidden'] })).toEqual(['.dotted', 'secret', 'visible'])
        expect(await store.resolve('.d*')).toEqual(['.dotted'])
        expect(await store.resolve('secret')).toEqual(['secret'])
        expect((await store.stats({ index: '*', expand_wildcards: 'all' })).find((s) => s.index === 'secret')?.hidden).toBe(true)
      })

      test('resolution: comma lists, exclusions, ignore_unavailable, allow_no_indices', async () => {
        for (const i of ['logs-a', 'logs-b', 'metrics']) await store.createIndex({ index: i })
        expect(await store.resolve('logs-*,metrics')).toEqual(['logs-a', 'logs-b', 'metrics'])
        expect(await store.resolve('logs-*,-logs-b')).toEqual(['logs-a'])
        expect(await store.resolve(['metrics', 'logs-a'])).toEqual(['logs-a', 'metrics'])
        await expect(store.resolve('logs-a,missing')).rejects.toBeInstanceOf(IndexNotFound)
        expect(await store.resolve('logs-a,missing', { ignore_unavailable: true })).toEqual(['logs-a'])
        expect(await store.resolve('zzz*')).toEqual([])
        await expect(store.resolve('zzz*', { allow_no_indices: false })).rejects.toBeInstanceOf(IndexNotFound)
        expect(await everyIndex('_all')).toEqual(['logs-a', 'logs-b', 'metrics'])
      })

      test('put/get mapping merges and refuses type changes; settings update', async () => {
        await store.createIndex({ index: 'm', body: { mappings: { properties: { a: { type: 'keyword' } } } } })
        await store.putMapping({ index: 'm', body: { properties: { b: { type: 'long' } } } })
        const m = await store.getMapping({ index: 'm' })
        expect(m.m.mappings.properties).toEqual({ a: { type: 'keyword' }, b: { type: 'long' } })
        await expect(store.putMapping({ index: 'm', body: { properties: { a: { type: 'long' } } } })).rejects.toBeInstanceOf(
          IllegalArgument,
        )
        await expect(
          store.createIndex({ index: 'bad', body: { mappings: { properties: { a: { type: 'nonsense' } } } } }),
        ).rejects.toBeInstanceOf(MapperParsing)
        await store.putSettings({ index: 'm', body: { index: { number_of_replicas: 0 } } })
        expect((await store.getSettings({ index: 'm' })).m.settings.index.number_of_replicas).toBe('0')
        await expect(store.putSettings({ index: 'm', body: { number_of_shards: 3 } })).rejects.toBeInstanceOf(IllegalArgument)
        // preserve_existing sets only what the index does not have yet.
        await store.putSettings({
          index: 'm',
          body: { index: { number_of_replicas: 1, max_result_window: 5000 } },
          preserve_existing: true,
        })
        const kept = (await store.getSettings({ index: 'm' })).m.settings.index
        expect([kept.number_of_replicas, kept.max_result_window]).toEqual(['0', '5000'])
      })
    })

    describe('mappings on write', () => {
      test('dynamic mapping: text + keyword sub-field, date detection, long, float, boolean, objects', async () => {
        await store.index({
          index: 'dyn',
          id: '1',
          body: { s: 'Hello There', d: '2024-05-01T00:00:00Z', n: 3, f: 1.5, b: true, o: { x: 'y' } },
          refresh: true,
        })
        const props = (await store.getMapping({ index: 'dyn' })).dyn.mappings.properties!
        expect(props.s).toEqual({ type: 'text', fields: { keyword: { type: 'keyword', ignore_above: 256 } } })
        expect(props.d.type).toBe('date')
        expect(props.n.type).toBe('long')
        expect(props.f.type).toBe('float')
        expect(props.b.type).toBe('boolean')
        expect(props.o.properties?.x.type).toBe('text')
        expect(ids(await search('dyn', { query: { term: { 's.keyword': 'Hello There' } } }))).toEqual(['1'])
        expect(ids(await search('dyn', { query: { term: { s: 'hello' } } }))).toEqual(['1'])
        expect(ids(await search('dyn', { query: { term: { s: 'Hello There' } } }))).toEqual([])
        expect(ids(await search('dyn', { query: { match: { 'o.x': 'Y' } } }))).toEqual(['1'])
      })

      test('dynamic strict rejects unknown fields, also nested ones', async () => {
        await store.createIndex({
          index: 'strict',
          body: {
            mappings: {
              dynamic: 'strict',
              properties: { a: { type: 'keyword' }, o: { type: 'object', properties: { b: { type: 'keyword' } } } },
            },
          },
        })
        await store.index({ index: 'strict', id: '1', body: { a: 'x', o: { b: 'y' } } })
        const e = await store.index({ index: 'strict', id: '2', body: { a: 'x', z: 1 } }).catch((e) => e)
        expect(e).toBeInstanceOf(StrictMappingViolation)
        expect((e as StoreError).type).toBe('strict_dynamic_mapping_exception')
        expect((e as StoreError).status).toBe(400)
        expect((e as StoreError).reason).toContain('[z]')
        await expect(store.index({ index: 'strict', id: '3', body: { o: { c: 1 } } })).rejects.toBeInstanceOf(StrictMappingViolation)
        await expect(store.index({ index: 'strict', id: '4', body: { 'o.c': 1 } })).rejects.toBeInstanceOf(StrictMappingViolation)
        expect((await store.get({ index: 'strict', id: '2' })).found).toBe(false)
      })

      test('dynamic false stores unknown fields but does not index them; enabled false objects too', async () => {
        await store.createIndex({
          index: 'loose',
          body: { mappings: { dynamic: false, properties: { a: { type: 'keyword' }, blob: { type: 'object', enabled: false } } } },
        })
        await store.index({ index: 'loose', id: '1', body: { a: 'x', extra: 'hidden', blob: { any: [1, { k: 'v' }] } }, refresh: true })
        const got = await store.get({ index: 'loose', id: '1' })
        expect(got.found && got._source).toEqual({ a: 'x', extra: 'hidden', blob: { any: [1, { k: 'v' }] } })
        expect(ids(await search('loose', { query: { term: { extra: 'hidden' } } }))).toEqual([])
        expect(ids(await search('loose', { query: { term: { 'blob.any.k': 'v' } } }))).toEqual([])
        expect(ids(await search('loose', { query: { term: { a: 'x' } } }))).toEqual(['1'])
        expect((await store.getMapping({ index: 'loose' })).loose.mappings.properties!.extra).toBeUndefined()
      })

      test('the multi-fields of a field mapped index: false are indexed on their own', async () => {
        await store.createIndex({
          index: 'unindexed',
          body: {
            mappings: { properties: { a: { type: 'keyword', index: false, fields: { raw: { type: 'keyword' }, t: { type: 'text' } } } } },
          },
        })
        await store.index({ index: 'unindexed', id: '1', body: { a: 'Quick Fox' }, refresh: true })
        expect(ids(await search('unindexed', { query: { term: { 'a.raw': 'Quick Fox' } } }))).toEqual(['1'])
        expect(ids(await search('unindexed', { query: { match: { 'a.t': 'fox' } } }))).toEqual(['1'])
        expect(ids(await search('unindexed', { query: { term: { 'a.raw': 'quick fox' } } }))).toEqual([])
      })

      test('values that do not fit the mapping fail with mapper_parsing_exception', async () => {
        await store.createIndex({
          index: 'typed',
          body: { mappings: { properties: { n: { type: 'long' }, d: { type: 'date' }, o: { type: 'object' }, b: { type: 'boolean' } } } },
        })
        await expect(store.index({ index: 'typed', body: { n: 'abc' } })).rejects.toBeInstanceOf(MapperParsing)
        await expect(store.index({ index: 'typed', body: { d: 'not a date' } })).rejects.toBeInstanceOf(MapperParsing)
        await expect(store.index({ index: 'typed', body: { o: 'scalar' } })).rejects.toBeInstanceOf(MapperParsing)
        await expect(store.index({ index: 'typed', body: { b: 'yes' } })).rejects.toBeInstanceOf(MapperParsing)
        await store.index({ index: 'typed', id: 'ok', body: { n: '12', d: 1700000000000, b: 'true' }, refresh: true })
        expect(ids(await search('typed', { query: { term: { n: 12 } } }))).toEqual(['ok'])
      })
    })

    describe('documents', () => {
      test('index/get with _seq_no, _primary_term, _version; auto ids are 20-char base64url', async () => {
        const a = await store.index({ index: 'd', id: 'x', body: { v: 1 } })
        expect(a).toMatchObject({ _index: 'd', _id: 'x', _version: 1, result: 'created', _primary_term: 1 })
        const b = await store.index({ index: 'd', id: 'x', body: { v: 2 } })
        expect(b).toMatchObject({ _version: 2, result: 'updated' })
        expect(b._seq_no).toBeGreaterThan(a._seq_no)
        const auto = await store.index({ index: 'd', body: { v: 3 } })
        expect(auto._id).toMatch(/^[A-Za-z0-9_-]{20}$/)
        expect(auto._seq_no).toBeGreaterThan(b._seq_no)
        const got = await store.get({ index: 'd', id: 'x' })
        expect(got).toEqual({ _index: 'd', _id: 'x', _version: 2, _seq_no: b._seq_no, _primary_term: 1, found: true, _source: { v: 2 } })
        expect(await store.get({ index: 'd', id: 'missing' })).toEqual({ _index: 'd', _id: 'missing', found: false })
        await expect(store.get({ index: 'nope', id: 'x' })).rejects.toBeInstanceOf(IndexNotFound)
      })

      test('get with _source filtering', async () => {
        await store.index({ index: 'd', id: '1', body: { a: { b: 1, c: 2 }, d: 3, e: [{ f: 1, g: 2 }] } })
        const src = async (p: Parameters<Store['get']>[0]) => {
          const r = await store.get(p)
          return r.found ? r._source : undefined
        }
        expect(await src({ index: 'd', id: '1', _source: false })).toBeUndefined()
        expect(await src({ index: 'd', id: '1', _source: ['a.b', 'd'] })).toEqual({ a: { b: 1 }, d: 3 })
        expect(await src({ index: 'd', id: '1', _source_excludes: 'a.*' })).toEqual({ a: {}, d: 3, e: [{ f: 1, g: 2 }] })
        expect(await src({ index: 'd', id: '1', _source: { includes: ['e.*', 'a'], excludes: ['e.g'] } })).toEqual({
          a: { b: 1, c: 2 },
          e: [{ f: 1 }],
        })
        expect(await src({ index: 'd', id: '1', _source_includes: 'a*' })).toEqual({ a: { b: 1, c: 2 } })
      })

      test('create-only conflicts with version_conflict_engine_exception 409', async () => {
        await store.create({ index: 'd', id: '1', body: { v: 1 } })
        const e = await store.create({ index: 'd', id: '1', body: { v: 2 } }).catch((e) => e)
        expect(e).toBeInstanceOf(VersionConflict)
        expect((e as StoreError).status).toBe(409)
        expect((e as StoreError).reason).toContain('document already exists')
        await expect(store.index({ index: 'd', id: '1', body: { v: 3 }, op_type: 'create' })).rejects.toBeInstanceOf(VersionConflict)
        const got = await store.get({ index: 'd', id: '1' })
        expect(got.found && got._source).toEqual({ v: 1 })
      })

      test('if_seq_no / if_primary_term', async () => {
        const a = await store.index({ index: 'd', id: '1', body: { v: 1 } })
        const b = await store.index({ index: 'd', id: '1', body: { v: 2 }, if_seq_no: a._seq_no, if_primary_term: 1 })
        expect(b._version).toBe(2)
        await expect(store.index({ index: 'd', id: '1', body: { v: 3 }, if_seq_no: a._seq_no, if_primary_term: 1 })).rejects.toBeInstanceOf(
          VersionConflict,
        )
        await expect(store.index({ index: 'd', id: '1', body: { v: 3 }, if_seq_no: b._seq_no, if_primary_term: 2 })).rejects.toBeInstanceOf(
          VersionConflict,
        )
        await expect(store.index({ index: 'd', id: 'none', body: { v: 3 }, if_seq_no: 0, if_primary_term: 1 })).rejects.toBeInstanceOf(
          VersionConflict,
        )
        await expect(store.delete({ index: 'd', id: '1', if_seq_no: a._seq_no, if_primary_term: 1 })).rejects.toBeInstanceOf(
          VersionConflict,
        )
        await expect(
          store.update({ index: 'd', id: '1', body: { doc: { w: 1 } }, if_seq_no: a._seq_no, if_primary_term: 1 }),
        ).rejects.toBeInstanceOf(VersionConflict)
        const got = await store.get({ index: 'd', id: '1' })
        expect(got.found && got._source).toEqual({ v: 2 })
      })

      test('optimistic concurrency: racing compare-and-set writers never lose an increment', async () => {
        await store.index({ index: 'ctr', id: 'c', body: { n: 0 } })
        let conflicts = 0
        const worker = async (times: number) => {
          for (let i = 0; i < times; i++) {
            for (;;) {
              const cur = await store.get({ index: 'ctr', id: 'c' })
              if (!cur.found) throw new Error('missing')
              await Promise.resolve() // let other workers read the same version
              try {
                await store.index({
                  index: 'ctr',
                  id: 'c',
                  body: { n: (cur._source!.n as number) + 1 },
                  if_seq_no: cur._seq_no,
                  if_primary_term: cur._primary_term,
                })
                break
              } catch (e) {
                if (!(e instanceof VersionConflict)) throw e
                conflicts++
              }
            }
          }
        }
        await Promise.all([worker(15), worker(15), worker(15), worker(15)])
        const got = await store.get({ index: 'ctr', id: 'c' })
        expect(got.found && got._source!.n).toBe(60)
        expect(got.found && got._version).toBe(61)
        expect(conflicts).toBeGreaterThan(0)
      })

      test('create-only lock: of many racing creators exactly one wins', async () => {
        const results = await Promise.allSettled(
          Array.from({ length: 8 }, (_, i) => store.create({ index: 'locks', id: 'job-1', body: { owner: i } })),
        )
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
        for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(VersionConflict)
      })

      test('update: deep merge of objects, arrays replaced, noop, upserts, missing', async () => {
        await store.index({ index: 'd', id: '1', body: { a: { b: 1, c: [1, 2] }, keep: true } })
        const u = await store.update({ index: 'd', id: '1', body: { doc: { a: { c: [3], d: 'new' } } } })
        expect(u).toMatchObject({ result: 'updated', _version: 2 })
        const got = await store.get({ index: 'd', id: '1' })
        expect(got.found && got._source).toEqual({ a: { b: 1, c: [3], d: 'new' }, keep: true })
        const noop = await store.update({ index: 'd', id: '1', body: { doc: { keep: true } } })
        expect(noop).toMatchObject({ result: 'noop', _version: 2, _seq_no: u._seq_no })
        const forced = await store.update({ index: 'd', id: '1', body: { doc: { keep: true }, detect_noop: false } })
        expect(forced).toMatchObject({ result: 'updated', _version: 3 })
        const miss = await store.update({ index: 'd', id: 'nope', body: { doc: { x: 1 } } }).catch((e) => e)
        expect(miss).toBeInstanceOf(DocumentMissing)
        expect((miss as StoreError).status).toBe(404)
        expect(await store.update({ index: 'd', id: 'up', body: { doc: { x: 1 }, doc_as_upsert: true } })).toMatchObject({
          result: 'created',
          _version: 1,
        })
        expect(await store.update({ index: 'd', id: 'up2', body: { doc: { x: 1 }, upsert: { x: 0 } } })).toMatchObject({
          result: 'created',
        })
        const up2 = await store.get({ index: 'd', id: 'up2' })
        expect(up2.found && up2._source).toEqual({ x: 0 })
      })

      test('delete: deleted then not_found; seq_no keeps rising', async () => {
        const a = await store.index({ index: 'd', id: '1', body: { v: 1 } })
        const del = await store.delete({ index: 'd', id: '1' })
        expect(del).toMatchObject({ result: 'deleted', _version: 2 })
        expect(del._seq_no).toBeGreaterThan(a._seq_no)
        const again = await store.delete({ index: 'd', id: '1' })
        expect(again.result).toBe('not_found')
        expect((await store.get({ index: 'd', id: '1' })).found).toBe(false)
        const re = await store.index({ index: 'd', id: '1', body: { v: 2 } })
        expect(re.result).toBe('created')
        await expect(store.delete({ index: 'missing-index', id: '1' })).rejects.toBeInstanceOf(IndexNotFound)
      })

      test('bulk: per-item results and partial failures', async () => {
        await store.createIndex({ index: 'b', body: { mappings: { properties: { n: { type: 'long' } } } } })
        await store.index({ index: 'b', id: 'exists', body: { n: 1 } })
        const r = await store.bulk({
          index: 'b',
          body: [
            { index: { _id: '1' } },
            { n: 1 },
            { create: { _id: 'exists' } },
            { n: 2 },
            { index: { _id: 'bad' } },
            { n: 'not a number' },
            { update: { _id: '1' } },
            { doc: { m: 'x' } },
            { update: { _id: 'ghost' } },
            { doc: { m: 'x' } },
            { delete: { _id: 'exists' } },
            { delete: { _id: 'never' } },
            { index: { _index: 'other' } },
            { auto: true },
          ],
        })
        expect(r.errors).toBe(true)
        const flat = r.items.map((i) => Object.entries(i)[0])
        expect(flat.map(([op, it]) => [op, it!.status])).toEqual([
          ['index', 201],
          ['create', 409],
          ['index', 400],
          ['update', 200],
          ['update', 404],
          ['delete', 200],
          ['delete', 404],
          ['index', 201],
        ])
        expect(flat[1][1]!.error?.type).toBe('version_conflict_engine_exception')
        expect(flat[2][1]!.error?.type).toBe('mapper_parsing_exception')
        expect(flat[4][1]!.error?.type).toBe('document_missing_exception')
        expect(flat[7][1]!._index).toBe('other')
        expect(flat[7][1]!._id).toMatch(/^[A-Za-z0-9_-]{20}$/)
        const one = await store.get({ index: 'b', id: '1' })
        expect(one.found && one._source).toEqual({ n: 1, m: 'x' })
        expect((await store.get({ index: 'b', id: 'bad' })).found).toBe(false)
        expect((await store.get({ index: 'b', id: 'exists' })).found).toBe(false)
        await expect(store.bulk({ body: [{ frobnicate: {} }] })).rejects.toBeInstanceOf(IllegalArgument)
        const ok = await store.bulk({ body: [{ index: { _index: 'b', _id: 'z' } }, { n: 5 }] })
        expect(ok.errors).toBe(false)
      })
    })

    describe('aliases', () => {
      test('add/remove, get, write index rules, alias filters', async () => {
        await store.createIndex({ index: 'v1', body: { aliases: { cur: {} } } })
        await store.createIndex({ index: 'v2' })
        await store.index({ index: 'cur', id: 'a', body: { kind: 'x' }, refresh: true })
        expect((await store.get({ index: 'v1', id: 'a' })).found).toBe(true)
        await store.updateAliases({ body: { actions: [{ add: { index: 'v2', alias: 'cur' } }] } })
        await expect(store.index({ index: 'cur', id: 'b', body: {} })).rejects.toBeInstanceOf(IllegalArgument)
        await store.updateAliases({ body: { actions: [{ add: { index: 'v2', alias: 'cur', is_write_index: true } }] } })
        await store.index({ index: 'cur', id: 'b', body: { kind: 'y' }, refresh: true })
        expect((await store.get({ index: 'v2', id: 'b' })).found).toBe(true)
        expect(ids(await search('cur', { query: { match_all: {} }, sort: ['_doc'] })).sort()).toEqual(['a', 'b'])
        expect(await store.getAlias({ name: 'cur' })).toEqual({
          v1: { aliases: { cur: {} } },
          v2: { aliases: { cur: { is_write_index: true } } },
        })
        await store.updateAliases({
          body: { actions: [{ add: { index: 'v1', alias: 'only-x', filter: { term: { 'kind.keyword': 'x' } } } }] },
        })
        expect(ids(await search('only-x', {}))).toEqual(['a'])
        await expect(store.updateAliases({ body: { actions: [{ remove: { index: 'v1', alias: 'ghost' } }] } })).rejects.toBeInstanceOf(
          AliasesNotFound,
        )
        await expect(store.getAlias({ name: 'ghost' })).rejects.toBeInstanceOf(AliasesNotFound)
        await expect(store.deleteIndex({ index: 'cur' })).rejects.toBeInstanceOf(IllegalArgument)
        // (`v*`, not `*`: on a secured platform a wildcard alias action that covers its system indices is refused, 403.)
        await store.updateAliases({ body: { actions: [{ remove: { index: 'v*', alias: 'cur' } }] } })
        expect(await store.getAlias({ index: 'v2' })).toEqual({ v2: { aliases: {} } })
      })

      test('atomic actions: a failing action leaves everything as it was', async () => {
        await store.createIndex({ index: 'v1', body: { aliases: { cur: {} } } })
        await store.createIndex({ index: 'v2' })
        await expect(
          store.updateAliases({
            body: { actions: [{ remove: { index: 'v1', alias: 'cur' } }, { add: { index: 'missing', alias: 'cur' } }] },
          }),
        ).rejects.toBeInstanceOf(IndexNotFound)
        expect(await store.resolve('cur')).toEqual(['v1'])
      })

      // 40 swaps: on a three-node cluster under load each is a cluster state change of 50-150 ms.
      test('alias swap: readers never see a missing alias', async () => {
        await store.createIndex({ index: 'blue', body: { aliases: { live: {} } } })
        await store.createIndex({ index: 'green' })
        await store.index({ index: 'blue', id: '1', body: { color: 'blue' }, refresh: true })
        await store.index({ index: 'green', id: '1', body: { color: 'green' }, refresh: true })
        let stop = false
        let reads = 0
        const seen = new Set<string>()
        const reader = async () => {
          while (!stop) {
            const r = await search('live', { query: { match_all: {} } })
            expect(r.hits.hits).toHaveLength(1)
            seen.add(r.hits.hits[0]._index)
            reads++
            await new Promise((res) => setTimeout(res, 0))
          }
        }
        const swapper = async () => {
          for (let i = 0; i < 40; i++) {
            const [from, to] = i % 2 === 0 ? ['blue', 'green'] : ['green', 'blue']
            await store.updateAliases({
              body: { actions: [{ remove: { index: from, alias: 'live' } }, { add: { index: to, alias: 'live' } }] },
            })
            await new Promise((res) => setTimeout(res, 0))
          }
          stop = true
        }
        await Promise.all([reader(), reader(), swapper()])
        expect(reads).toBeGreaterThan(10)
        expect([...seen].sort()).toEqual(['blue', 'green'])
      }, 30_000)

      test('remove_index in the same atomic request', async () => {
        await store.createIndex({ index: 'old', body: { aliases: { app: {} } } })
        await store.createIndex({ index: 'new' })
        await store.updateAliases({ body: { actions: [{ add: { index: 'new', alias: 'app' } }, { remove_index: { index: 'old' } }] } })
        expect(await store.existsIndex({ index: 'old' })).toBe(false)
        expect(await store.resolve('app')).toEqual(['new'])
      })
    })

    describe('templates and data streams', () => {
      test('composable templates apply settings, mappings and aliases to new indices', async () => {
        await store.putIndexTemplate({
          name: 't1',
          body: {
            index_patterns: ['app-*'],
            priority: 5,
            template: {
              settings: { number_of_replicas: 0 },
              mappings: { properties: { code: { type: 'keyword' } } },
              aliases: { apps: {} },
            },
          },
        })
        await store.putIndexTemplate({
          name: 't0',
          body: { index_patterns: ['app-*'], priority: 1, template: { mappings: { properties: { code: { type: 'long' } } } } },
        })
        await store.index({ index: 'app-1', id: '1', body: { code: '007' } })
        expect((await store.getMapping({ index: 'app-1' }))['app-1'].mappings.properties!.code).toEqual({ type: 'keyword' })
        expect((await store.getSettings({ index: 'app-1' }))['app-1'].settings.index.number_of_replicas).toBe('0')
        expect(await store.resolve('apps')).toEqual(['app-1'])
        const t = await store.getIndexTemplate({ name: 't1' })
        expect(t.index_templates[0]).toMatchObject({ name: 't1', index_template: { index_patterns: ['app-*'], priority: 5 } })
        await expect(store.putIndexTemplate({ name: 't2', body: { index_patterns: ['app-x*'], priority: 5 } })).rejects.toBeInstanceOf(
          IllegalArgument,
        )
        await store.deleteIndexTemplate({ name: 't0' })
        await expect(store.getIndexTemplate({ name: 't0' })).rejects.toBeInstanceOf(StoreError)
        await expect(store.deleteIndexTemplate({ name: 't0' })).rejects.toBeInstanceOf(StoreError)
      })

      test('component templates compose new indices in order; legacy templates apply by order when no composable one matches', async () => {
        await store.putComponentTemplate({
          name: 'c-base',
          body: {
            template: {
              settings: { number_of_replicas: 0 },
              mappings: { properties: { code: { type: 'long' }, note: { type: 'keyword' } } },
            },
          },
        })
        await store.putComponentTemplate({
          name: 'c-code',
          body: { template: { mappings: { properties: { code: { type: 'keyword' } } }, aliases: { composed: {} } } },
        })
        await store.putIndexTemplate({
          name: 'tc',
          body: {
            index_patterns: ['comp-*'],
            priority: 3,
            composed_of: ['c-base', 'c-code'],
            template: { mappings: { properties: { extra: { type: 'integer' } } } },
          },
        })
        await store.index({ index: 'comp-1', id: '1', body: { code: 'x' }, refresh: true })
        const props = (await store.getMapping({ index: 'comp-1' }))['comp-1'].mappings.properties!
        expect([props.code, props.note, props.extra]).toEqual([{ type: 'keyword' }, { type: 'keyword' }, { type: 'integer' }])
        expect((await store.getSettings({ index: 'comp-1' }))['comp-1'].settings.index.number_of_replicas).toBe('0')
        expect(await store.resolve('composed')).toEqual(['comp-1'])
        expect((await store.getComponentTemplate({ name: 'c-code' })).component_templates.map((c) => c.name)).toEqual(['c-code'])
        // In use by tc: refused; a missing name: not found.
        await expect(store.deleteComponentTemplate({ name: 'c-base' })).rejects.toBeInstanceOf(StoreError)
        await expect(store.getComponentTemplate({ name: 'c-none' })).rejects.toBeInstanceOf(StoreError)

        await store.putTemplate({
          name: 'l-low',
          body: {
            index_patterns: ['leg-*'],
            order: 0,
            settings: { number_of_replicas: 0 },
            mappings: { properties: { f: { type: 'long' }, g: { type: 'long' } } },
          },
        })
        await store.putTemplate({
          name: 'l-high',
          body: { index_patterns: ['leg-*'], order: 5, mappings: { properties: { f: { type: 'keyword' } } } },
        })
        await store.createIndex({ index: 'leg-1' })
        const legacy = (await store.getMapping({ index: 'leg-1' }))['leg-1'].mappings.properties!
        expect([legacy.f, legacy.g]).toEqual([{ type: 'keyword' }, { type: 'long' }])
        expect(Object.keys(await store.getTemplate({ name: 'l-*' })).sort()).toEqual(['l-high', 'l-low'])
        // A composable template for the same names wins over every legacy one.
        await store.putIndexTemplate({
          name: 'tl',
          body: { index_patterns: ['leg-*'], template: { mappings: { properties: { f: { type: 'integer' } } } } },
        })
        await store.createIndex({ index: 'leg-2' })
        const composed = (await store.getMapping({ index: 'leg-2' }))['leg-2'].mappings.properties!
        expect(composed.f).toEqual({ type: 'integer' })
        expect(composed.g).toBeUndefined()
        for (const name of ['tc', 'tl']) await store.deleteIndexTemplate({ name })
        for (const name of ['c-base', 'c-code']) await store.deleteComponentTemplate({ name })
        for (const name of ['l-low', 'l-high']) await store.deleteTemplate({ name })
        expect(await store.getTemplate({ name: 'l-*' })).toEqual({})
      })

      test('data streams: auto-created on first create-write, backing index naming, op_type rules', async () => {
        await store.putIndexTemplate({
          name: 'ds',
          body: {
            index_patterns: ['events-*'],
            data_stream: {},
            priority: 10,
            template: { mappings: { properties: { code: { type: 'keyword' } } } },
          },
        })
        // An explicit op_type=index is refused; an auto-id write is op_type=create (OpenSearch's auto-id handler).
        await expect(
          store.index({ index: 'events-a', body: { '@timestamp': '2024-01-01T00:00:00Z' }, op_type: 'index' }),
        ).rejects.toBeInstanceOf(IllegalArgument)
        const w = await store.index({ index: 'events-a', body: { '@timestamp': '2024-01-01T00:00:00Z', msg: 'hi' }, op_type: 'create' })
        expect(w._index).toBe('.ds-events-a-000001')
        const auto = await store.index({ index: 'events-a', body: { '@timestamp': '2024-01-01T00:00:00Z', msg: 'auto' } })
        expect(auto.result).toBe('created')
        await store.delete({ index: auto._index, id: auto._id })
        await expect(store.index({ index: 'events-a', body: { msg: 'no ts' }, op_type: 'create' })).rejects.toBeInstanceOf(MapperParsing)
        const b = await store.bulk({
          body: [
            { create: { _index: 'events-a' } },
            { '@timestamp': 1704067200000 },
            { index: { _index: 'events-a' } },
            { '@timestamp': 1704067200000 },
          ],
        })
        expect(b.items.map((i) => Object.values(i)[0]!.status)).toEqual([201, 400])
        const ds = await store.getDataStream({ name: 'events-a' })
        expect(ds.data_streams).toHaveLength(1)
        expect(ds.data_streams[0]).toMatchObject({
          name: 'events-a',
          generation: 1,
          timestamp_field: { name: '@timestamp' },
          template: 'ds',
        })
        // Health depends on the cluster (a replica on a single node stays unassigned): not part of the contract.
        expect(['GREEN', 'YELLOW']).toContain(ds.data_streams[0].status)
        expect(ds.data_streams[0].indices.map((i) => i.index_name)).toEqual(['.ds-events-a-000001'])
        await store.refresh({ index: 'events-a' })
        const r = await search('events-a', { query: { match_all: {} } })
        expect(r.hits.hits.map((h) => h._index)).toEqual(['.ds-events-a-000001', '.ds-events-a-000001'])
        const dsProps = (await store.getMapping({ index: '.ds-events-a-000001' }))['.ds-events-a-000001'].mappings.properties!
        expect(dsProps['@timestamp']).toEqual({ type: 'date' })
        expect(dsProps.code).toEqual({ type: 'keyword' }) // the stream's template shapes its backing index
        expect(await everyIndex('*')).toEqual(['.ds-events-a-000001']) // through the data stream, not the hidden index
        expect((await store.getIndex({ index: '.ds-events-a-000001' }))['.ds-events-a-000001'].settings.index.hidden).toBe('true')
        await expect(store.createIndex({ index: 'events-b' })).rejects.toBeInstanceOf(IllegalArgument)
        await expect(store.deleteIndexTemplate({ name: 'ds' })).rejects.toBeInstanceOf(IllegalArgument)
        await expect(store.deleteIndex({ index: '.ds-events-a-000001' })).rejects.toBeInstanceOf(IllegalArgument)
        await store.createDataStream({ name: 'events-b' })
        await expect(store.createDataStream({ name: 'events-b' })).rejects.toBeInstanceOf(AlreadyExists)
        await expect(store.createDataStream({ name: 'nomatch' })).rejects.toBeInstanceOf(IllegalArgument)
        expect((await store.getDataStream()).data_streams.map((d) => d.name)).toEqual(['events-a', 'events-b'])
        await store.deleteDataStream({ name: 'events-*' })
        expect((await store.getDataStream()).data_streams).toEqual([])
        expect(await store.existsIndex({ index: '.ds-events-a-000001' })).toBe(false)
        await expect(store.getDataStream({ name: 'events-a' })).rejects.toBeInstanceOf(StoreError)
      })

      test('data stream rollover: dry run names the next generation, rollover makes it the write index', async () => {
        await store.putIndexTemplate({ name: 'roll', body: { index_patterns: ['roll-*'], data_stream: {}, priority: 10 } })
        await store.createDataStream({ name: 'roll-a' })
        expect(await store.rolloverDataStream({ name: 'roll-a', dry_run: true })).toEqual({
          old_index: '.ds-roll-a-000001',
          new_index: '.ds-roll-a-000002',
        })
        expect((await store.getDataStream({ name: 'roll-a' })).data_streams[0].generation).toBe(1)
        expect(await store.rolloverDataStream({ name: 'roll-a' })).toEqual({
          old_index: '.ds-roll-a-000001',
          new_index: '.ds-roll-a-000002',
        })
        const ds = (await store.getDataStream({ name: 'roll-a' })).data_streams[0]
        expect(ds.generation).toBe(2)
        expect(ds.indices.map((i) => i.index_name)).toEqual(['.ds-roll-a-000001', '.ds-roll-a-000002'])
        const w = await store.index({ index: 'roll-a', body: { '@timestamp': 1704067200000 }, op_type: 'create' })
        expect(w._index).toBe('.ds-roll-a-000002')
        await expect(store.rolloverDataStream({ name: 'roll-none' })).rejects.toBeInstanceOf(StoreError)
        await store.deleteDataStream({ name: 'roll-a' })
      })
    })

    describe('search', () => {
      test('every query type', async () => {
        await seed()
        const q = async (query: Record<string, unknown>) => ids(await search('people', { query, sort: ['_doc'], size: 100 })).sort()
        expect(await q({ match_all: {} })).toEqual(['1', '2', '3', '4'])
        expect(await q({ match_none: {} })).toEqual([])
        expect(await q({ term: { name: 'bob' } })).toEqual(['2'])
        expect(await q({ term: { name: 'BOB' } })).toEqual([])
        expect(await q({ term: { name: { value: 'BOB', case_insensitive: true } } })).toEqual(['2'])
        expect(await q({ term: { tags: 'b' } })).toEqual(['1', '2'])
        expect(await q({ term: { active: false } })).toEqual(['2'])
        expect(await q({ term: { ip: '10.0.0.0/8' } })).toEqual(['1', '3'])
        expect(await q({ term: { bio: 'quick' } })).toEqual(['1', '3'])
        expect(await q({ terms: { name: ['Alice', 'dave', 'zed'] } })).toEqual(['1', '4'])
        expect(await q({ ids: { values: ['2', '4', '9'] } })).toEqual(['2', '4'])
        expect(await q({ range: { age: { gte: 25, lt: 42 } } })).toEqual(['1', '2'])
        expect(await q({ range: { born: { gte: '1990-01-01', lte: '2000-01-01' } } })).toEqual(['1', '2'])
        expect(await q({ range: { born: { gt: 'now-100y' } } })).toEqual(['1', '2', '3', '4'])
        expect(await q({ range: { born: { lt: '1999-01-15||/d' } } })).toEqual(['1', '3'])
        expect(await q({ range: { name: { gte: 'a', lt: 'c' } } })).toEqual(['2'])
        expect(await q({ exists: { field: 'age' } })).toEqual(['1', '2', '3'])
        expect(await q({ exists: { field: 'tags' } })).toEqual(['1', '2'])
        expect(await q({ bool: { must_not: [{ exists: { field: 'bio' } }] } })).toEqual(['4'])
        expect(await q({ prefix: { name: 'Ca' } })).toEqual(['3'])
        expect(await q({ prefix: { name: { value: 'ca', case_insensitive: true } } })).toEqual(['3'])
        expect(await q({ wildcard: { name: '*o*' } })).toEqual(['2', '3'])
        expect(await q({ wildcard: { name: { value: 'A?ICE', case_insensitive: true } } })).toEqual(['1'])
        expect(await q({ wildcard: { 'city.raw': '*York' } })).toEqual(['1'])
        expect(await q({ regexp: { name: '[a-c].*' } })).toEqual(['2'])
        // case_insensitive folds the characters a class lists, not a range's bounds (Lucene's RegExp).
        expect(await q({ regexp: { name: { value: '[abc].*', case_insensitive: true } } })).toEqual(['1', '2', '3'])
        expect(await q({ regexp: { name: { value: '[a-c].*', case_insensitive: true } } })).toEqual(['2'])
        expect(await q({ regexp: { name: { value: '[^a-c].*', case_insensitive: true } } })).toEqual(['1', '3', '4'])
        expect(await q({ match: { bio: 'QUICK dogs' } })).toEqual(['1', '2', '3'])
        expect(await q({ match: { bio: { query: 'quick fox', operator: 'and' } } })).toEqual(['3'])
        expect(await q({ match: { city: 'new york' } })).toEqual(['1', '3'])
        expect(await q({ match_phrase: { bio: 'quick brown' } })).toEqual(['1'])
        expect(await q({ bool: { filter: [{ term: { active: true } }], must_not: [{ term: { name: 'dave' } }] } })).toEqual(['1', '3'])
        expect(await q({ bool: { should: [{ term: { name: 'bob' } }, { term: { name: 'dave' } }] } })).toEqual(['2', '4'])
        expect(
          await q({
            bool: { should: [{ term: { tags: 'a' } }, { term: { tags: 'b' } }, { term: { active: true } }], minimum_should_match: 2 },
          }),
        ).toEqual(['1'])
        expect(await q({ bool: { must: { term: { active: true } }, should: [{ term: { name: 'zed' } }] } })).toEqual(['1', '3', '4'])
        expect(await q({ constant_score: { filter: { term: { name: 'Carol' } } } })).toEqual(['3'])
        expect(await q({ term: { unmapped_field: 'x' } })).toEqual([])
        await expect(search('people', { query: { bogus: {} } })).rejects.toBeInstanceOf(ParsingError)
      })

      test('sort asc/desc with missing last, from/size, search_after', async () => {
        await seed()
        expect(ids(await search('people', { sort: [{ age: 'asc' }] }))).toEqual(['2', '1', '3', '4'])
        expect(ids(await search('people', { sort: [{ age: { order: 'desc' } }] }))).toEqual(['3', '1', '2', '4'])
        expect(ids(await search('people', { sort: [{ age: { order: 'desc', missing: '_first' } }] }))).toEqual(['4', '3', '1', '2'])
        expect(ids(await search('people', { sort: ['name'] }))).toEqual(['1', '3', '2', '4'])
        const r = await search('people', { sort: [{ born: 'asc' }, { name: 'asc' }], size: 2 })
        expect(ids(r)).toEqual(['3', '1'])
        expect(r.hits.hits[0].sort).toEqual([Date.UTC(1982, 11, 31), 'Carol'])
        expect(r.hits.hits[0]._score).toBeNull()
        expect(r.hits.max_score).toBeNull()
        const next = await search('people', { sort: [{ born: 'asc' }, { name: 'asc' }], size: 2, search_after: r.hits.hits[1].sort })
        expect(ids(next)).toEqual(['2', '4'])
        expect(total(next)).toBe(4)
        expect(ids(await search('people', { sort: [{ age: 'asc' }], from: 1, size: 2 }))).toEqual(['1', '3'])
        expect(ids(await search('people', { sort: [{ age: 'asc' }], size: 0 }))).toEqual([])
        await expect(search('people', { sort: [{ bio: 'asc' }] })).rejects.toBeInstanceOf(IllegalArgument)
        await expect(search('people', { sort: [{ nothere: 'asc' }] })).rejects.toBeInstanceOf(StoreError)
        expect(ids(await search('people', { sort: [{ nothere: { order: 'asc', unmapped_type: 'long' } }, { _id: 'desc' }] }))).toEqual([
          '4',
          '3',
          '2',
          '1',
        ])
        await expect(search('people', { from: 9995, size: 10 })).rejects.toBeInstanceOf(IllegalArgument)
      })

      test('track_total_hits, _source filtering, seq_no_primary_term, version, matched_queries', async () => {
        await store.bulk({
          index: 'many',
          body: Array.from({ length: 30 }, (_, i) => [{ index: { _id: String(i) } }, { i, g: i % 3 }]).flat(),
          refresh: true,
        })
        const def = await search('many', { size: 1 })
        expect(def.hits.total).toEqual({ value: 30, relation: 'eq' })
        expect((await search('many', { track_total_hits: 10, size: 1 })).hits.total).toEqual({ value: 10, relation: 'gte' })
        expect((await search('many', { track_total_hits: false, size: 1 })).hits.total).toBeUndefined()
        expect((await search('many', { track_total_hits: true, size: 0 })).hits.total).toEqual({ value: 30, relation: 'eq' })
        expect((await store.search({ index: 'many', body: { size: 0 }, rest_total_hits_as_int: true })).hits.total).toBe(30)
        const r = await search('many', {
          query: { bool: { should: [{ term: { g: { value: 0, _name: 'zero' } } }, { range: { i: { lt: 2, _name: 'small' } } }] } },
          sort: [{ i: 'asc' }],
          size: 3,
          _source: { includes: ['i'] },
          seq_no_primary_term: true,
          version: true,
        })
        // The order of matched_queries is unspecified (OpenSearch's follows its segments).
        expect(r.hits.hits.map((h) => [h._id, h._source, h.matched_queries?.toSorted()])).toEqual([
          ['0', { i: 0 }, ['small', 'zero']],
          ['1', { i: 1 }, ['small']],
          ['3', { i: 3 }, ['zero']],
        ])
        expect(r.hits.hits[0]._seq_no).toBe(0)
        expect(r.hits.hits[0]._primary_term).toBe(1)
        expect(r.hits.hits[0]._version).toBe(1)
        const noSource = await search('many', { _source: false, size: 1 })
        expect(noSource.hits.hits[0]._source).toBeUndefined()
        expect((await store.count({ index: 'many', body: { query: { term: { g: 1 } } } })).count).toBe(10)
        expect((await store.count({ index: 'many' })).count).toBe(30)
      })

      test('aggregations: terms (size, order, sub-aggs) and cardinality', async () => {
        await seed()
        const r = await search('people', {
          size: 0,
          aggs: {
            by_tag: { terms: { field: 'tags' } },
            by_active: { terms: { field: 'active' }, aggs: { names: { cardinality: { field: 'name' } } } },
            top1: { terms: { field: 'name', size: 1, order: { _key: 'asc' } } },
            people: { cardinality: { field: 'name' } },
            oldest: { max: { field: 'age' } },
          },
        })
        const a = r.aggregations as Record<string, any>
        expect(a.by_tag).toEqual({
          doc_count_error_upper_bound: 0,
          sum_other_doc_count: 0,
          buckets: [
            { key: 'b', doc_count: 2 },
            { key: 'a', doc_count: 1 },
          ],
        })
        expect(a.by_active.buckets).toEqual([
          { key: 1, key_as_string: 'true', doc_count: 3, names: { value: 3 } },
          { key: 0, key_as_string: 'false', doc_count: 1, names: { value: 1 } },
        ])
        expect(a.top1).toEqual({ doc_count_error_upper_bound: 0, sum_other_doc_count: 3, buckets: [{ key: 'Alice', doc_count: 1 }] })
        expect(a.people).toEqual({ value: 4 })
        expect(a.oldest).toEqual({ value: 42 })
        await expect(search('people', { aggs: { x: { terms: { field: 'bio' } } } })).rejects.toBeInstanceOf(IllegalArgument)
        const filtered = await search('people', { size: 0, query: { term: { active: true } }, aggs: { t: { terms: { field: 'tags' } } } })
        expect((filtered.aggregations as Record<string, any>).t.buckets).toEqual([
          { key: 'a', doc_count: 1 },
          { key: 'b', doc_count: 1 },
        ])
      })

      test('search across indices, wildcards and missing indices', async () => {
        await store.index({ index: 'x1', id: '1', body: { v: 1 }, refresh: true })
        await store.index({ index: 'x2', id: '1', body: { v: 2 }, refresh: true })
        const r = await store.search({ index: 'x*', body: { sort: [{ v: 'desc' }] } })
        expect(r.hits.hits.map((h) => h._index)).toEqual(['x2', 'x1'])
        await expect(store.search({ index: 'nope', body: {} })).rejects.toBeInstanceOf(IndexNotFound)
        expect(total(await store.search({ index: 'nope*', body: {} }))).toBe(0)
        expect(total(await store.search({ index: 'x1,nope', ignore_unavailable: true, body: {} }))).toBe(1)
      })

      test('point in time: a stable snapshot, paged with search_after, deletable', async () => {
        await store.bulk({
          index: 'p',
          body: Array.from({ length: 12 }, (_, i) => [{ index: { _id: `d${i}` } }, { i }]).flat(),
          refresh: true,
        })
        const pit = await store.createPit({ index: 'p', keep_alive: '1m' })
        expect(pit.pit_id.length).toBeGreaterThan(10)
        await store.index({ index: 'p', id: 'late', body: { i: 99 }, refresh: true })
        await store.update({ index: 'p', id: 'd0', body: { doc: { i: -1 } }, refresh: true })
        await store.delete({ index: 'p', id: 'd1', refresh: true })
        const seen: string[] = []
        let after: unknown[] | undefined
        for (;;) {
          const r = await store.search({
            body: { pit: { id: pit.pit_id, keep_alive: '1m' }, size: 5, sort: [{ i: 'asc' }], ...(after ? { search_after: after } : {}) },
          })
          expect(r.pit_id).toBe(pit.pit_id)
          if (r.hits.hits.length === 0) break
          seen.push(...ids(r))
          after = r.hits.hits[r.hits.hits.length - 1].sort
        }
        expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => `d${i}`))
        const first = await store.search({ body: { pit: { id: pit.pit_id }, query: { ids: { values: ['d0'] } } } })
        expect(first.hits.hits[0]._source).toEqual({ i: 0 })
        expect((await store.getAllPits()).pits.map((p) => p.pit_id)).toEqual([pit.pit_id])
        await expect(store.search({ index: 'p', body: { pit: { id: pit.pit_id } } })).rejects.toBeInstanceOf(StoreError)
        expect(await store.deletePit({ body: { pit_id: [pit.pit_id] } })).toEqual({ pits: [{ pit_id: pit.pit_id, successful: true }] })
        await expect(store.search({ body: { pit: { id: pit.pit_id } } })).rejects.toBeInstanceOf(SearchContextMissing)
        const live = await store.search({ index: 'p', body: { size: 0 } })
        expect(total(live)).toBe(12)
      })
    })

    storeDetailsContract(() => store, options.dataNodes)
    storeLifecycleContract(() => store)
  })
}

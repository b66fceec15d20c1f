/**
 * More of the Store contract: OpenSearch details the REST conformance suite checks (index uuids,
 * alias action ordering, stored fields, update `get`, shard headers, PIT keep-alive, field-name
 * errors, dotted mapping names, metadata `exists`, terms limits and lookups, store size).
 * Registered by `runStoreContract`, so every adapter runs it.
 */
import { describe, expect, test } from 'bun:test'
import { DocumentMissing, IllegalArgument, IndexNotFound, MapperParsing, QueryShardError, StoreError } from '../../src/store/errors'
import type { SearchResponse, Store } from '../../src/store/port'

/**
 * `dataNodes`: how many nodes hold shard copies behind the store. The shard-count facts below are
 * a single node's (replicas stay unassigned); on more nodes they depend on allocation timing, and
 * the single-node real OpenSearch of the test run states them for OpenSearch.
 */
export function storeDetailsContract(store: () => Store, dataNodes = 1): void {
  const oneNode = test.if(dataNodes === 1)
  const total = (r: SearchResponse) => (typeof r.hits.total === 'number' ? r.hits.total : r.hits.total?.value)
  const error = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (e: unknown) => e as StoreError,
    )

  describe('OpenSearch details', () => {
    test('index uuids are 22 base64url characters, like OpenSearch’s', async () => {
      await store().createIndex({ index: 'u1' })
      await store().createIndex({ index: 'u2' })
      const got = await store().getIndex({ index: 'u1,u2' })
      const a = got.u1.settings.index.uuid as string
      expect(a).toMatch(/^[A-Za-z0-9_-]{22}$/)
      expect(got.u2.settings.index.uuid).not.toBe(a)
      expect((await store().stats({ index: 'u1' }))[0].uuid).toBe(a)
    })

    test('remove_index runs before the other alias actions, so an alias can take the index’s name', async () => {
      await store().createIndex({ index: 'test' })
      await store().createIndex({ index: 'test_2' })
      await store().index({ index: 'test_2', id: '1', body: { v: 2 }, refresh: true })
      await store().updateAliases({
        body: { actions: [{ add: { index: 'test_2', aliases: ['test', 'test_write'] } }, { remove_index: { index: 'test' } }] },
      })
      expect(Object.keys(await store().getIndex({ index: 'test' }))).toEqual(['test_2'])
      expect(await store().getAlias({ name: 'test,test_write' })).toEqual({ test_2: { aliases: { test: {}, test_write: {} } } })
      const got = await store().get({ index: 'test', id: '1' })
      expect(got.found && got._index).toBe('test_2')
    })

    test('a failing alias action undoes the remove_index of the same request', async () => {
      await store().createIndex({ index: 'keep' })
      await store().createIndex({ index: 'other' })
      const e = await error(
        store().updateAliases({ body: { actions: [{ remove_index: { index: 'keep' } }, { add: { index: 'missing', alias: 'a' } }] } }),
      )
      expect(e).toBeInstanceOf(IndexNotFound)
      expect(await store().existsIndex({ index: 'keep' })).toBe(true)
      // The removed index is gone for the actions that follow it, whatever their order.
      const late = await error(
        store().updateAliases({ body: { actions: [{ add: { index: 'keep', alias: 'late' } }, { remove_index: { index: 'keep' } }] } }),
      )
      expect(late).toBeInstanceOf(IndexNotFound)
      expect(await store().existsIndex({ index: 'keep' })).toBe(true)
    })

    test('stored_fields answers fields mapped with store: true, and leaves _source out unless asked', async () => {
      await store().createIndex({
        index: 'sf',
        body: {
          mappings: {
            properties: { count: { type: 'integer', store: true }, when: { type: 'date', store: true }, plain: { type: 'keyword' } },
          },
        },
      })
      await store().index({ index: 'sf', id: '1', body: { count: '7', when: '2024-01-02', plain: 'x', include: { a: 1 } } })
      const only = await store().get({ index: 'sf', id: '1', stored_fields: 'count,plain' })
      expect(only.found).toBe(true)
      if (!only.found) return
      expect(only.fields).toEqual({ count: [7] })
      expect(only._source).toBeUndefined()
      // Names are taken as they are: a pattern such as `c*` names no field.
      const both = await store().get({ index: 'sf', id: '1', stored_fields: ['c*', 'when'], _source: true })
      expect(both.found && both.fields).toEqual({ when: ['2024-01-02T00:00:00.000Z'] })
      expect(both.found && both._source?.include).toEqual({ a: 1 })
      const withSource = await store().get({ index: 'sf', id: '1', stored_fields: ['_source', 'nothing'] })
      expect(withSource.found && withSource.fields).toBeUndefined()
      expect(withSource.found && withSource._source?.plain).toBe('x')
    })

    test('updates answer the resulting document under get when _source is asked for', async () => {
      await store().index({ index: 'up', id: '1', body: { foo: 'bar', bar: 'foo' } })
      const plain = await store().update({ index: 'up', id: '1', body: { doc: { foo: 'baz' } } })
      expect(plain.get).toBeUndefined()
      const full = await store().update({ index: 'up', id: '1', body: { doc: { foo: 'qux' }, _source: true } })
      expect(full.get).toEqual({ _seq_no: full._seq_no, _primary_term: 1, found: true, _source: { foo: 'qux', bar: 'foo' } })
      const some = await store().update({ index: 'up', id: '1', body: { doc: { foo: 'qux' }, _source: ['bar'] } })
      expect(some.result).toBe('noop')
      expect(some.get?._source).toEqual({ bar: 'foo' })
      const upsert = await store().update({
        index: 'up',
        id: '2',
        body: { doc: { foo: 'baz' }, upsert: { foo: 'bar' }, _source: { includes: 'foo' } },
      })
      expect(upsert.result).toBe('created')
      expect(upsert.get?._source).toEqual({ foo: 'bar' })
      const bulk = await store().bulk({
        body: [
          { update: { _index: 'up', _id: '1', _source: true } },
          { doc: { foo: 'b1' } },
          { update: { _index: 'up', _id: '2' } },
          { doc: { foo: 'b2' }, _source: ['foo'] },
        ],
      })
      expect(bulk.items[0].update?.get?._source).toEqual({ foo: 'b1', bar: 'foo' })
      expect(bulk.items[1].update?.get?._source).toEqual({ foo: 'b2' })
    })

    test('an update of a missing index is a missing document; like any write it creates the index', async () => {
      const r = await store().bulk({ body: [{ update: { _index: 'nowhere', _id: '123' } }, { doc: { field: 'value' } }] })
      expect(r.errors).toBe(true)
      const item = r.items[0].update!
      expect(item.status).toBe(404)
      expect(item.error?.type).toBe('document_missing_exception')
      expect(item.error?.reason).toBe('[123]: document missing')
      expect(await store().existsIndex({ index: 'nowhere' })).toBe(true)
      expect(new DocumentMissing('x', '1').type).toBe(item.error!.type)
      const single = await error(store().update({ index: 'nowhere2', id: '1', body: { doc: { field: 'value' } } }))
      expect(single).toBeInstanceOf(DocumentMissing)
      expect(single!.status).toBe(404)
      expect(await store().existsIndex({ index: 'nowhere2' })).toBe(true)
      // Deletes create nothing.
      expect(await error(store().delete({ index: 'nowhere3', id: '1' }))).toBeInstanceOf(IndexNotFound)
      expect(await store().existsIndex({ index: 'nowhere3' })).toBe(false)
    })

    oneNode('_shards of writes and broadcasts count every copy; only primaries succeed on one node', async () => {
      await store().createIndex({ index: 'r0', body: { settings: { number_of_shards: 5, number_of_replicas: 0 } } })
      await store().createIndex({ index: 'r1', body: { settings: { number_of_shards: 2, number_of_replicas: 1 } } })
      await store().createIndex({ index: 'rauto', body: { settings: { number_of_replicas: 3, auto_expand_replicas: '0-1' } } })
      expect((await store().index({ index: 'r0', id: '1', body: {} }))._shards).toEqual({ total: 1, successful: 1, failed: 0 })
      expect((await store().index({ index: 'r1', id: '1', body: {} }))._shards).toEqual({ total: 2, successful: 1, failed: 0 })
      expect((await store().index({ index: 'rauto', id: '1', body: {} }))._shards).toEqual({ total: 1, successful: 1, failed: 0 })
      expect((await store().delete({ index: 'r0', id: '1' }))._shards.total).toBe(1)
      expect((await store().refresh({ index: 'r0' }))._shards).toEqual({ total: 5, successful: 5, failed: 0 })
      expect((await store().refresh({ index: 'r0,r1,rauto' }))._shards).toEqual({ total: 5 + 4 + 1, successful: 5 + 2 + 1, failed: 0 })
      expect((await store().flush({ index: 'r1' }))._shards).toEqual({ total: 4, successful: 2, failed: 0 })
      expect((await store().refresh({ index: 'nomatch*' }))._shards).toEqual({ total: 0, successful: 0, failed: 0 })
    })

    test('delete with ignore_unavailable skips an alias name instead of refusing it', async () => {
      await store().createIndex({ index: 'index', body: { aliases: { alias: {} } } })
      await store().createIndex({ index: 'index2' })
      expect(await error(store().deleteIndex({ index: 'alias,index2' }))).toBeInstanceOf(IllegalArgument)
      expect(await store().existsIndex({ index: 'index2' })).toBe(true)
      await store().deleteIndex({ index: 'alias', ignore_unavailable: true })
      await store().deleteIndex({ index: 'alias,index2', ignore_unavailable: true })
      expect(await store().existsIndex({ index: 'index' })).toBe(true)
      expect(await store().existsIndex({ index: 'index2' })).toBe(false)
    })

    test('a PIT keeps the longest keep-alive asked for and lists its indices', async () => {
      await store().index({ index: 'p1', id: '1', body: { v: 1 }, refresh: true })
      await store().index({ index: 'p2', id: '1', body: { v: 1 }, refresh: true })
      const { pit_id } = await store().createPit({ index: 'p*', keep_alive: '20h' })
      await store().search({ body: { pit: { id: pit_id, keep_alive: '10m' } } })
      let [info] = (await store().getAllPits()).pits
      expect(info).toMatchObject({ pit_id, keep_alive: 20 * 3_600_000 })
      // OpenSearch's list answer does not name the indices (its PIT id encodes them); a store that keeps them names them all.
      if (info.indices !== undefined) expect(info.indices).toEqual(['p1', 'p2'])
      await store().search({ body: { pit: { id: pit_id, keep_alive: '1d' } } })
      ;[info] = (await store().getAllPits()).pits
      expect(info.keep_alive).toBe(86_400_000)
      // Beyond `point_in_time.max_keep_alive` (24h by default): OpenSearch's 400.
      const e = await error(store().search({ body: { pit: { id: pit_id, keep_alive: '2d' } } }))
      expect(e?.reason).toContain('Keep alive for request (2d) is too large')
    })

    test('field names made only of dots, or empty, are refused with OpenSearch’s messages', async () => {
      await store().createIndex({ index: 'names' })
      // OpenSearch's document parser answers mapper_parsing_exception "failed to parse", caused by the name's problem.
      const cause = async (body: Record<string, unknown>) => {
        const e = await error(store().index({ index: 'names', id: '1', body }))
        expect(e).toBeInstanceOf(MapperParsing)
        expect(e!.reason).toBe('failed to parse')
        const by = e!.metadata.caused_by as { type: string; reason: string }
        expect(by.type).toBe('illegal_argument_exception')
        return by.reason
      }
      for (const body of [{ '.': 'bar' }, { '..': 'bar' }, { foo: { '.': 'bar' } }])
        expect(await cause(body)).toBe('field name cannot contain only the character [.]')
      expect(await cause({ '': 1 })).toBe('field name cannot be an empty string')
      expect(await cause({ '.a': 1 })).toBe('object field starting or ending with a [.] makes object resolution ambiguous: [.a]')
      expect(await cause({ 'a. .b': 1 })).toBe("object field cannot contain only whitespace: ['a. .b']")
      expect((await store().get({ index: 'names', id: '1' })).found).toBe(false)
      const mapping = await error(store().createIndex({ index: 'bad', body: { mappings: { properties: { '': { type: 'keyword' } } } } }))
      expect(mapping).toBeInstanceOf(MapperParsing)
      expect(mapping!.reason).toBe('Failed to parse mapping [_doc]: name cannot be empty string')
      expect(mapping!.metadata.caused_by).toEqual({ type: 'illegal_argument_exception', reason: 'name cannot be empty string' })
      // A put mapping answers the cause itself.
      const put = await error(store().putMapping({ index: 'names', body: { properties: { '': { type: 'keyword' } } } }))
      expect(put).toBeInstanceOf(IllegalArgument)
      expect(put!.reason).toBe('name cannot be empty string')
    })

    test('dotted names in a mapping are sub-properties of objects, merged with what exists', async () => {
      await store().createIndex({ index: 'dots', body: { mappings: { properties: { 'a.b': { type: 'keyword' } } } } })
      await store().putMapping({ index: 'dots', body: { properties: { 'subfield.text3': { type: 'text' }, 'a.c': { type: 'long' } } } })
      await store().putMapping({ index: 'dots', body: { properties: { text1: { type: 'text', fields: { raw: { type: 'keyword' } } } } } })
      const m = (await store().getMapping({ index: 'dots' })).dots.mappings.properties!
      expect(m.a).toEqual({ properties: { b: { type: 'keyword' }, c: { type: 'long' } } })
      expect(m.subfield).toEqual({ properties: { text3: { type: 'text' } } })
      expect(m.text1.fields).toEqual({ raw: { type: 'keyword' } })
      await store().index({ index: 'dots', id: '1', body: { a: { b: 'x', c: 5 } }, refresh: true })
      expect(total(await store().search({ index: 'dots', body: { query: { term: { 'a.c': 5 } } } }))).toBe(1)
    })

    test('dynamic templates map new fields; *_allow_templates admit only the fields they map', async () => {
      const templates: Array<Record<string, Record<string, unknown>>> = [
        { ids: { match: '*_id', match_mapping_type: 'string', mapping: { type: 'keyword' } } },
        { counts: { path_match: 'stats.*', mapping: { type: 'long' } } },
        { named: { match: 'n_*', unmatch: 'n_skip', match_mapping_type: 'long', mapping: { type: 'integer', meta: { of: '{name}' } } } },
      ]
      await store().createIndex({ index: 'dt', body: { mappings: { dynamic_templates: templates } } })
      // (An object under a path a leaf template matches, e.g. `stats.per_day.mon`, is left out: OpenSearch
      // 3.4 refuses such a document with a class_cast_exception, a bug of its own; see README.)
      await store().index({
        index: 'dt',
        id: '1',
        body: { user_id: 'U1', stats: { hits: '12' }, n_a: 3, n_skip: 4, other: 'text here' },
      })
      const props = (await store().getMapping({ index: 'dt' })).dt.mappings.properties!
      expect(props.user_id).toEqual({ type: 'keyword' })
      expect(props.stats.properties!.hits).toEqual({ type: 'long' })
      expect(props.n_a as unknown).toEqual({ type: 'integer', meta: { of: 'n_a' } })
      expect(props.n_skip).toEqual({ type: 'long' })
      expect(props.other.type).toBe('text')

      await store().createIndex({ index: 'sat', body: { mappings: { dynamic: 'strict_allow_templates', dynamic_templates: templates } } })
      await store().index({ index: 'sat', id: '1', body: { user_id: 'U1' } })
      const refused = await error(store().index({ index: 'sat', id: '2', body: { other: 'x' } }))
      expect(refused?.type).toBe('strict_dynamic_mapping_exception')
      expect(refused?.reason).toBe('mapping set to strict_allow_templates, dynamic introduction of [other] within [_doc] is not allowed')

      await store().createIndex({ index: 'fat', body: { mappings: { dynamic: 'false_allow_templates', dynamic_templates: templates } } })
      await store().index({ index: 'fat', id: '1', body: { user_id: 'U1', other: 'x' }, refresh: true })
      const fat = (await store().getMapping({ index: 'fat' })).fat.mappings
      expect(Object.keys(fat.properties!)).toEqual(['user_id'])
      expect(fat.dynamic).toBe('false_allow_templates')
      const got = await store().get({ index: 'fat', id: '1' })
      expect(got.found && got._source).toEqual({ user_id: 'U1', other: 'x' })
      expect(total(await store().search({ index: 'fat', body: { query: { term: { user_id: 'U1' } } } }))).toBe(1)

      // A put mapping's dynamic templates replace the index's list (a template and a create request
      // compose theirs by name).
      await store().putMapping({
        index: 'dt',
        body: {
          dynamic_templates: [
            { ids: { match: '*_key', mapping: { type: 'keyword' } } },
            { extra: { match: 'x_*', mapping: { type: 'boolean' } } },
          ],
        },
      })
      const merged = (await store().getMapping({ index: 'dt' })).dt.mappings.dynamic_templates!
      expect(merged.map((t) => Object.keys(t)[0])).toEqual(['ids', 'extra'])
      expect(merged[0].ids.match).toBe('*_key')
      expect(
        await error(store().createIndex({ index: 'baddt', body: { mappings: { dynamic_templates: [{ a: { match: 'x' } }] } } })),
      ).toBeInstanceOf(MapperParsing)
    })

    test('prototype-named keys are data in settings, dotted mapping names, source filters and aggregation names', async () => {
      const clean = () =>
        expect([({} as Record<string, unknown>).polluted, (Object as unknown as Record<string, unknown>).polluted]).toEqual([
          undefined,
          undefined,
        ])
      await store().createIndex({
        index: 'proto',
        body: JSON.parse(
          '{"settings": {"index": {"analysis": {"analyzer": {"constructor": {"type": "standard"}}}}}, "mappings": {"properties": {"__proto__.polluted": {"type": "keyword"}, "constructor.prototype": {"properties": {"polluted": {"type": "keyword"}}}}}}',
        ),
      })
      clean()
      // (OpenSearch refuses unknown settings such as `index.__proto__`, and names starting with `_` for
      // analyzers: a prototype-named key in settings is an analyzer called `constructor`.)
      const settings = (await store().getSettings({ index: 'proto' })).proto.settings.index as Record<string, any>
      expect(Object.hasOwn(settings.analysis.analyzer, 'constructor')).toBe(true)
      expect(settings.analysis.analyzer.constructor).toEqual({ type: 'standard' })
      clean()
      const props = (await store().getMapping({ index: 'proto' })).proto.mappings.properties!
      expect(Object.hasOwn(props, '__proto__') && Object.hasOwn(props, 'constructor')).toBe(true)
      await store().index({ index: 'proto', id: '1', body: JSON.parse('{"__proto__": {"polluted": "x"}, "other": 1}'), refresh: true })
      clean()
      const hit = await store().search({
        index: 'proto',
        body: { _source: ['__proto__*'], aggs: JSON.parse('{"__proto__": {"terms": {"field": "__proto__.polluted"}}}') },
      })
      clean()
      expect(Object.hasOwn(hit.hits.hits[0]._source!, '__proto__')).toBe(true)
      expect(Object.hasOwn(hit.hits.hits[0]._source!, 'other')).toBe(false)
      expect(Object.hasOwn(hit.aggregations!, '__proto__')).toBe(true)
      expect(total(await store().search({ index: 'proto', body: { query: { term: { '__proto__.polluted': 'x' } } } }))).toBe(1)
    })

    test('exists on metadata fields', async () => {
      await store().index({ index: 'meta', id: '1', body: { a: 1 }, refresh: true })
      await store().index({ index: 'meta', id: '2', body: {}, refresh: true })
      for (const field of ['_id', '_index', '_seq_no', '_version'])
        expect(total(await store().search({ index: 'meta', body: { query: { exists: { field } } } })), field).toBe(2)
      expect(total(await store().search({ index: 'meta', body: { query: { exists: { field: 'a' } } } }))).toBe(1)
      expect(await error(store().search({ index: 'meta', body: { query: { exists: { field: '_source' } } } }))).toBeInstanceOf(
        QueryShardError,
      )
    })

    test('terms queries: index.max_terms_count and terms lookups', async () => {
      await store().createIndex({
        index: 'tl',
        body: {
          settings: { 'index.max_terms_count': 2 },
          mappings: { properties: { user: { type: 'keyword' }, followers: { type: 'keyword' } } },
        },
      })
      const people: Array<[string, string[]]> = [
        ['u1', ['u2', 'u3']],
        ['u2', ['u1', 'u3', 'u4']],
        ['u3', ['u1']],
        ['u4', ['u3']],
      ]
      for (const [user, followers] of people) await store().index({ index: 'tl', id: user, body: { user, followers }, refresh: true })
      const s = (query: unknown) => store().search({ index: 'tl', body: { query: query as Record<string, unknown> } })
      expect(total(await s({ terms: { user: ['u1', 'u2'] } }))).toBe(2)
      const tooMany = await error(s({ terms: { user: ['u1', 'u2', 'u3'] } }))
      // Refused while the shard creates its query: query_shard_exception (under search_phase_execution_exception).
      expect(tooMany).toBeInstanceOf(QueryShardError)
      expect(tooMany!.reason).toContain('The number of terms [3] used in the Terms Query request has exceeded the allowed maximum of [2]')
      // Limits apply inside compound queries too, and to count.
      expect(await error(s({ bool: { filter: [{ terms: { user: ['a', 'b', 'c'] } }] } }))).toBeInstanceOf(QueryShardError)
      expect(await error(store().count({ index: 'tl', body: { query: { terms: { user: ['a', 'b', 'c'] } } } }))).toBeInstanceOf(
        QueryShardError,
      )
      const lookup = await s({ terms: { user: { index: 'tl', id: 'u1', path: 'followers' } } })
      expect(lookup.hits.hits.map((h) => h._id).sort()).toEqual(['u2', 'u3'])
      expect(await error(s({ terms: { user: { index: 'tl', id: 'u2', path: 'followers' } } }))).toBeInstanceOf(QueryShardError)
      expect(total(await s({ bool: { should: [{ terms: { user: { index: 'tl', id: 'gone', path: 'followers' } } }] } }))).toBe(0)
    })

    test('closed indices keep their data, refuse reads and writes, and expand only with expand_wildcards=closed', async () => {
      await store().index({ index: 'c1', id: '1', body: { v: 1 }, refresh: true })
      await store().index({ index: 'c2', id: '1', body: { v: 2 }, refresh: true })
      await store().updateAliases({ body: { actions: [{ add: { index: 'c1', alias: 'ca' } }] } })
      expect(await store().closeIndex({ index: 'c1' })).toEqual({
        acknowledged: true,
        shards_acknowledged: true,
        indices: { c1: { closed: true } },
      })
      const closed = (p: Promise<unknown>) => error(p).then((e) => e?.type)
      expect(await closed(store().get({ index: 'c1', id: '1' }))).toBe('index_closed_exception')
      expect(await closed(store().index({ index: 'c1', id: '2', body: {} }))).toBe('index_closed_exception')
      expect(await closed(store().search({ index: 'c1' }))).toBe('index_closed_exception')
      expect(await closed(store().search({ index: 'ca' }))).toBe('index_closed_exception')
      expect(await closed(store().count({ index: 'c1' }))).toBe('index_closed_exception')
      const bulk = await store().bulk({ body: [{ index: { _index: 'c1', _id: '3' } }, { v: 3 }] })
      expect(bulk.items[0].index?.error?.type).toBe('index_closed_exception')
      // Wildcards skip it for data; ignore_unavailable skips it by name.
      expect(total(await store().search({ index: 'c*' }))).toBe(1)
      expect(total(await store().search({ index: 'c1,c2', ignore_unavailable: true }))).toBe(1)
      // A search that expands wildcards to closed indices fails on them (skips them with ignore_unavailable);
      // closed ones alone are a contradiction.
      expect(await closed(store().search({ index: 'c*', expand_wildcards: 'open,closed' }))).toBe('index_closed_exception')
      expect(await closed(store().search({ index: 'c*', expand_wildcards: 'all' }))).toBe('index_closed_exception')
      expect(await closed(store().search({ index: 'ca*', expand_wildcards: 'open,closed' }))).toBe('index_closed_exception')
      expect(total(await store().search({ index: 'c*', expand_wildcards: 'open,closed', ignore_unavailable: true }))).toBe(1)
      const alone = await error(store().search({ index: 'c*', expand_wildcards: 'closed' }))
      expect([alone?.type, alone?.reason]).toEqual([
        'illegal_argument_exception',
        'To expand [CLOSE] wildcard, please set forbid_closed_indices to `false`',
      ])
      expect(await store().resolve('c*')).toEqual(['c2'])
      expect(await store().resolve('c*', { expand_wildcards: 'closed' })).toEqual(['c1'])
      expect(await store().resolve('c*', { expand_wildcards: 'open,closed' })).toEqual(['c1', 'c2'])
      expect(Object.keys(await store().getMapping({ index: 'c*', expand_wildcards: 'all' }))).toEqual(['c1', 'c2'])
      expect(Object.keys(await store().getAlias({ name: 'ca' }))).toEqual(['c1'])
      expect((await store().stats({ index: 'c1,c2' })).map((x) => [x.index, x.status])).toEqual([
        ['c1', 'close'],
        ['c2', 'open'],
      ])
      expect(await store().openIndex({ index: 'c*' })).toEqual({ acknowledged: true, shards_acknowledged: true })
      const back = await store().get({ index: 'ca', id: '1' })
      expect(back.found && back._source).toEqual({ v: 1 })
      await store().index({ index: 'c1', id: '2', body: { v: 3 }, refresh: true })
      expect(total(await store().search({ index: 'c*' }))).toBe(3)
      // A closed index can be deleted like any other.
      await store().closeIndex({ index: 'c2' })
      await store().deleteIndex({ index: 'c*', expand_wildcards: 'open,closed' })
      expect(await store().resolve('c*', { expand_wildcards: 'all' })).toEqual([])
    })

    test('geo aggregations answer OpenSearch 3.4’s numbers: points as doc values quantize them, a geohash is its cell’s corner', async () => {
      await store().createIndex({ index: 'geo', body: { mappings: { properties: { loc: { type: 'geo_point' } } } } })
      const points = [
        { lat: 40.1, lon: -70.2 },
        '52.37,4.89',
        [151.21, -33.87],
        { lat: -33.86, lon: 151.2 },
        'u173zq',
        [
          [2.35, 48.85],
          [13.4, 52.52],
        ],
      ]
      await store().bulk({ index: 'geo', body: points.flatMap((loc) => [{ index: {} }, { loc }]), refresh: true })
      const centroid = { geo_centroid: { field: 'loc' } }
      const r = await store().search({
        index: 'geo',
        body: {
          size: 0,
          aggs: {
            b: { geo_bounds: { field: 'loc' } },
            c: centroid,
            t: { geotile_grid: { field: 'loc', precision: 3 }, aggs: { c: centroid } },
            h: { geohash_grid: { field: 'loc', precision: 2, size: 3 } },
            d: { geo_distance: { field: 'loc', origin: '52.37,4.89', unit: 'km', ranges: [{ to: 1000 }, { from: 1000 }] } },
          },
        },
      })
      expect(r.aggregations).toEqual({
        b: {
          bounds: {
            top_left: { lat: 52.51999998930842, lon: -70.20000002346933 },
            bottom_right: { lat: -33.87000001966953, lon: 151.20999991893768 },
          },
        },
        c: { location: { lat: 25.49740371826504, lon: 36.819845118692946 }, count: 7 },
        t: {
          buckets: [
            { key: '3/4/2', doc_count: 3, c: { location: { lat: 51.52795652858913, lon: 6.382228990551084 }, count: 4 } },
            { key: '3/7/4', doc_count: 2, c: { location: { lat: -33.86500002583489, lon: 151.2049999460578 }, count: 2 } },
            { key: '3/2/3', doc_count: 1, c: { location: { lat: 40.099999965168536, lon: -70.20000002346933 }, count: 1 } },
          ],
        },
        h: {
          buckets: [
            { key: 'u1', doc_count: 2 },
            { key: 'r3', doc_count: 2 },
            { key: 'u3', doc_count: 1 },
          ],
        },
        d: {
          buckets: [
            { key: '*-1000.0', from: 0, to: 1000, doc_count: 3 },
            { key: '1000.0-*', from: 1000, doc_count: 3 },
          ],
        },
      })
    })

    test('across the dateline: plane distances do not wrap in geo_distance aggregations, and the geo_distance query measures arcs whatever its type', async () => {
      await store().createIndex({ index: 'dateline', body: { mappings: { properties: { loc: { type: 'geo_point' } } } } })
      await store().index({ index: 'dateline', id: '1', body: { loc: { lat: 0, lon: -179.9 } }, refresh: true })
      const ring = (type: string) => ({
        geo_distance: { field: 'loc', origin: '0,179.9', unit: 'km', distance_type: type, ranges: [{ to: 100 }, { from: 100 }] },
      })
      const r = await store().search({ index: 'dateline', body: { size: 0, aggs: { plane: ring('plane'), arc: ring('arc') } } })
      const counts = (a: unknown) => (a as { buckets: Array<{ doc_count: number }> }).buckets.map((b) => b.doc_count)
      expect([counts(r.aggregations!.plane), counts(r.aggregations!.arc)]).toEqual([
        [0, 1],
        [1, 0],
      ])
      const near = { geo_distance: { distance: '50km', distance_type: 'plane', loc: { lat: 0, lon: 179.9 } } }
      expect((await store().count({ index: 'dateline', body: { query: near } })).count).toBe(1)
    })

    test('the _geo_distance sort orders by OpenSearch’s haversine from the points doc values hold; no point is infinitely far', async () => {
      await store().createIndex({ index: 'geosort', body: { mappings: { properties: { loc: { type: 'geo_point' } } } } })
      const points: Record<string, unknown> = {
        near: '52.37,4.89',
        paris: [2.35, 48.85],
        nyc: { lat: 40.7128, lon: -74.006 },
        sydney: [151.21, -33.87],
      }
      await store().bulk({
        index: 'geosort',
        body: [
          ...Object.entries(points).flatMap(([id, loc]) => [{ index: { _id: id } }, { loc }]),
          { index: { _id: 'none' } },
          { other: 1 },
        ],
        refresh: true,
      })
      const sorted = async (sort: unknown) => {
        const r = await store().search({ index: 'geosort', body: { _source: false, sort: [sort] as never } })
        return r.hits.hits.map((h) => [h._id, h.sort?.[0]])
      }
      const asc = await sorted({ _geo_distance: { loc: { lat: 52.37, lon: 4.89 }, unit: 'km' } })
      expect(asc.map(([id]) => id)).toEqual(['near', 'paris', 'nyc', 'sydney', 'none'])
      // OpenSearch 3.4's values (the point 4.6 mm from the origin is 0 in its haversine); to 1e-12, as its cosines come from a table.
      const want = [0, 430.424447599713, 5862.234777837517, 16643.82457271818]
      asc.slice(0, 4).forEach(([, v], i) => expect(Math.abs((v as number) - want[i])).toBeLessThanOrEqual(1e-12 * want[i]))
      const desc = await sorted({ _geo_distance: { loc: '52.37,4.89', order: 'desc' } })
      expect(desc.map(([id]) => id)).toEqual(['none', 'sydney', 'nyc', 'paris', 'near'])
    })

    test('an unknown name starting with _ is an invalid index name, not a missing index', async () => {
      const e = await error(store().getIndex({ index: '_foo' }))
      expect(e?.type).toBe('invalid_index_name_exception')
      expect(e?.status).toBe(400)
      // ignore_unavailable skips missing indices, not invalid names.
      expect((await error(store().getIndex({ index: '_foo', ignore_unavailable: true })))?.type).toBe('invalid_index_name_exception')
    })

    test('stats report the size of the stored documents, kept current by writes', async () => {
      // OpenSearch counts its files on disk (compressed, with per-segment overhead, shrinking only as
      // segments merge), the embedded store the documents' bytes: the contract asks only that the size
      // is a count of bytes that grows with the documents a refresh makes searchable.
      const size = async () => (await store().stats({ index: 'sz' }))[0].store_size_in_bytes
      const noise = (n: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(n))).toString('base64')
      // OpenSearch caches an index's store size for index.store.stats_refresh_interval (10s): 0 reads it afresh.
      await store().createIndex({ index: 'sz', body: { settings: { number_of_shards: 1, 'index.store.stats_refresh_interval': '0ms' } } })
      const empty = await size()
      expect(empty).toBeGreaterThanOrEqual(0)
      await store().index({ index: 'sz', id: '1', body: { text: noise(3000) }, refresh: true })
      const one = await size()
      expect(one).toBeGreaterThan(empty + 1000)
      await store().index({ index: 'sz', id: '2', body: { text: noise(3000) }, refresh: true })
      expect(await size()).toBeGreaterThan(one + 1000)
    })

    oneNode('stats count the flushes of each index', async () => {
      await store().createIndex({ index: 'f1' })
      await store().createIndex({ index: 'f2' })
      const flushes = async () => (await store().stats({ index: 'f1,f2' })).map((s) => s.flush_total)
      expect(await flushes()).toEqual([0, 0])
      await store().flush({ index: 'f1' })
      await store().flush({ index: 'f*' })
      expect(await flushes()).toEqual([2, 1])
    })

    test('stats count the writes, gets and searches done to an index (OpenSearch counts per primary)', async () => {
      await store().createIndex({ index: 'act', body: { settings: { number_of_shards: 1 } } })
      await store().index({ index: 'act', id: '1', body: { v: 1 } })
      await store().index({ index: 'act', id: '2', body: { v: 2 }, refresh: true })
      await store().delete({ index: 'act', id: '2' })
      await store().get({ index: 'act', id: '1' })
      await store().get({ index: 'act', id: 'none' })
      await store().search({ index: 'act', body: { query: { match_all: {} } } })
      const a = (await store().stats({ index: 'act' }))[0].activity!
      expect(a.indexing).toMatchObject({ index_total: 2, delete_total: 1, noop_update_total: 0 })
      expect(a.get).toMatchObject({ total: 2, exists_total: 1, missing_total: 1 })
      expect(a.search.query_total).toBe(1)
      expect(a.translog.operations).toBe(3)
    })

    test('top_hits shows each hit’s _version, _seq_no and _primary_term when asked', async () => {
      await store().index({ index: 'th', id: '1', body: { g: 'a', n: 1 } })
      await store().index({ index: 'th', id: '1', body: { g: 'a', n: 2 } })
      await store().index({ index: 'th', id: '2', body: { g: 'a', n: 3 }, refresh: true })
      const top = (params: Record<string, unknown>) =>
        store()
          .search({ index: 'th', body: { size: 0, aggs: { t: { top_hits: { sort: [{ n: 'asc' }], ...params } } } } })
          .then((r) => (r.aggregations!.t as { hits: { hits: Array<Record<string, unknown>> } }).hits.hits)
      const pick = (h: Record<string, unknown>) => [h._id, h._version, h._seq_no, h._primary_term]
      expect((await top({ seq_no_primary_term: true, version: true })).map(pick)).toEqual([
        ['1', 2, 1, 1],
        ['2', 1, 2, 1],
      ])
      expect((await top({})).map(pick)).toEqual([
        ['1', undefined, undefined, undefined],
        ['2', undefined, undefined, undefined],
      ])
    })

    describe('a mapping with `_source: {enabled: false}` (as OpenSearch 3.4 answered each request)', () => {
      const setUp = async () => {
        await store().createIndex({
          index: 'nosrc',
          body: { mappings: { _source: { enabled: false }, properties: { a: { type: 'keyword' }, n: { type: 'long' } } } },
        })
        await store().index({ index: 'nosrc', id: '1', body: { a: 'x', n: 5 }, refresh: true })
      }

      test('hits, top_hits and get show no source; queries, sorts and aggregations still read the fields', async () => {
        await setUp()
        const r = await store().search({
          index: 'nosrc',
          body: { query: { term: { a: 'x' } }, sort: [{ n: 'desc' }], aggs: { a: { terms: { field: 'a' } }, top: { top_hits: {} } } },
        })
        expect(r.hits.hits.map((h) => [h._id, h._source, h.sort])).toEqual([['1', undefined, [5]]])
        expect((r.aggregations!.a as { buckets: unknown[] }).buckets).toEqual([{ key: 'x', doc_count: 1 }])
        const top = (r.aggregations!.top as { hits: { hits: Array<Record<string, unknown>> } }).hits.hits
        expect(top.map((h) => [h._id, h._source])).toEqual([['1', undefined]])
        expect((await store().search({ index: 'nosrc', body: { _source: true } })).hits.hits[0]._source).toBeUndefined()
        // The index API's flag for what it reads from doc values: never a URL parameter of the platform's.
        expect((await store().search({ index: 'nosrc', read_disabled_source: true, body: {} })).hits.hits.map((h) => h._id)).toEqual(['1'])
        const got = await store().get({ index: 'nosrc', id: '1', _source_includes: ['a'] })
        expect([got.found, got.found ? got._source : 'missing']).toEqual([true, undefined])
      })

      test('a source filter in a search or top_hits is refused; an update of a stored document misses its source', async () => {
        await setUp()
        for (const body of [{ _source: ['a'] }, { size: 0, aggs: { top: { top_hits: { _source: { excludes: ['n'] } } } } }]) {
          const e = await error(store().search({ index: 'nosrc', body }))
          // Each shard refuses it (illegal_argument_exception under search_phase_execution_exception).
          expect(e?.status).toBe(400)
          expect(e?.reason).toBe('unable to fetch fields from _source field: _source is disabled in the mappings for index [nosrc]')
        }
        const e = await error(store().update({ index: 'nosrc', id: '1', body: { doc: { a: 'y' } } }))
        expect([e?.status, e?.type, e?.reason]).toEqual([400, 'document_source_missing_exception', '[1]: document source missing'])
        // A missing document is still missed, and an upsert of one is written.
        expect((await error(store().update({ index: 'nosrc', id: '2', body: { doc: { a: 'y' } } })))?.status).toBe(404)
        expect((await store().update({ index: 'nosrc', id: '2', body: { doc: { a: 'y' }, doc_as_upsert: true } })).result).toBe('created')
      })
    })
  })
}

// Field names that are members of Object.prototype are data, in mappings, writes and partial updates.
import { expect, test } from 'bun:test'
import { openEmbeddedStore } from '../../src/store/embedded'

test('__proto__ and constructor as field names neither pollute prototypes nor get lost', async () => {
  const s = openEmbeddedStore(':memory:')
  try {
    await s.createIndex({ index: 'p' })
    await s.putMapping({
      index: 'p',
      body: JSON.parse('{"properties": {"constructor": {"type": "keyword"}, "__proto__": {"type": "keyword"}}}'),
    })
    await s.index({ index: 'p', id: '1', body: JSON.parse('{"constructor": "c", "x": 1}'), refresh: true })
    // `__proto__` is mapped keyword above: an object there is refused like any keyword field's.
    await expect(s.update({ index: 'p', id: '1', body: { doc: JSON.parse('{"__proto__": {"polluted": true}}') } })).rejects.toThrow(
      'failed to parse field [__proto__] of type [keyword]',
    )
    await s.update({
      index: 'p',
      id: '1',
      body: { doc: JSON.parse('{"__proto__": "p", "hasOwnProperty": 5, "nested": {"__proto__": {"polluted": true}}}') },
      refresh: true,
    })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(({} as Record<string, unknown>).type).toBeUndefined()
    expect((Object as unknown as Record<string, unknown>).properties).toBeUndefined()
    const got = await s.get({ index: 'p', id: '1' })
    expect(got.found).toBe(true)
    const source = got.found ? (got._source as Record<string, unknown>) : {}
    expect(Object.hasOwn(source, '__proto__')).toBe(true)
    expect(Object.getOwnPropertyDescriptor(source, '__proto__')?.value).toBe('p')
    expect(Object.hasOwn((source as { nested: object }).nested, '__proto__')).toBe(true)
    expect(source.hasOwnProperty as unknown).toBe(5)
    expect(source.constructor as unknown).toBe('c')
    const hits = await s.search({ index: 'p', body: { query: { term: { constructor: 'c' } } } })
    expect(hits.hits.total).toEqual({ value: 1, relation: 'eq' })
  } finally {
    await s.close()
  }
})

// The terms-lookup mechanics the read gate builds on: which lookups a query holds, resolving
// them through a caller-supplied fetch, and spotting document reads anywhere in a search body.
import { describe, expect, test } from 'bun:test'
import { documentFetchingClause, resolveTermsLookups, termsLookups } from '../../../src/store/query/terms'

const lk = (index: string, id: string, path = 'v') => ({ index, id, path })

describe('terms lookups', () => {
  test('found at query positions only, in order; a malformed lookup element is a parsing error', () => {
    const q = {
      bool: {
        must: [{ terms: { a: lk('i', '1') } }],
        should: [{ constant_score: { filter: { terms: { b: lk('j', 2 as unknown as string) } } } }],
        filter: { term: { c: lk('x', 'not-a-lookup') } },
      },
    }
    expect(termsLookups(q)).toEqual([lk('i', '1'), lk('j', '2')])
    expect(() => termsLookups({ terms: { a: { index: 'i' } } })).toThrow('[terms] query lookup element requires')
  })

  test('a query nested deeper than the parser allows is a 400 before the walk recurses', () => {
    let q: unknown = { terms: { a: lk('i', '1') } }
    for (let i = 0; i < 20_000; i++) q = { bool: { must: [q] } }
    expect(() => termsLookups(q)).toThrow(expect.objectContaining({ status: 400, type: 'x_content_parse_exception' }))
  })

  test('resolved through fetch, each document once; a missing document gives no terms', async () => {
    const calls: string[] = []
    const fetch = async (index: string, id: string) => {
      calls.push(`${index}/${id}`)
      return id === 'gone' ? undefined : { v: [`${index}-${id}`, 'z'] }
    }
    const q = { bool: { should: [{ terms: { a: lk('i', '1') } }, { terms: { b: lk('i', '1') } }, { terms: { c: lk('i', 'gone') } }] } }
    expect(await resolveTermsLookups(q, fetch)).toEqual({
      bool: { should: [{ terms: { a: ['i-1', 'z'] } }, { terms: { b: ['i-1', 'z'] } }, { terms: { c: [] } }] },
    })
    expect(calls).toEqual(['i/1', 'i/gone'])
    const plain = { terms: { a: ['x'] } }
    expect(await resolveTermsLookups(plain, fetch)).toBe(plain)
  })

  test('document-fetching clauses are spotted at any depth; aggregations with object options are not', () => {
    expect(documentFetchingClause({ query: { function_score: { query: { terms: { a: lk('i', '1') } } } } })).toBe('terms lookup')
    expect(documentFetchingClause({ aggs: { f: { filter: { terms: { a: lk('i', '1') } } } } })).toBe('terms lookup')
    expect(documentFetchingClause({ query: { more_like_this: { like: [{ _index: 'i', _id: '1' }] } } })).toBe('more_like_this')
    expect(documentFetchingClause({ query: { geo_shape: { f: { indexed_shape: { index: 'i', id: '1' } } } } })).toBe('indexed_shape')
    expect(documentFetchingClause({ query: { percolate: { field: 'q', index: 'i', id: '1' } } })).toBe('percolate')
    expect(
      documentFetchingClause({
        query: { terms: { a: ['x', 'y'] } },
        aggs: { t: { terms: { field: 'a', include: { partition: 0, num_partitions: 2 }, order: { _count: 'desc' } } } },
      }),
    ).toBeUndefined()
  })
})

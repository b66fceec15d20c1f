// Pure parts of the index API: bulk NDJSON parsing and alias name expressions.
import { describe, expect, test } from 'bun:test'
import { aliasNameFilter, missingAliases } from '../../src/indexer/aliases'
import { parseBulk } from '../../src/indexer/bulk'

describe('bulk NDJSON', () => {
  test('actions, sources, default index and op_type create', () => {
    const items = parseBulk(
      '{"index":{"_id":"1"}}\n{"a":1}\n{"delete":{"_index":"x","_id":"2"}}\n{"index":{"op_type":"create"}}\n{"b":2}\n',
      'dflt',
    )
    expect(items.map((i) => [i.op, i.index])).toEqual([
      ['index', 'dflt'],
      ['delete', 'x'],
      ['create', 'dflt'],
    ])
    expect(items[0].source).toEqual({ a: 1 })
    expect(items[1].source).toBeUndefined()
  })

  test('structural errors name the line, as OpenSearch does', () => {
    expect(() => parseBulk('{"index":{}}\n{}\n{}\n', 'i')).toThrow(
      'Malformed action/metadata line [3], expected FIELD_NAME but found [END_OBJECT]',
    )
    expect(() => parseBulk('{"upsert":{}}\n', 'i')).toThrow('expected field [create], [delete], [index] or [update] but found [upsert]')
    expect(() => parseBulk('{"index":{"_index":"a"}}\n{"a":1}', undefined)).toThrow('terminated by a newline')
    expect(() => parseBulk('{"index":{}}\n{"a":1}\n', undefined)).toThrow('index is missing')
    expect(() => parseBulk('{"index":{"_index":"a","colour":1}}\n{}\n', undefined)).toThrow('unknown parameter [colour]')
    expect(() => parseBulk('\n', 'i')).toThrow('no requests added')
  })
})

describe('alias name expressions', () => {
  test('exclusions apply only after the first wildcard', () => {
    const keep = aliasNameFilter(['-a1', 'a*', '-a2'])
    expect(keep('a1')).toBe(true)
    expect(keep('a2')).toBe(false)
    expect(keep('a3')).toBe(true)
    expect(keep('b')).toBe(false)
    expect(aliasNameFilter(['_all'])('anything')).toBe(true)
    expect(aliasNameFilter(undefined)('anything')).toBe(true)
  })

  test('explicit names that matched nothing are missing, excluded ones are not', () => {
    expect(missingAliases(['-test_alias_1', 'test_alias*', '-test_alias_2'], new Set(['test_alias_1']))).toEqual(['-test_alias_1'])
    expect(missingAliases(['-test_alias_1', '-non-existing', 'test_alias*', '-test'], new Set(['test_alias_1', 'test_alias_2']))).toEqual([
      '-non-existing',
      '-test_alias_1',
    ])
    expect(missingAliases(['x', 'y*'], new Set(['y1']))).toEqual(['x'])
    expect(missingAliases(['y*', '-y1'], new Set())).toEqual([])
  })
})

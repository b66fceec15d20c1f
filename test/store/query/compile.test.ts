import { describe, expect, test } from 'bun:test'
import { ParsingError } from '../../../src/store/errors'
import { compileNamedQuery, compileQuery, DocView, luceneRegExp, type FieldTypes } from '../../../src/store/query'

const hit = (q: unknown, doc: Record<string, unknown>, types?: FieldTypes, now?: number) => compileQuery(q, types, { now })(doc)

describe('paths', () => {
  test('nested objects, dotted keys and arrays of objects resolve alike', () => {
    const q = { term: { 'a.b.c': 'x' } }
    expect(hit(q, { a: { b: { c: 'x' } } })).toBe(true)
    expect(hit(q, { 'a.b': { c: 'x' } })).toBe(true)
    expect(hit(q, { 'a.b.c': 'x' })).toBe(true)
    expect(hit(q, { a: [{ b: { c: 'y' } }, { b: [{ c: 'x' }] }] })).toBe(true)
    expect(hit(q, { a: { b: { c: 'y' } } })).toBe(false)
  })
  test('inherited properties are not fields', () => {
    expect(hit({ exists: { field: 'constructor' } }, {})).toBe(false)
  })
})

describe('term / terms', () => {
  test('keyword whole-value equality, arrays match any element', () => {
    expect(hit({ term: { user: 'kimchy' } }, { user: 'kimchy' })).toBe(true)
    expect(hit({ term: { user: 'kim' } }, { user: 'kimchy' })).toBe(false)
    expect(hit({ term: { user: 'b' } }, { user: ['a', 'b'] })).toBe(true)
    expect(hit({ term: { user: { value: 'KIMCHY' } } }, { user: 'kimchy' })).toBe(false)
  })
  test('case_insensitive uses Unicode case folding', () => {
    const q = { term: { user: { value: 'ΣΊΣΥΦΟΣ', case_insensitive: true } } }
    expect(hit(q, { user: 'σίσυφος' })).toBe(true)
    expect(hit({ term: { user: { value: 'STRASSE', case_insensitive: true } } }, { user: 'straße' })).toBe(false)
    expect(hit({ term: { user: { value: 'ẞ', case_insensitive: true } } }, { user: 'ß' })).toBe(true)
  })
  test('numbers vs strings without a mapping follow dynamic typing', () => {
    expect(hit({ term: { id: 4688 } }, { id: '4688' })).toBe(true)
    expect(hit({ term: { id: '4688' } }, { id: 4688 })).toBe(true)
    expect(hit({ term: { id: 4688 } }, { id: 4688.5 })).toBe(false)
    expect(hit({ term: { ok: true } }, { ok: true })).toBe(true)
  })
  test('typed fields: long, date, boolean, ip with CIDR, text tokens', () => {
    const types: FieldTypes = { n: 'long', d: 'date', b: 'boolean', ip: 'ip', msg: 'text' }
    expect(hit({ term: { n: '7' } }, { n: 7 }, types)).toBe(true)
    expect(hit({ term: { d: '2024-01-02T00:00:00Z' } }, { d: '2024-01-02' }, types)).toBe(true)
    expect(hit({ term: { b: 'true' } }, { b: true }, types)).toBe(true)
    expect(hit({ term: { ip: '10.0.0.0/8' } }, { ip: '10.1.2.3' }, types)).toBe(true)
    expect(hit({ term: { ip: '10.0.0.0/8' } }, { ip: '11.1.2.3' }, types)).toBe(false)
    expect(hit({ term: { ip: '2001:db8::/32' } }, { ip: '2001:db8::1' }, types)).toBe(true)
    expect(hit({ term: { msg: 'quick' } }, { msg: 'The Quick fox' }, types)).toBe(true)
    expect(hit({ term: { msg: 'Quick' } }, { msg: 'The Quick fox' }, types)).toBe(false)
  })
  test('rule evaluation (no request limits) reads each value of a list on its own: one the field cannot read matches nothing', () => {
    const types: FieldTypes = { n: 'long', b: 'boolean', ip: 'ip' }
    expect(hit({ terms: { n: ['abc', 5] } }, { n: 5 }, types)).toBe(true)
    expect(hit({ terms: { n: ['abc', 5] } }, { n: 6 }, types)).toBe(false)
    expect(hit({ term: { n: 'abc' } }, { n: 5 }, types)).toBe(false)
    expect(hit({ terms: { b: ['maybe', true] } }, { b: true }, types)).toBe(true)
    expect(hit({ terms: { ip: ['x', '10.0.0.1'] } }, { ip: '10.0.0.1' }, types)).toBe(true)
  })
  test('unmapped field in a mapped index matches nothing; .keyword multi-field honours ignore_above', () => {
    const types: FieldTypes = { msg: 'text', 'msg.keyword': { type: 'keyword', path: 'msg', ignore_above: 5 } }
    expect(hit({ term: { other: 'x' } }, { other: 'x' }, types)).toBe(false)
    expect(hit({ term: { 'msg.keyword': 'short' } }, { msg: 'short' }, types)).toBe(true)
    expect(hit({ term: { 'msg.keyword': 'longer' } }, { msg: 'longer' }, types)).toBe(false)
    expect(hit({ exists: { field: 'msg.keyword' } }, { msg: 'longer' }, types)).toBe(false)
  })
  test('.keyword falls back to the parent without a mapping', () => {
    expect(hit({ term: { 'a.keyword': 'X y' } }, { a: 'X y' })).toBe(true)
  })
  test('terms and ids', () => {
    expect(hit({ terms: { tag: ['a', 'z'] } }, { tag: ['x', 'z'] })).toBe(true)
    expect(hit({ terms: { tag: ['a'] } }, { tag: 'b' })).toBe(false)
    const byId = compileQuery({ ids: { values: ['1', '3'] } })
    expect(byId(new DocView({}, '3'))).toBe(true)
    expect(byId(new DocView({}, '2'))).toBe(false)
    expect(compileQuery({ term: { _id: '2' } })(new DocView({}, '2'))).toBe(true)
  })
})

describe('wildcard / prefix / regexp', () => {
  test('wildcard whole value: * spans newlines, ? one code point, \\ escapes', () => {
    expect(hit({ wildcard: { f: '*cmd*' } }, { f: 'a\ncmd\nb' })).toBe(true)
    expect(hit({ wildcard: { f: { value: 'a?c' } } }, { f: 'a😀c' })).toBe(true)
    expect(hit({ wildcard: { f: { value: 'a?c' } } }, { f: 'abbc' })).toBe(false)
    expect(hit({ wildcard: { f: { value: 'a\\*c' } } }, { f: 'a*c' })).toBe(true)
    expect(hit({ wildcard: { f: { value: 'a\\*c' } } }, { f: 'abc' })).toBe(false)
    expect(hit({ wildcard: { f: { value: 'x*y*z' } } }, { f: 'xyz' })).toBe(true)
    expect(hit({ wildcard: { f: { value: 'ab*ba' } } }, { f: 'aba' })).toBe(false)
    expect(hit({ wildcard: { f: { value: '*POWERSHELL.EXE', case_insensitive: true } } }, { f: 'C:\\x\\powershell.exe' })).toBe(true)
    expect(hit({ wildcard: { f: { value: '*POWERSHELL.EXE' } } }, { f: 'C:\\x\\powershell.exe' })).toBe(false)
  })
  test('prefix', () => {
    expect(hit({ prefix: { f: 'ab' } }, { f: 'abc' })).toBe(true)
    expect(hit({ prefix: { f: { value: 'AB', case_insensitive: true } } }, { f: 'abc' })).toBe(true)
    expect(hit({ prefix: { f: 'b' } }, { f: 'abc' })).toBe(false)
  })
  test('regexp is a whole-value Lucene regex; . matches newline; ^ is literal', () => {
    expect(hit({ regexp: { f: 'ab.*' } }, { f: 'ab\ncd' })).toBe(true)
    expect(hit({ regexp: { f: 'b.*' } }, { f: 'abc' })).toBe(false)
    expect(hit({ regexp: { f: { value: 'A[bc]+', case_insensitive: true } } }, { f: 'abcb' })).toBe(true)
    expect(hit({ regexp: { f: '\\d+' } }, { f: '123' })).toBe(true)
    expect(hit({ regexp: { f: 'a@' } }, { f: 'axyz' })).toBe(true)
    expect(hit({ regexp: { f: { value: 'a@', flags: 'NONE' } } }, { f: 'a@' })).toBe(true)
    expect(hit({ regexp: { f: { value: 'a@', flags: 'NONE' } } }, { f: 'axyz' })).toBe(false)
    expect(hit({ regexp: { f: 'foo<1-100>' } }, { f: 'foo042' })).toBe(true)
    expect(hit({ regexp: { f: 'foo<1-100>' } }, { f: 'foo101' })).toBe(false)
    expect(hit({ regexp: { f: 'a.*&.*z' } }, { f: 'abz' })).toBe(true)
    expect(hit({ regexp: { f: '~(abc)' } }, { f: 'abd' })).toBe(true)
    expect(hit({ regexp: { f: '~(abc)' } }, { f: 'abc' })).toBe(false)
    expect(luceneRegExp('"a.b"').test('a.b')).toBe(true)
    expect(luceneRegExp('"a.b"').test('axb')).toBe(false)
    expect(luceneRegExp('^a$').test('^a$')).toBe(true)
  })
  test('_pcre runs the JS pattern with substring semantics', () => {
    const q = (flags = '') => ({ regexp: { f: { value: '.*evil.*', _pcre: { pattern: 'e[v]il\\d', flags } } } })
    expect(hit(q(), { f: 'so evil1 here' })).toBe(true)
    expect(hit(q(), { f: 'so EVIL1 here' })).toBe(false)
    expect(hit(q('i'), { f: 'so EVIL1 here' })).toBe(true)
    expect(hit({ regexp: { f: { value: 'x', _pcre: { pattern: '^a$', flags: 'm' } } } }, { f: 'b\na\nc' })).toBe(true)
  })
})

describe('range', () => {
  const now = Date.UTC(2024, 5, 15, 12, 30)
  test('numbers, strings and date math with rounding', () => {
    expect(hit({ range: { n: { gte: 10, lt: 20 } } }, { n: 10 })).toBe(true)
    expect(hit({ range: { n: { gt: 10 } } }, { n: 10 })).toBe(false)
    expect(hit({ range: { n: { gt: 5 } } }, { n: '7' })).toBe(true)
    expect(hit({ range: { s: { gte: 'b', lt: 'c' } } }, { s: 'bz' }, { s: 'keyword' })).toBe(true)
    const types: FieldTypes = { t: 'date' }
    expect(hit({ range: { t: { gte: 'now-1d' } } }, { t: '2024-06-14T13:00:00Z' }, types, now)).toBe(true)
    expect(hit({ range: { t: { gte: 'now-1d' } } }, { t: '2024-06-14T12:00:00Z' }, types, now)).toBe(false)
    expect(hit({ range: { t: { gte: 'now-1d/d' } } }, { t: '2024-06-14T00:00:00Z' }, types, now)).toBe(true)
    expect(hit({ range: { t: { lte: 'now/d' } } }, { t: '2024-06-15T23:59:59Z' }, types, now)).toBe(true)
    expect(hit({ range: { t: { lt: 'now/d' } } }, { t: '2024-06-15T00:00:01Z' }, types, now)).toBe(false)
    expect(hit({ range: { t: { gt: '2024-01-01||+1M' } } }, { t: Date.UTC(2024, 1, 2) }, types)).toBe(true)
    expect(hit({ range: { t: { gte: '2024-01-01T00:00:00' } } }, { t: '2024-01-01T00:00:00+01:00' }, types)).toBe(false)
  })
  test('from/to with include flags', () => {
    expect(hit({ range: { n: { from: 1, to: 3, include_upper: false } } }, { n: 3 })).toBe(false)
    expect(hit({ range: { n: { from: 1, to: 3 } } }, { n: 3 })).toBe(true)
  })
})

describe('exists / bool / match', () => {
  test('exists: null and [] are absent, objects exist through their leaves', () => {
    expect(hit({ exists: { field: 'a' } }, { a: null })).toBe(false)
    expect(hit({ exists: { field: 'a' } }, { a: [] })).toBe(false)
    expect(hit({ exists: { field: 'a' } }, { a: [null, 1] })).toBe(true)
    expect(hit({ exists: { field: 'a' } }, { a: { b: null } })).toBe(false)
    expect(hit({ exists: { field: 'a' } }, { a: { b: 0 } })).toBe(true)
    expect(hit({ exists: { field: 'a' } }, { a: '' })).toBe(true)
  })
  test('missing field -> leaf false -> must_not true', () => {
    expect(hit({ bool: { must_not: [{ term: { x: 'y' } }] } }, {})).toBe(true)
    expect(hit({ bool: { must_not: { term: { x: 'y' } } } }, { x: 'y' })).toBe(false)
  })
  test('bool combinations and minimum_should_match', () => {
    const doc = { a: 1, b: 2, c: 3 }
    expect(hit({ bool: {} }, doc)).toBe(true)
    expect(hit({ bool: { should: [{ term: { a: 9 } }, { term: { b: 2 } }] } }, doc)).toBe(true)
    expect(hit({ bool: { filter: [{ term: { a: 1 } }], should: [{ term: { a: 9 } }] } }, doc)).toBe(true)
    expect(hit({ bool: { filter: [{ term: { a: 1 } }], should: [{ term: { a: 9 } }], minimum_should_match: 1 } }, doc)).toBe(false)
    const three = [{ term: { a: 1 } }, { term: { b: 2 } }, { term: { c: 9 } }]
    expect(hit({ bool: { should: three, minimum_should_match: 2 } }, doc)).toBe(true)
    expect(hit({ bool: { should: three, minimum_should_match: 3 } }, doc)).toBe(false)
    expect(hit({ bool: { should: three, minimum_should_match: '67%' } }, doc)).toBe(true)
    expect(hit({ bool: { should: three, minimum_should_match: -1 } }, doc)).toBe(true)
    expect(hit({ bool: { must: [{ match_all: {} }], must_not: [{ match_none: {} }] } }, doc)).toBe(true)
  })
  test('match analyses text; operator and; keyword fields compare whole values', () => {
    expect(hit({ match: { m: 'QUICK dog' } }, { m: 'the quick fox' })).toBe(true)
    expect(hit({ match: { m: { query: 'quick dog', operator: 'and' } } }, { m: 'the quick fox' })).toBe(false)
    expect(hit({ match: { m: { query: 'quick fox', operator: 'and' } } }, { m: 'The fox, quick!' })).toBe(true)
    expect(hit({ match: { k: 'a b' } }, { k: 'a b c' }, { k: 'keyword' })).toBe(false)
    expect(hit({ match: { k: 'a b' } }, { k: 'a b' }, { k: 'keyword' })).toBe(true)
    expect(hit({ match_phrase: { m: 'quick fox' } }, { m: 'the quick fox' })).toBe(true)
    expect(hit({ match_phrase: { m: 'fox quick' } }, { m: 'the quick fox' })).toBe(false)
  })
  test('bad queries throw ParsingError', () => {
    expect(() => compileQuery({ nope: {} })).toThrow(ParsingError)
    expect(() => compileQuery({ term: { a: 1, b: 2 } })).toThrow(ParsingError)
    expect(() => compileQuery({ term: {}, match_all: {} })).toThrow(ParsingError)
  })
})

describe('named queries', () => {
  test('reports every matching _name, null when the query does not match', () => {
    const q = {
      bool: {
        should: [
          { bool: { _name: 'sel1', filter: [{ term: { a: 1 } }] } },
          { term: { b: { value: 2, _name: 'sel2' } } },
          { wildcard: { c: { value: 'x*', _name: 'sel3' } } },
        ],
      },
    }
    const named = compileNamedQuery(q)
    expect(named({ a: 1, b: 2, c: 'y' })).toEqual(['sel1', 'sel2'])
    expect(named({ c: 'xy' })).toEqual(['sel3'])
    expect(named({ c: 'y' })).toBeNull()
    expect(compileNamedQuery({ term: { a: 1, _name: 'short' } })({ a: 1 })).toEqual(['short'])
  })
  test('a shared DocView caches across queries and still answers each correctly', () => {
    const d = new DocView({ p: 'C:\\Windows\\cmd.exe' })
    const qs = [
      compileQuery({ wildcard: { p: { value: '*\\\\CMD.EXE', case_insensitive: true } } }),
      compileQuery({ wildcard: { p: { value: '*\\\\powershell.exe', case_insensitive: true } } }),
    ]
    expect(qs.map((q) => q(d))).toEqual([true, false])
  })
})

// The conformance runner's own semantics (scripts/conformance): if these drift, the suite's
// verdicts mean nothing, so they are pinned against the Java harness's documented behaviour.
import { describe, expect, test } from 'bun:test'
import {
  assertMatch,
  isTrue,
  javaCommentsRegex,
  regexFinds,
  compileJavaCommentsRegex,
  deepEqual,
} from '../../scripts/conformance/assertions'
import { buildCall, encodePart, parseJsonStream } from '../../scripts/conformance/request'
import { skipReason, versionInRanges } from '../../scripts/conformance/skip'
import { evaluatePath, Stash } from '../../scripts/conformance/stash'
import type { ApiSpec } from '../../scripts/conformance/suite'

describe('version ranges', () => {
  test('legacy Elasticsearch versions sort before OpenSearch 1.0.0', () => {
    expect(versionInRanges(' - 7.99.99', '3.6.0')).toBe(false)
    expect(versionInRanges(' - 2.99.99', '3.6.0')).toBe(false)
    expect(versionInRanges('2.0.0 - ', '3.6.0')).toBe(true)
    expect(versionInRanges(' - 3.6.0', '3.6.0')).toBe(true)
    expect(versionInRanges('all', '3.6.0')).toBe(true)
    expect(versionInRanges('1.0.0 - 1.4.99, 3.5.0 - 3.6.1', '3.6.0')).toBe(true)
  })

  test('skip sections: version and unknown features', () => {
    expect(skipReason([{ skip: { version: ' - 3.5.99', reason: 'x' } }], '3.6.0')).toBeUndefined()
    expect(skipReason([{ skip: { version: ' - 3.6.99', reason: 'x' } }], '3.6.0')).toContain('3.6.0')
    expect(skipReason([{ skip: { features: ['headers', 'yaml'] } }], '3.6.0')).toContain('yaml')
    expect(skipReason([{ skip: { features: 'allowed_warnings' } }], '3.6.0')).toBeUndefined()
    expect(skipReason([{ do: {} }], '3.6.0')).toBeUndefined()
  })
})

describe('assertions', () => {
  test('is_true follows Java text forms', () => {
    expect(isTrue(0)).toBe(false)
    expect(isTrue('0')).toBe(false)
    expect(isTrue('FALSE')).toBe(false)
    expect(isTrue('')).toBe(false)
    expect(isTrue(undefined)).toBe(false)
    expect(isTrue(0.5)).toBe(true)
    expect(isTrue({})).toBe(true)
    expect(isTrue([])).toBe(true)
  })

  test('COMMENTS-flag regexes drop blanks and comments but keep escapes', () => {
    expect(javaCommentsRegex('^ a \\  b # note\n c$')).toBe('^a\\ bc$')
    expect(javaCommentsRegex('\\w+(,\\w+)*+')).toBe('\\w+(,\\w+)*')
    const re = compileJavaCommentsRegex('/^ green \\s+ open \\s+ $/')
    expect(regexFinds(re, 'green open \n')).toBe(true)
    expect(regexFinds(re, 'red open \n')).toBe(false)
  })

  test('numbers compare across int and double, maps ignore key order, strings are exact', () => {
    expect(deepEqual(1, 1.0)).toBe(true)
    expect(deepEqual({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).toBe(true)
    expect(deepEqual('1', 1)).toBe(false)
    expect(deepEqual([1, 2], [2, 1])).toBe(false)
    expect(() => assertMatch('x', 'abc', '/b/')).not.toThrow()
    expect(() => assertMatch('x', 'abc', '/^b/')).toThrow()
    expect(() => assertMatch('x', 2, 3)).toThrow()
  })
})

describe('stash and paths', () => {
  test('whole-string stash keeps the type; embedded ${} is textual', () => {
    const s = new Stash()
    s.set('n', 5)
    s.set('l', [1, 'a'])
    expect(s.resolve<unknown>('$n')).toBe(5)
    expect(s.resolve<unknown>({ k: '$l', t: 'id-${n}' })).toEqual({ k: [1, 'a'], t: 'id-5' })
    expect(() => s.resolve('$missing')).toThrow()
  })

  test('paths index lists, escape dots, read the stash', () => {
    const s = new Stash()
    s.set('node', 'abc')
    const body = { hits: { hits: [{ _id: '1' }] }, 'a.b': 2, nodes: { abc: { name: 'x' } } }
    expect(evaluatePath(body, 'hits.hits.0._id', s)).toBe('1')
    expect(evaluatePath(body, 'a\\.b', s)).toBe(2)
    expect(evaluatePath(body, 'nodes.$node.name', s)).toBe('x')
    expect(evaluatePath(body, 'nodes._arbitrary_key_', s)).toBe('abc')
    expect(evaluatePath(body, 'hits.nope.0', s)).toBeUndefined()
    expect(evaluatePath(body, '', s)).toBe(body)
  })
})

describe('request building', () => {
  const getAlias: ApiSpec = {
    name: 'indices.get_alias',
    paths: [
      { path: '/_alias', methods: ['GET'], parts: [] },
      { path: '/_alias/{name}', methods: ['GET'], parts: ['name'] },
      { path: '/{index}/_alias/{name}', methods: ['GET'], parts: ['index', 'name'] },
    ],
    params: new Set(['expand_wildcards']),
  }
  const bulk: ApiSpec = {
    name: 'bulk',
    paths: [{ path: '/_bulk', methods: ['POST', 'PUT'], parts: [] }],
    params: new Set(['refresh']),
    body: { required: true, serialize: 'bulk' },
  }
  const search: ApiSpec = {
    name: 'search',
    paths: [{ path: '/{index}/_search', methods: ['GET', 'POST'], parts: ['index'] }],
    params: new Set(['size']),
    body: {},
  }

  test('takes the path with the most parts and encodes parts', () => {
    const call = buildCall(getAlias, new Set(), { index: ['a', 'b*'], name: 'x/y', expand_wildcards: 'all' }, {})
    expect(call.path).toBe('/a,b*/_alias/x%2Fy')
    expect(call.query.get('expand_wildcards')).toBe('all')
    expect(encodePart('中文')).toBe('%E4%B8%AD%E6%96%87')
  })

  test('unknown parameters are runner errors; ignore is never sent', () => {
    expect(() => buildCall(getAlias, new Set(), { bogus: 1 }, {})).toThrow('bogus')
    const call = buildCall(getAlias, new Set(['pretty']), { ignore: 404, pretty: true }, {})
    expect(call.query.toString()).toBe('pretty=true')
  })

  test('bulk bodies are newline-delimited, a GET with a body becomes POST', () => {
    const call = buildCall(bulk, new Set(), { body: [{ index: { _index: 'i' } }, '{"f": 1}'], refresh: true }, {})
    expect(call.body).toBe('{"index":{"_index":"i"}}\n{"f":1}\n')
    expect(call.headers['Content-Type']).toBe('application/json')
    const s = buildCall(search, new Set(), { index: 'i', size: 0, body: { query: { match_all: {} } } }, {})
    expect(s.method).toBe('POST')
    expect(JSON.parse(s.body!)).toEqual({ query: { match_all: {} } })
    expect(() => buildCall(bulk, new Set(), {}, {})).toThrow('requires a body')
  })

  test('string bodies are streams of JSON values', () => {
    expect(parseJsonStream('{"a": "}"}\n{"b": [1, {"c": 2}]}\n')).toEqual([{ a: '}' }, { b: [1, { c: 2 }] }])
    expect(parseJsonStream('{"a": ')).toBeUndefined()
  })
})

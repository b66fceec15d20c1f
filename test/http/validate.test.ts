import { describe, expect, test } from 'bun:test'
import { Type as T } from '@sinclair/typebox'
import { ApiError, shown } from '../../src/http/errors'
import { checkBody } from '../../src/http/validate'
import { thrownBy } from '../helpers/thrown'

const failure = (f: () => unknown) => thrownBy(ApiError, f)

describe('checkBody', () => {
  const Schema = T.Object({
    size: T.Optional(T.Integer()),
    sort: T.Optional(T.Array(T.String())),
    nested: T.Optional(T.Object({ flag: T.Boolean() })),
  })

  test('a matching body comes back as it is', () => {
    const body = { size: 3, sort: ['a'], extra: { any: 1 } }
    expect(checkBody(Schema, body)).toBe(body)
  })

  test('a mistyped field is a 400 naming the field, nested ones by their dotted path', () => {
    expect(failure(() => checkBody(Schema, { size: '3' }, 'search request body'))).toMatchObject({
      status: 400,
      message: 'Invalid search request body: field [size] expected integer.',
    })
    expect(failure(() => checkBody(Schema, { sort: [1] })).message).toBe('Invalid request body: field [sort.0] expected string.')
    expect(failure(() => checkBody(Schema, { nested: {} })).message).toBe(
      'Invalid request body: field [nested.flag] expected required property.',
    )
    expect(failure(() => checkBody(Schema, [])).message).toBe('Invalid request body: expected object.')
  })

  test('objects that cannot become strings are judged, never converted', () => {
    const hostile = JSON.parse('{"size": {"toString": 1, "valueOf": 2}}')
    expect(failure(() => checkBody(Schema, hostile)).message).toBe('Invalid request body: field [size] expected integer.')
  })
})

describe('shown', () => {
  test('strings as they are, other values as JSON, long ones cut, never a throw', () => {
    expect(shown('draft')).toBe('draft')
    expect(shown({ a: [1] })).toBe('{"a":[1]}')
    expect(shown(JSON.parse('{"toString": 1}'))).toBe('{"toString":1}')
    expect(shown(undefined)).toBe('undefined')
    expect(shown(10n)).toBe('bigint')
    expect(shown('x'.repeat(500))).toBe('x'.repeat(200) + '...')
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    expect(shown(cyclic)).toBe('object')
  })
})

describe('checkBody with worded schemas', () => {
  const Worded = T.Object(
    {
      first: T.String({ message: 'first must be a string', missing: 'first is missing' }),
      second: T.Intersect(
        [T.Array(T.Unknown(), { message: 'second must be a list' }), T.Array(T.Unknown(), { maxItems: 2, message: 'second is too long' })],
        {
          message: 'second must be a list',
        },
      ),
    },
    { message: 'not an object' },
  )

  test('the first failing field in schema order answers with its own wording, absent or wrong', () => {
    // TypeBox lists missing properties before mistyped ones; the schema order decides here.
    expect(failure(() => checkBody(Worded, { first: 1 }))).toMatchObject({ status: 400, message: 'first must be a string' })
    expect(failure(() => checkBody(Worded, { second: [] })).message).toBe('first is missing')
    expect(failure(() => checkBody(Worded, { first: 'a' })).message).toBe('second must be a list')
    expect(failure(() => checkBody(Worded, { first: 'a', second: 'x' })).message).toBe('second must be a list')
    expect(failure(() => checkBody(Worded, { first: 'a', second: [1, 2, 3] })).message).toBe('second is too long')
    expect(failure(() => checkBody(Worded, 'text')).message).toBe('not an object')
    expect(checkBody(Worded, { first: 'a', second: [1] })).toEqual({ first: 'a', second: [1] })
  })
})

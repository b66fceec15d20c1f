import { describe, expect, test } from 'bun:test'
import { BodySyntaxError, decodeUtf8, MAX_JSON_DEPTH, nestsDeeper, parseJson, parseYaml, readBody } from '../../src/http/body'
import { ApiError } from '../../src/http/errors'
import { objectBody, readRouteBody } from '../../src/http/route-body'
import { rejectionOf } from '../helpers/thrown'
import { Type as T } from '@sinclair/typebox'

const Open = T.Object({}, { additionalProperties: true })

function streamed(chunks: Uint8Array[], onPull?: () => void): Request {
  let i = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      onPull?.()
      if (i < chunks.length) controller.enqueue(chunks[i++])
      else controller.close()
    },
  })
  return new Request('http://x/', { method: 'POST', body, duplex: 'half' } as RequestInit)
}

const rejection = (p: Promise<unknown>) => rejectionOf(ApiError, p)

describe('request bodies', () => {
  test('a body exactly at the limit is read; one byte over is refused', async () => {
    const ok = await readBody(new Request('http://x/', { method: 'POST', body: 'x'.repeat(100) }), { limit: 100 })
    expect(ok.byteLength).toBe(100)
    const err = await rejection(readBody(new Request('http://x/', { method: 'POST', body: 'x'.repeat(101) }), { limit: 100, status: 400 }))
    expect(err).toBeInstanceOf(ApiError)
    expect(err.status).toBe(400)
  })

  test('a declared Content-Length over the limit is refused without reading the body', async () => {
    let pulls = 0
    const req = streamed(
      Array.from({ length: 800 }, () => new Uint8Array(64 * 1024)),
      () => pulls++,
    )
    const withLength = new Request(req, { headers: { 'content-length': String(50 * 1024 * 1024) } })
    const err = await rejection(readBody(withLength, { limit: 1024, status: 413 }))
    expect(err.status).toBe(413)
    // Stream machinery may prefetch a chunk or two; reading it would take 800.
    expect(pulls).toBeLessThan(5)
  })

  test('a streamed body is abandoned as soon as it passes the limit', async () => {
    let pulls = 0
    const chunk = new Uint8Array(64 * 1024)
    const chunks = Array.from({ length: 800 }, () => chunk) // 50 MiB if read whole
    const err = await rejection(
      readBody(
        streamed(chunks, () => pulls++),
        { limit: 100 * 1024 },
      ),
    )
    expect(err.status).toBe(413)
    expect(pulls).toBeLessThan(10)
  })

  test("a declared object body: empty, malformed, non-object and mistyped bodies are 400s in the declaration's words", async () => {
    const Body = T.Object({ n: T.Integer() })
    const req = (body: string | Uint8Array) => new Request('http://x/', { method: 'POST', body })
    const words = async (body: string | Uint8Array, decl = objectBody({ limit: 100 }, Body)) => {
      const e = await rejection(readRouteBody(req(body), decl))
      return `${e.status} ${e.message}`
    }
    expect(await readRouteBody(req('{"n":1}'), objectBody({ limit: 100 }, Body))).toEqual({ n: 1 })
    for (const bad of ['', '  ', '{bad', '[1]', '3', 'null', new Uint8Array([0x7b, 0xff, 0x7d])])
      expect(await words(bad)).toBe('400 Invalid request body.')
    expect(await words('{"n":"1"}')).toBe('400 Invalid request body: field [n] expected integer.')
    expect(await words('{"n":"1"}', objectBody({ limit: 100 }, Body, { name: 'thing' }))).toBe(
      '400 Invalid thing: field [n] expected integer.',
    )
    expect(await words('', objectBody({ limit: 100 }, Body, { empty: 'empty!' }))).toBe('400 empty!')
    expect(await words('[1]', objectBody({ limit: 100 }, Body, { detail: true }))).toBe(
      '400 Invalid request body. The body must be an object.',
    )
    expect(await readRouteBody(req(''), objectBody({ limit: 100 }, Open, { optional: true }))).toEqual({})
    // A parser takes the schema check's place; a schema worded at its root hands it non-objects too.
    const Worded = T.Object({ n: T.Integer() }, { message: 'needs n' })
    expect(await words('[1]', objectBody({ limit: 100 }, Worded))).toBe('400 needs n')
    const parsed = objectBody({ limit: 100 }, Worded, { parse: (v) => (Array.isArray(v) ? v.length : -1) })
    expect(await readRouteBody(req('[1,2]'), parsed)).toBe(2)
    // Size and Content-Type are the limit's: over it is the declared status before parsing.
    expect(await words('{"n":1}', objectBody({ limit: 3, status: 400, message: 'too big' }, Body))).toBe('400 too big')
  })

  test('JSON deeper than the bound is refused before JSON.parse runs; the bound itself parses', async () => {
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n)
    expect(() => parseJson(deep(MAX_JSON_DEPTH))).not.toThrow()
    expect(() => parseJson(deep(MAX_JSON_DEPTH + 1))).toThrow(BodySyntaxError)
    expect(() => parseJson('{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000))).toThrow(`nests deeper than ${MAX_JSON_DEPTH} levels`)
    // Brackets inside strings (escaped quotes included) do not count.
    const inString = JSON.stringify({ s: '['.repeat(5000) + '\\"' + '{'.repeat(5000) })
    expect(nestsDeeper(inString)).toBe(false)
    expect(parseJson(inString)).toEqual(JSON.parse(inString))
    const read = readRouteBody(
      new Request('http://x/', { method: 'POST', body: deep(20_000) }),
      objectBody({ limit: 1 << 20 }, Open, { detail: true }),
    )
    expect((await rejection(read)).message).toBe(`Invalid request body. The body nests deeper than ${MAX_JSON_DEPTH} levels.`)
  })

  test('YAML aliases that would expand without bound are refused; shared small subtrees pass', () => {
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    // Seven levels of nine: 4.8 million leaves, which the YAML parser itself still accepts.
    for (let i = 1; i < 7; i++)
      lines.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      )
    expect(() => parseYaml(lines.join('\n'))).toThrow('expands to more than')
    expect(parseYaml('a: &a {k: v}\nb: *a\nc: *a\n')).toEqual({ a: { k: 'v' }, b: { k: 'v' }, c: { k: 'v' } })
    expect(() => parseYaml('a: ' + '['.repeat(MAX_JSON_DEPTH + 1) + ']'.repeat(MAX_JSON_DEPTH + 1))).toThrow(BodySyntaxError)
    expect(() => parseYaml('a: [')).toThrow(BodySyntaxError)
  })

  test('UTF-8 decoding refuses invalid bytes and lone surrogates instead of replacing them', () => {
    expect(decodeUtf8(new TextEncoder().encode('é€😀'))).toBe('é€😀')
    expect(() => decodeUtf8(new Uint8Array([0x61, 0xff]))).toThrow('not valid UTF-8')
    // CESU-8 encoded U+D800.
    expect(() => decodeUtf8(new Uint8Array([0xed, 0xa0, 0x80]))).toThrow(BodySyntaxError)
  })
})

import { describe, expect, test } from 'bun:test'
import { jsonBody, larger, STREAM_ABOVE } from '../../src/http/json-body'

async function text(body: string | ReadableStream<string>): Promise<{ text: string; chunks: number[] }> {
  if (typeof body === 'string') return { text: body, chunks: [body.length] }
  const chunks: number[] = []
  let out = ''
  for await (const c of body) {
    chunks.push(c.length)
    out += c
  }
  return { text: out, chunks }
}

const transcript = (n: number) => ({
  user: 'alice',
  created: new Date(0),
  messages: Array.from({ length: n }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content: `m${i} ${'é"\\\n'.repeat(3)}`.padEnd(1000, 'xyz '),
  })),
})

describe('jsonBody', () => {
  test('a small answer is one string, the same as JSON.stringify', async () => {
    const v = { a: 1, b: [1, undefined, () => 1], c: undefined, d: new Date(5), e: null, f: 'x' }
    const body = jsonBody(v)
    expect(typeof body).toBe('string')
    expect(body).toBe(JSON.stringify(v))
  })

  test('a large answer streams in bounded chunks and its text is exactly JSON.stringify', async () => {
    const v = {
      took: 3,
      hits: {
        hits: [
          { _id: 'big', _source: transcript(4096), skip: undefined, fn: () => 1 },
          { _id: 'small', _source: { a: [undefined, 2] } },
        ],
      },
      empty: {},
      none: [],
    }
    const body = jsonBody(v)
    expect(body).toBeInstanceOf(ReadableStream)
    const { text: out, chunks } = await text(body)
    expect(out).toBe(JSON.stringify(v))
    expect(JSON.parse(out).hits.hits[0]._source.messages).toHaveLength(4096)
    // Pieces are appended until a chunk passes 64 Ki characters: no chunk holds the whole answer.
    expect(chunks.length).toBeGreaterThan(50)
    expect(Math.max(...chunks)).toBeLessThan(64 * 1024 + 2048)
  })

  test('one huge string is still exact (it is its own piece)', async () => {
    const v = { s: 'q"'.repeat(STREAM_ABOVE) }
    const { text: out } = await text(jsonBody(v))
    expect(out).toBe(JSON.stringify(v))
  })

  test('the size estimate stops at its budget and counts strings, keys and members', () => {
    expect(larger({ a: 'x'.repeat(100) }, 1000)).toBe(false)
    expect(larger({ a: 'x'.repeat(2000) }, 1000)).toBe(true)
    expect(
      larger(
        Array.from({ length: 200 }, () => 1),
        1000,
      ),
    ).toBe(true)
    expect(larger(Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`key${i}`, i])), 1000)).toBe(true)
  })
})

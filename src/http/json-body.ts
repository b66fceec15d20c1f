/**
 * The JSON text of an answer. A small answer is one `JSON.stringify`; a large one (a search that
 * returns a 4 MiB transcript, say) is streamed in CHUNK-sized pieces serialized as the socket takes
 * them, so each in-flight answer holds one chunk instead of a whole copy of itself: 100 concurrent
 * readers of a large document share the document and not 100 texts of it. The text is the same
 * as `JSON.stringify(value)` in both cases.
 */

/** Answers whose strings and nodes add up to less than this (characters) are stringified whole. */
export const STREAM_ABOVE = 1024 * 1024
/** Characters serialized per pull of a streamed answer. */
const CHUNK = 64 * 1024

export function jsonBody(value: unknown): string | ReadableStream<string> {
  if (!larger(value, STREAM_ABOVE)) return JSON.stringify(value)
  const pieces = serialize(value)
  return new ReadableStream<string>({
    pull(controller) {
      let text = ''
      while (text.length < CHUNK) {
        const next = pieces.next()
        if (next.done) {
          if (text) controller.enqueue(text)
          controller.close()
          return
        }
        text += next.value
      }
      controller.enqueue(text)
    },
  })
}

/** Plain objects and arrays are walked; anything else (dates, class instances) is JSON.stringify's. */
function walkable(v: unknown): v is Record<string, unknown> | unknown[] {
  if (typeof v !== 'object' || v === null) return false
  if (Array.isArray(v)) return true
  const proto = Object.getPrototypeOf(v)
  return (proto === Object.prototype || proto === null) && typeof (v as { toJSON?: unknown }).toJSON !== 'function'
}

/** Whether the value's text is probably above `budget` characters (a bounded walk, never the text). */
export function larger(value: unknown, budget: number): boolean {
  let left = budget
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (typeof v === 'string') left -= v.length + 2
    else if (walkable(v)) {
      if (Array.isArray(v)) {
        left -= v.length + 2
        for (const x of v) stack.push(x)
      } else
        for (const k in v) {
          left -= k.length + 4
          stack.push(v[k])
        }
    } else left -= 8
    if (left < 0) return true
  }
  return false
}

/** The text of `value` in pieces: small subtrees whole, large objects and arrays member by member. */
function* serialize(value: unknown): Generator<string> {
  if (!walkable(value) || !larger(value, CHUNK)) {
    yield JSON.stringify(value) ?? 'null'
    return
  }
  if (Array.isArray(value)) {
    yield '['
    for (let i = 0; i < value.length; i++) {
      if (i > 0) yield ','
      const v = value[i]
      // As JSON.stringify: what has no JSON text is null inside an array.
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') yield 'null'
      else yield* serialize(v)
    }
    yield ']'
    return
  }
  yield '{'
  let first = true
  for (const k of Object.keys(value)) {
    const v = value[k]
    // As JSON.stringify: a member without JSON text is left out.
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue
    yield `${first ? '' : ','}${JSON.stringify(k)}:`
    first = false
    yield* serialize(v)
  }
  yield '}'
}

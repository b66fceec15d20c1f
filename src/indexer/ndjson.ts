/**
 * NDJSON lines straight from the chunks a body arrived in: each line is decoded on its own, so a
 * 50 MiB bulk is never held as one string, a split copy of it, and its parsed objects at once.
 */
import { badRequest } from './context'

export interface Line {
  /** 1-based, as OpenSearch numbers bulk lines. */
  no: number
  /** The line's bytes (a view into the body); `text(line)` decodes them. */
  raw: Uint8Array
  /** Bytes of the line in the body, its newline included. */
  bytes: number
}

const decoder = new TextDecoder('utf-8', { fatal: true })
const NEWLINE = 10
const EMPTY = new Uint8Array(0)

export const text = (line: Line): string => decode(line.raw)

function decode(bytes: Uint8Array): string {
  try {
    return decoder.decode(bytes)
  } catch {
    throw badRequest('request body is not valid UTF-8', 'parsing_exception')
  }
}

/**
 * Every `\n`-terminated line; the text after the last newline (if not blank) is reported by
 * `terminated`. With `release`, each chunk is dropped from `chunks` once its lines are read.
 */
export function* lines(chunks: Uint8Array[], release = false): Generator<Line> {
  let no = 0
  let pending: Uint8Array[] = []
  for (let c = 0; c < chunks.length; c++) {
    const chunk = chunks[c]
    if (release) chunks[c] = EMPTY
    let start = 0
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start)
      if (nl < 0) break
      let bytes = chunk.subarray(start, nl)
      if (pending.length > 0) {
        bytes = join([...pending, bytes])
        pending = []
      }
      yield { no: ++no, raw: bytes, bytes: bytes.byteLength + 1 }
      start = nl + 1
    }
    if (start < chunk.byteLength) pending.push(chunk.subarray(start))
  }
}

/** Whether the body ends with a newline (whitespace after the last one is allowed, as OpenSearch allows it). */
export function terminated(chunks: Uint8Array[]): boolean {
  for (let c = chunks.length - 1; c >= 0; c--) {
    const chunk = chunks[c]
    for (let i = chunk.byteLength - 1; i >= 0; i--) {
      const b = chunk[i]
      if (b === NEWLINE) return true
      if (b !== 32 && b !== 9 && b !== 13) return false
    }
  }
  return true // empty (or blank) body
}

function join(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.byteLength
  }
  return out
}

/**
 * The parsed keys of the documents rewritten most recently, per row version, and the diff of a
 * rewrite against them. A document holding a long keyword list (an integration listing 10,000
 * rules) is rewritten to append one value: read back, parsed and diffed through sets, its `keys`
 * made every rewrite cost as much as the list. Kept here with a count per value, the list is
 * compared position by position (the unchanged head and tail of a list are equal there), and only
 * the values between them are looked up: what the rewrite changed, whatever the list's length.
 */
import type { StoreCore } from './core'
import type { Key } from './text-index'
import { Lru } from '../../lru'

/** One row version's keys: its fv keys in order, with how often each value occurs, and the rest. */
export interface KeptRow {
  /** The index's uuid and the row's `_seq_no`: the version these keys are of. */
  uuid: string
  seq: number
  /** Bytes of the row's `keys` column (`octet_length`): read without reading the column itself. */
  keysBytes: number
  /** The row's stored size (see storedSize) as last written. */
  len: number
  values: Key[]
  counts: Map<number, Map<string | number, number>>
  /** The `keys` column as written (before its room): `written`'s JSON, with where each key ends in it. */
  text: KeysText
}

/** A row's keys as written to its `keys` column: the list, its JSON, and the offset after each key's JSON. */
export interface KeysText {
  written: readonly Key[]
  json: string
  ends: Uint32Array
}

/** Only documents with this many keys are kept: a short list costs little to parse and diff. */
export const KEEP_FROM = 256
/** Rows kept per store; each holds its keys (some 100 bytes a key). */
const MAX_KEPT = 8

const kept = new WeakMap<StoreCore, Lru<number, KeptRow>>()

/** The keys kept for row `rid` if they are of the version `uuid`/`seq` whose `keys` column has `keysBytes` bytes. */
export function keptRow(core: StoreCore, rid: number, uuid: string, seq: number, keysBytes: number): KeptRow | undefined {
  const row = kept.get(core)?.get(rid)
  return row && row.uuid === uuid && row.seq === seq && row.keysBytes === keysBytes ? row : undefined
}

/** Keeps `row` for `rid` (the newest kept last); forgotten when the running write is taken back. */
export function keepRow(core: StoreCore, rid: number, row: KeptRow): void {
  let rows = kept.get(core)
  if (!rows) kept.set(core, (rows = new Lru(MAX_KEPT)))
  rows.set(rid, row)
  core.onUndo(() => forgetRow(core, rid))
}

export function forgetRow(core: StoreCore, rid: number): void {
  kept.get(core)?.delete(rid)
}

/** How often each value of `values` occurs, per field. */
export function countValues(values: readonly Key[]): Map<number, Map<string | number, number>> {
  const counts = new Map<number, Map<string | number, number>>()
  for (const [f, v] of values) {
    let of = counts.get(f)
    if (!of) counts.set(f, (of = new Map()))
    of.set(v, (of.get(v) ?? 0) + 1)
  }
  return counts
}

const same = (a: Key, b: Key) => a[0] === b[0] && a[1] === b[1]

/**
 * The fv keys a rewrite from `old` to `next` removes and adds (each once), as a diff through sets
 * answers them: a value leaves when no position of `next` holds it, comes when no position of
 * `old` did. `old.counts` becomes the counts of `next` (in place: the caller keeps it for the new
 * version, or forgets it when the write is taken back).
 */
export function diffKeys(old: KeptRow, next: readonly Key[]): { removed: Key[]; added: Key[] } {
  const before = old.values
  let head = 0
  const shorter = Math.min(before.length, next.length)
  while (head < shorter && same(before[head], next[head])) head++
  let tail = 0
  while (tail < shorter - head && same(before[before.length - 1 - tail], next[next.length - 1 - tail])) tail++
  const added: Key[] = []
  const removed: Key[] = []
  const { counts } = old
  for (let i = head; i < next.length - tail; i++) {
    const [f, v] = next[i]
    let of = counts.get(f)
    if (!of) counts.set(f, (of = new Map()))
    const n = of.get(v) ?? 0
    if (n === 0) added.push(next[i])
    of.set(v, n + 1)
  }
  for (let i = head; i < before.length - tail; i++) {
    const [f, v] = before[i]
    const of = counts.get(f)!
    const n = of.get(v)! - 1
    if (n === 0) {
      of.delete(v)
      removed.push(before[i])
    } else of.set(v, n)
  }
  return { removed, added }
}

const NO_ENDS = new Uint32Array(0)

/**
 * The `keys` column of `written`: from the text of the version kept (`before`), only the keys
 * between their common head and tail are serialised; a list of 10,000 ids gaining one otherwise
 * serialised them all on every rewrite. `kept`: whether this text may be kept (offsets wanted).
 */
export function keysText(written: readonly Key[], before?: KeysText, kept = true): KeysText {
  // Not to be kept (a new row, or too few keys: the usual document): no offsets wanted.
  if (!before && (!kept || written.length < KEEP_FROM)) return { written, json: JSON.stringify(written), ends: NO_ENDS }
  const ends = new Uint32Array(written.length)
  const parts: string[] = []
  let at = 1 // after '['
  const put = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const json = JSON.stringify(written[i])
      parts.push(json)
      at += (parts.length > 1 ? 1 : 0) + json.length
      ends[i] = at
    }
  }
  if (!before) {
    put(0, written.length)
    return { written, json: `[${parts.join(',')}]`, ends }
  }
  const old = before.written
  const shorter = Math.min(old.length, written.length)
  let head = 0
  while (head < shorter && same(old[head], written[head])) head++
  let tail = 0
  while (tail < shorter - head && same(old[old.length - 1 - tail], written[written.length - 1 - tail])) tail++
  // The head's text as it was (its ends too), then the changed keys, then the tail's text, shifted.
  if (head > 0) {
    parts.push(before.json.slice(1, before.ends[head - 1]))
    ends.set(before.ends.subarray(0, head))
    at = before.ends[head - 1]
  }
  put(head, written.length - tail)
  if (tail > 0) {
    const from = old.length - tail
    const start = from === 0 ? 1 : before.ends[from - 1] + 1
    parts.push(before.json.slice(start, before.json.length - 1))
    const shift = at + (parts.length > 1 ? 1 : 0) - start
    for (let i = 0; i < tail; i++) ends[written.length - tail + i] = before.ends[from + i] + shift
  }
  return { written, json: `[${parts.join(',')}]`, ends }
}

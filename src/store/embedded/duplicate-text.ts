/**
 * significant_text's `filter_duplicate_text`, as OpenSearch's DeDuplicatingTokenFilter drops
 * them: each token is hashed to one byte (the low byte of MurmurHash3 x64_128's h1 over its
 * UTF-8 bytes, seed 0), and a token belongs to a duplicate when the sequence of the last six
 * bytes it ends (or one of the five after it, in the same value) was seen before, in this
 * document or an earlier one of the same bucket. Byte collisions make unrelated text a
 * duplicate now and then: that is OpenSearch's answer too.
 */

const WINDOW = 6
const MAX_HITS = 255

/** The sequences one bucket has seen (DuplicateByteSequenceSpotter): a six-byte window and its sightings. */
export class DuplicateSpotter {
  private readonly seen = new Map<number, number>()
  private readonly window: number[] = []

  /** `onNew` is told of each sequence seen for the first time (the request's budget of distinct keys: they grow with the matched text). */
  constructor(private readonly onNew: () => void = () => {}) {}

  /** A new document: its first five tokens complete no sequence. */
  startDocument(): void {
    this.window.length = 0
  }

  /** How many times the sequence this byte ends was seen before (0: new, or fewer than six bytes yet). */
  private add(b: number): number {
    this.window.push(b)
    if (this.window.length > WINDOW) this.window.shift()
    if (this.window.length < WINDOW) return 0
    const key = this.window.reduce((k, x) => k * 256 + x, 0)
    const hits = this.seen.get(key) ?? 0
    if (hits === 0) this.onNew()
    if (hits < MAX_HITS) this.seen.set(key, hits + 1)
    return hits
  }

  /** The tokens of one value that are not part of a duplicate sequence. */
  filter(tokens: string[]): string[] {
    const kept: string[] = []
    // A ring of the last six tokens: a duplicate marks every slot, emptied ones included (as OpenSearch's ring).
    const ring: Array<string | undefined> = new Array(WINDOW).fill(undefined)
    const marks = new Array<number>(WINDOW).fill(0)
    let cursor = 0
    let wrapped = false
    const emit = (at: number) => {
      if (marks[at] === 0) kept.push(ring[at]!)
      marks[at] = 0
    }
    for (const token of tokens) {
      const sightings = this.add(tokenByte(token))
      ring[cursor] = token
      if (sightings >= 1) for (let i = 0; i < WINDOW; i++) marks[i] = Math.max(marks[i], sightings)
      cursor = (cursor + 1) % WINDOW
      if (cursor === 0) wrapped = true
      if (wrapped && ring[cursor] !== undefined) emit(cursor)
    }
    for (let at = wrapped ? (cursor + 1) % WINDOW : 0; at !== cursor; at = (at + 1) % WINDOW) emit(at)
    return kept
  }
}

const M64 = (1n << 64n) - 1n
const C1 = 0x87c37b91114253d5n
const C2 = 0x4cf5ad432745937fn

const rotl = (x: bigint, r: bigint): bigint => ((x << r) | (x >> (64n - r))) & M64

function fmix(k: bigint): bigint {
  k ^= k >> 33n
  k = (k * 0xff51afd7ed558ccdn) & M64
  k ^= k >> 33n
  k = (k * 0xc4ceb9fe1a85ec53n) & M64
  return k ^ (k >> 33n)
}

/** Eight little-endian bytes from `at` (fewer at the tail: the rest zero). */
function le64(data: Uint8Array, at: number, n = 8): bigint {
  let v = 0n
  for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(data[at + i])
  return v
}

/** The low byte of MurmurHash3 x64_128's h1 (seed 0), as OpenSearch's MurmurHash3.hash128 computes it. */
export function tokenByte(token: string): number {
  const data = new TextEncoder().encode(token)
  let h1 = 0n
  let h2 = 0n
  const blocks = data.length >> 4
  for (let i = 0; i < blocks; i++) {
    let k1 = le64(data, i * 16)
    let k2 = le64(data, i * 16 + 8)
    k1 = (rotl((k1 * C1) & M64, 31n) * C2) & M64
    h1 ^= k1
    h1 = (((rotl(h1, 27n) + h2) & M64) * 5n + 0x52dce729n) & M64
    k2 = (rotl((k2 * C2) & M64, 33n) * C1) & M64
    h2 ^= k2
    h2 = (((rotl(h2, 31n) + h1) & M64) * 5n + 0x38495ab5n) & M64
  }
  const tail = blocks * 16
  const rest = data.length & 15
  if (rest > 8) {
    const k2 = le64(data, tail + 8, rest - 8)
    h2 ^= (rotl((k2 * C2) & M64, 33n) * C1) & M64
  }
  if (rest > 0) {
    const k1 = le64(data, tail, Math.min(rest, 8))
    h1 ^= (rotl((k1 * C1) & M64, 31n) * C2) & M64
  }
  const len = BigInt(data.length)
  h1 ^= len
  h2 ^= len
  h1 = (h1 + h2) & M64
  h2 = (h2 + h1) & M64
  h1 = fmix(h1)
  h2 = fmix(h2)
  h1 = (h1 + h2) & M64
  return Number(h1 & 0xffn)
}

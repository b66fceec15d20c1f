/**
 * MurmurHash3's finalizer, as the 32-bit hash (Lucene's StringHelper.murmurhash3_x86_32) ends and
 * as the IoC filter spreads its keys: one copy for both.
 */
export function fmix32(h: number): number {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return h ^ (h >>> 16)
}

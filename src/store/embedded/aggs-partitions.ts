/**
 * A terms aggregation's partitioned `include` (`{"partition": p, "num_partitions": n}`), as
 * OpenSearch's IncludeExclude hashes terms: a term belongs to partition
 * floorMod(hash, n). Strings (keyword, and ip as its 16 bytes) hash with Lucene's
 * murmurhash3_x86_32 (seed 31) over their bytes; integers, dates and booleans with HPPC's
 * BitMixer.mix64 of the long value, and floating-point fields of their sortable long bits. The
 * hashes must be OpenSearch's exactly: a client pages through every term by asking each partition.
 */
import { IllegalArgument, StoreError } from '../errors'
import { parseIp } from '../query/ip'
import type { Key } from './aggs-order'
import { fmix32 } from '../../murmur3'

/** The test of one partition for a field of this mapped type (undefined: unmapped, read as keywords). */
export function partitionFilter(include: Record<string, unknown>, type: string | undefined): (key: Key) => boolean {
  const { partition, of } = partitionParams(include)
  const hash = hasherFor(type)
  return (key) => {
    const h = hash(key)
    return h !== undefined && floorMod(h, of) === partition
  }
}

/** The include object's numbers, checked as IncludeExclude.parseInclude and its constructor check them. */
function partitionParams(include: Record<string, unknown>): { partition: number; of: number } {
  for (const k of Object.keys(include))
    if (k !== 'partition' && k !== 'num_partitions')
      throw new StoreError('parse_exception', 400, `Unknown parameter in Include/Exclude clause: ${k}`)
  if (include.partition === undefined) throw new IllegalArgument('Missing [partition] parameter for partition-based include')
  if (include.num_partitions === undefined) throw new IllegalArgument('Missing [num_partitions] parameter for partition-based include')
  const partition = Math.trunc(Number(include.partition))
  const of = Math.trunc(Number(include.num_partitions))
  if (!(partition >= 0 && partition < of)) throw new IllegalArgument(`Partition must be >=0 and < numPartition which is ${of}`)
  return { partition, of }
}

const FLOATING = new Set(['double', 'float', 'half_float', 'scaled_float'])

/** The hash of a key as a (signed) 32- or 64-bit integer; undefined when the key cannot be one of the field's. */
function hasherFor(type: string | undefined): (key: Key) => bigint | undefined {
  if (type === 'ip')
    return (key) => {
      const n = typeof key === 'string' ? parseIp(key) : undefined
      return n === undefined ? undefined : BigInt(murmurhash3(ipBytes(n), SEED))
    }
  if (type !== undefined && FLOATING.has(type)) return (key) => (typeof key === 'number' ? mix64(sortableLong(key)) : undefined)
  return (key) => {
    if (typeof key === 'string') return BigInt(murmurhash3(new TextEncoder().encode(key), SEED))
    if (typeof key !== 'number') return undefined
    // Keys of long, date and boolean fields are whole; an unmapped field's fractional number is a double.
    return mix64(Number.isInteger(key) ? BigInt(key) : sortableLong(key))
  }
}

/** IncludeExclude's HASH_PARTITIONING_SEED. */
const SEED = 31

/** Java's Math.floorMod. */
function floorMod(h: bigint, n: number): number {
  const m = h % BigInt(n)
  return Number(m < 0n ? m + BigInt(n) : m)
}

const M64 = (1n << 64n) - 1n

/** com.carrotsearch.hppc.BitMixer.mix64 (David Stafford's variant 9), on a signed long. */
function mix64(value: bigint): bigint {
  let z = value & M64
  z = ((z ^ (z >> 32n)) * 0x4cd6944c5cc20b6dn) & M64
  z = ((z ^ (z >> 29n)) * 0xfc12c5b19d3259e9n) & M64
  return BigInt.asIntN(64, z ^ (z >> 32n))
}

/** Lucene's NumericUtils.doubleToSortableLong. */
function sortableLong(d: number): bigint {
  const view = new DataView(new ArrayBuffer(8))
  view.setFloat64(0, d)
  const bits = view.getBigInt64(0)
  return bits ^ ((bits >> 63n) & 0x7fffffffffffffffn)
}

/** An address as InetAddressPoint encodes it: 16 bytes, IPv4 mapped into IPv6. */
function ipBytes(n: bigint): Uint8Array {
  const out = new Uint8Array(16)
  for (let i = 15; i >= 0; i--, n >>= 8n) out[i] = Number(n & 0xffn)
  return out
}

/** Lucene's StringHelper.murmurhash3_x86_32, as a signed 32-bit integer. */
function murmurhash3(data: Uint8Array, seed: number): number {
  const c1 = 0xcc9e2d51
  const c2 = 0x1b873593
  let h1 = seed | 0
  const whole = data.length & ~3
  for (let i = 0; i < whole; i += 4) {
    let k1 = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
    k1 = Math.imul(k1, c1)
    k1 = (k1 << 15) | (k1 >>> 17)
    k1 = Math.imul(k1, c2)
    h1 ^= k1
    h1 = (h1 << 13) | (h1 >>> 19)
    h1 = (Math.imul(h1, 5) + 0xe6546b64) | 0
  }
  let k1 = 0
  switch (data.length & 3) {
    case 3:
      k1 = data[whole + 2] << 16
    // falls through
    case 2:
      k1 |= data[whole + 1] << 8
    // falls through
    case 1:
      k1 |= data[whole]
      k1 = Math.imul(k1, c1)
      k1 = (k1 << 15) | (k1 >>> 17)
      k1 = Math.imul(k1, c2)
      h1 ^= k1
  }
  return fmix32(h1 ^ data.length) | 0
}

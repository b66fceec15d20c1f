/**
 * A Bloom filter of the IoC index's keys in shared memory: the evaluator thread tests each event
 * value of a detector's IoC fields against it in the scan's pass, and sends the node thread only
 * the few values it may hold (about one in a thousand keys probed is a false positive; never a
 * false negative), which the index then looks up exactly. Without it every value of every event
 * crossed threads and was looked up in the index, though almost none is listed.
 *
 * The index (ioc-index.ts) keeps it in step as keys come and go: a new key sets its bits, a key
 * gone leaves them (a Bloom filter cannot unset them) and counts as stale. Once live and stale keys
 * reach the filter's capacity it is built again from the index's keys, at twice the live count
 * (amortized as a hash table's growth, never per change batch), in a new buffer that the next scan
 * request carries. The keys per prefix length of each address family are kept too, so the thread
 * probes only the lengths listed.
 */
import { IOC_TYPES, type IocType, type KeyProbe, maskV4, maskV6, probeKeys } from './ioc-types'

/** Bits per key at capacity, and bits set per key: a false positive per ~1,100 keys probed. */
const BITS_PER_KEY = 16
const PROBES = 6
/** Keys per prefix length: IPv4's 0-32, then IPv6's 0-128. */
const LENGTHS = 33 + 129
const V6 = 33
/** The smallest capacity (keys): 64 KiB of bits. */
const MIN_KEYS = 1 << 15

/** A 32-bit finalizer (murmur3's): a bijection, so distinct addresses of one length never share a first hash. */
function mix(h: number): number {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

export class IocFilter {
  /** Keys per prefix length (see LENGTHS), then the bits. */
  private readonly lengths: Int32Array
  private readonly bits: Uint32Array
  private readonly mask: number
  /** Keys the bits were set for and are still listed, and those removed since (bits still set). */
  private live = 0
  private stale = 0
  private h1 = 0
  private h2 = 0
  /** The walk of a value's keys that stops at the first key the bits may hold. */
  private readonly probe: KeyProbe

  /** A filter over `buffer` (another thread's), or a new one for `keys` keys. */
  constructor(
    keys: number | SharedArrayBuffer,
    /** Capacity in keys (a power of two). */
    readonly capacity = typeof keys === 'number' ? Math.max(MIN_KEYS, 2 ** Math.ceil(Math.log2(Math.max(1, keys)))) : 0,
  ) {
    const buffer = typeof keys === 'number' ? new SharedArrayBuffer(LENGTHS * 4 + (capacity * BITS_PER_KEY) / 8) : keys
    this.lengths = new Int32Array(buffer, 0, LENGTHS)
    this.bits = new Uint32Array(buffer, LENGTHS * 4)
    this.mask = this.bits.length * 32 - 1
    this.probe = {
      v4: (addr) => {
        for (let bits = 32; bits >= 0; bits--) if (this.lengths[bits] > 0 && this.hasV4(maskV4(addr, bits), bits)) return true
        return false
      },
      v6: (hex) => {
        for (let bits = 128; bits >= 0; bits--) if (this.lengths[V6 + bits] > 0 && this.hasText(maskV6(hex, bits), 0, 5 + bits)) return true
        return false
      },
      exact: (type, key, start) => this.hasText(key, start, IOC_TYPES.indexOf(type)),
    }
  }

  get buffer(): SharedArrayBuffer {
    return this.bits.buffer as SharedArrayBuffer
  }

  /** True once the keys set since it was built reach its capacity: the index builds it again. */
  get full(): boolean {
    return this.live + this.stale >= this.capacity
  }

  /** False when no IoC the index lists matches `value` as `type` (IocIndex.match is then empty). */
  mayMatch(type: IocType, value: string): boolean {
    return probeKeys(type, value, this.probe)
  }

  addV4(addr: number, bits: number): void {
    this.lengths[bits]++
    this.hashV4(addr, bits)
    this.set()
  }

  addV6(hex: string, bits: number): void {
    this.lengths[V6 + bits]++
    this.hashText(hex, 0, 5 + bits)
    this.set()
  }

  addExact(type: 'domain-name' | 'hashes' | 'url', key: string): void {
    this.hashText(key, 0, IOC_TYPES.indexOf(type))
    this.set()
  }

  /** A key no longer listed: its length no longer probed when it was the last; its bits stay. */
  drop(family?: { v4: number } | { v6: number }): void {
    if (family) this.lengths['v4' in family ? family.v4 : V6 + family.v6]--
    this.live--
    this.stale++
  }

  private hasV4(addr: number, bits: number): boolean {
    this.hashV4(addr, bits)
    return this.has()
  }

  private hasText(s: string, start: number, seed: number): boolean {
    this.hashText(s, start, seed)
    return this.has()
  }

  private hashV4(addr: number, bits: number): void {
    this.h1 = mix(addr ^ Math.imul(bits + 1, 0x9e3779b1))
    this.h2 = mix(this.h1 ^ 0x6a09e667) | 1
  }

  /** Two hashes of `s` from `start` (FNV-1a and a multiplicative one), `seed` telling kinds apart. */
  private hashText(s: string, start: number, seed: number): void {
    let a = 0x811c9dc5 ^ seed
    let b = Math.imul(seed + 1, 0x27d4eb2f)
    for (let i = start; i < s.length; i++) {
      const c = s.charCodeAt(i)
      a = Math.imul(a ^ c, 0x01000193)
      b = Math.imul(b + c, 0x9e3779b1) ^ (b >>> 15)
    }
    this.h1 = mix(a)
    this.h2 = mix(b) | 1
  }

  private set(): void {
    const bits = this.bits
    for (let i = 0, h = this.h1; i < PROBES; i++, h = (h + this.h2) >>> 0) {
      const at = h & this.mask
      bits[at >>> 5] |= 1 << (at & 31)
    }
    this.live++
  }

  private has(): boolean {
    const bits = this.bits
    for (let i = 0, h = this.h1; i < PROBES; i++, h = (h + this.h2) >>> 0) {
      const at = h & this.mask
      if ((bits[at >>> 5] & (1 << (at & 31))) === 0) return false
    }
    return true
  }
}

/**
 * The IoC index's keys in shared memory, as a filter: the evaluator thread tests each event value
 * of a detector's IoC fields against it in the scan's pass, and sends the node thread only the few
 * values it may hold (never dropping one the index matches), which the index then looks up
 * exactly. Without it every value of every event crossed threads and was looked up in the index,
 * though few are listed. IPv4 keys, the bulk of a feed and of event values, mark their /24 blocks
 * in a bitmap of the address space (2 MiB; a network shorter than /24 marks each block it spans),
 * so an address costs one bit read, whatever the prefix lengths listed; an address in a marked
 * block is sent even when no key holds it. The other keys go in a Bloom filter (about one false
 * positive per 1,000 keys probed), IPv6 under each prefix length listed.
 *
 * The index (ioc-index.ts) keeps it in step as keys come and go: a new key sets its bits, a key
 * gone leaves them (a Bloom filter cannot unset them) and counts as stale. Once live and stale keys
 * reach the filter's capacity it is built again from the index's keys, at twice the live count
 * (amortized as a hash table's growth, never per change batch), in a new buffer that the next scan
 * request carries.
 */
import { IOC_TYPES, type IocType, type KeyProbe, maskV6, probeKeys } from './ioc-types'
import { fmix32 } from '../../murmur3'

/** Bits per key at capacity, and bits set per key: a false positive per ~1,100 keys probed. */
const BITS_PER_KEY = 16
const PROBES = 6
/** IPv6 keys per prefix length (0-128): the thread probes only the lengths listed. */
const LENGTHS = 129
/** One bit per /24 block of the IPv4 space. */
const V4_WORDS = 2 ** 24 / 32
/** The smallest capacity (keys): 64 KiB of bits. */
const MIN_KEYS = 1 << 15

/** A 32-bit finalizer (murmur3's), unsigned. */
const mix = (h: number): number => fmix32(h) >>> 0

export class IocFilter {
  /** IPv6 keys per prefix length, the /24 blocks of IPv4 keys, then the Bloom filter's bits. */
  private readonly lengths: Int32Array
  private readonly v4: Uint32Array
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
    const buffer = typeof keys === 'number' ? new SharedArrayBuffer((LENGTHS + V4_WORDS) * 4 + (capacity * BITS_PER_KEY) / 8) : keys
    this.lengths = new Int32Array(buffer, 0, LENGTHS)
    this.v4 = new Uint32Array(buffer, LENGTHS * 4, V4_WORDS)
    this.bits = new Uint32Array(buffer, (LENGTHS + V4_WORDS) * 4)
    this.mask = this.bits.length * 32 - 1
    this.probe = {
      v4: (addr) => (this.v4[addr >>> 13] & (1 << ((addr >>> 8) & 31))) !== 0,
      v6: (hex) => {
        for (let bits = 128; bits >= 0; bits--) if (this.lengths[bits] > 0 && this.hasText(maskV6(hex, bits), 0, 5 + bits)) return true
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

  /** An IPv4 address or network (`addr` masked to `bits`): the /24 blocks it spans. */
  addV4(addr: number, bits: number): void {
    const first = addr >>> 8
    const blocks = bits >= 24 ? 1 : 2 ** (24 - bits)
    if (blocks >= 32) this.v4.fill(0xffffffff, first >>> 5, (first >>> 5) + blocks / 32)
    else for (let b = first; b < first + blocks; b++) this.v4[b >>> 5] |= 1 << (b & 31)
    this.live++
  }

  addV6(hex: string, bits: number): void {
    this.lengths[bits]++
    this.hashText(hex, 0, 5 + bits)
    this.set()
  }

  addExact(type: 'domain-name' | 'hashes' | 'url', key: string): void {
    this.hashText(key, 0, IOC_TYPES.indexOf(type))
    this.set()
  }

  /** A key no longer listed (an IPv6 one: of that length); its bits stay. */
  drop(v6bits?: number): void {
    if (v6bits !== undefined) this.lengths[v6bits]--
    this.live--
    this.stale++
  }

  private hasText(s: string, start: number, seed: number): boolean {
    this.hashText(s, start, seed)
    return this.has()
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

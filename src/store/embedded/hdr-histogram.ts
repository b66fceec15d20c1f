/**
 * HdrHistogram 2.2.2's `DoubleHistogram` with auto-resizing, as OpenSearch's `hdr` percentiles
 * and percentile_ranks use it. Values are counted in an integer histogram: a value v is the
 * integer floor(v / unit), in buckets whose width doubles with each binary order of magnitude and
 * that hold 2 * 10^digits values (rounded up to a power of two) each. The unit follows the
 * smallest value seen: the range starts at [2^800, 2^803) and moves down to each smaller value,
 * or widens when it cannot move without dropping counts off its top. Answers are bucket edges in
 * units, so the unit's history matters to the last digit and is kept as the library keeps it.
 */
import { javaDouble } from './java-double'
import { StoreError } from '../errors'

/** The largest value the library accepts: the power of two nearest below Double.MAX_VALUE / 4. */
const HIGHEST_ALLOWED = 2 ** 1021
/** The largest long (2^63 - 1) as the closest double below it: where Java's (long) cast saturates. */
const LONG_MAX = 9223372036854774784

/** floor(log2 x) for x >= 1, exactly (Math.log2 may round up just below a power of two). */
function floorLog2(x: number): number {
  let e = Math.floor(Math.log2(x))
  if (2 ** e > x) e--
  else if (2 ** (e + 1) <= x) e++
  return e
}

/** Java's 64 - Long.numberOfLeadingZeros(x): the bits x needs. */
const bitLength = (x: number): number => (x < 1 ? 0 : floorLog2(x) + 1)

/** The distance to the next larger double (Java's Math.ulp) for finite x. */
function ulp(x: number): number {
  const a = Math.abs(x)
  if (a < 2 ** -1022) return 2 ** -1074
  return 2 ** (floorLog2(a) - 52)
}

/** The largest double below x (Java's Math.nextAfter(x, -Infinity)) for finite x. */
function nextDown(x: number): number {
  if (x === 0) return -(2 ** -1074)
  const bits = new Float64Array([x])
  const raw = new BigInt64Array(bits.buffer)
  raw[0] += x > 0 ? -1n : 1n
  return bits[0]
}

/**
 * The library's ArrayIndexOutOfBoundsException, under its Java name: OpenSearch answers it 500,
 * but a value the histogram cannot hold (a negative one) is the request's fault, so 400 here.
 */
export class HistogramOutOfBounds extends StoreError {
  constructor(reason: string) {
    super('array_index_out_of_bounds_exception', 400, reason)
  }
}

export class DoubleHdrHistogram {
  /** Entries of the first bucket's upper half, and of every other bucket (a power of two). */
  private readonly half: number
  private readonly halfMagnitude: number
  /** Counts by index in the integer histogram: index 0 is the value 0, the others lie above `half`. */
  private readonly counts = new Map<number, number>()
  private total = 0
  private minIndex = Infinity
  private maxIndex = 0
  /** The covered range [lowest, highest): lowest is `half` units. */
  private lowest = 2 ** 800
  private highest = 2 ** 803
  /** What one integer stands for (lowest / half, a power of two), and its inverse. */
  private unit = 0
  private perUnit = 0
  /** The library's configured highest-to-lowest ratio: it caps a shift and grows with the range. */
  private ratio = 2
  /** The integer histogram's highest trackable value is 2^order - 1. */
  private order: number

  constructor(readonly digits: number) {
    const magnitude = Math.ceil(Math.log(2 * Math.pow(10, digits)) / Math.log(2))
    this.halfMagnitude = magnitude - 1
    this.half = 2 ** this.halfMagnitude
    // An integer range of `half` times the internal ratio, 2^(bits of 2, plus one) = 8.
    this.order = magnitude + 2
    this.setRange(this.lowest, this.highest)
  }

  get count(): number {
    return this.total
  }

  /** Counts `v` (`count` times), moving or widening the covered range first when it lies outside. */
  add(v: number, count = 1): void {
    if (v < this.lowest || v >= this.highest) this.adjustRange(v)
    const index = this.indexOf(Math.trunc(v * this.perUnit))
    this.counts.set(index, (this.counts.get(index) ?? 0) + count)
    this.total += count
    if (index > this.maxIndex) this.maxIndex = index
    if (index !== 0 && index < this.minIndex) this.minIndex = index
  }

  /** An empty histogram over the same range, as the library's copy constructor makes it (OpenSearch's reduce starts from one). */
  emptyCopy(): DoubleHdrHistogram {
    const copy = new DoubleHdrHistogram(this.digits)
    copy.ratio = this.ratio
    copy.order = this.order
    copy.setRange(this.lowest, this.highest)
    return copy
  }

  /** Adds another histogram's counts, each at the bottom of its bucket (the library's add). */
  addAll(other: DoubleHdrHistogram): void {
    for (const index of other.sortedIndices()) this.add(other.valueFromIndex(index) * other.unit, other.counts.get(index)!)
  }

  /** The value at `percentile` (0..100): the top of its bucket (its bottom for 0), in units. */
  valueAtPercentile(percentile: number): number {
    const requested = Math.min(Math.max(nextDown(percentile), 0), 100)
    const countAt = Math.max(Math.ceil((requested * this.total) / 100), 1)
    let sum = 0
    for (const index of this.sortedIndices()) {
      sum += this.counts.get(index)!
      if (sum >= countAt) {
        const width = 2 ** this.bucketOf(index)
        const bottom = this.valueFromIndex(index)
        return (percentile === 0 ? bottom : bottom + width - 1) * this.unit
      }
    }
    return 0
  }

  /** The percentage of values in buckets up to the one of `v`. */
  percentileAtOrBelow(v: number): number {
    const integer = Math.min(Math.trunc(v * this.perUnit), LONG_MAX)
    if (integer < 0) throw new HistogramOutOfBounds('Histogram recorded value cannot be negative.')
    const target = Math.min(this.indexOf(integer), this.arrayLength() - 1)
    let sum = 0
    for (const [index, n] of this.counts) if (index <= target) sum += n
    return (100 * sum) / this.total
  }

  private sortedIndices(): number[] {
    return [...this.counts.keys()].sort((a, b) => a - b)
  }

  /** The index of an integer value: its bucket (bits beyond the sub-bucket ones) and the value's top bits. */
  private indexOf(x: number): number {
    if (x < 2 * this.half) return x
    const bucket = floorLog2(x) - this.halfMagnitude
    return bucket * this.half + Math.floor(x / 2 ** bucket)
  }

  private bucketOf(index: number): number {
    return Math.max(0, Math.floor(index / this.half) - 1)
  }

  private valueFromIndex(index: number): number {
    const bucket = this.bucketOf(index)
    return (index - bucket * this.half) * 2 ** bucket
  }

  /** The integer histogram's counts array: one half-bucket more than its buckets. */
  private arrayLength(): number {
    let buckets = 1
    for (let bits = this.halfMagnitude + 1; bits < this.order; bits++) {
      if (bits >= 62) return (buckets + 2) * this.half
      buckets++
    }
    return (buckets + 1) * this.half
  }

  private setRange(lowest: number, highest: number): void {
    this.lowest = lowest
    this.highest = highest
    this.unit = lowest / this.half
    this.perUnit = 1 / this.unit
  }

  private adjustRange(v: number): void {
    if (v === 0) return
    try {
      if (v < this.lowest) {
        if (v < 0) throw new Error('Negative values cannot be recorded')
        do this.moveDown(this.shiftFor(Math.ceil(this.lowest / v) - 1))
        while (v < this.lowest)
      } else {
        if (v > HIGHEST_ALLOWED) throw new Error(`Values above ${javaDouble(HIGHEST_ALLOWED)} cannot be recorded`)
        // A value at an exact multiple of the limit belongs above it: one ulp more tips it over.
        do this.moveUp(this.shiftFor(Math.ceil((v + ulp(v)) / this.highest) - 1))
        while (v >= this.highest)
      }
    } catch (e) {
      const range = `[${javaDouble(this.lowest)}, ${javaDouble(this.highest)})`
      throw new HistogramOutOfBounds(
        `The value ${javaDouble(v)} is out of bounds for histogram, current covered range ${range} cannot be extended any further.\nCaused by: java.lang.ArrayIndexOutOfBoundsException: ${(e as Error).message}`,
      )
    }
  }

  /** The binary orders of magnitude to move by for a ratio x, capped by the configured ratio and by 2^50. */
  private shiftFor(x: number): number {
    if (x > this.ratio) return Math.trunc(Math.log(this.ratio) / Math.log(2))
    if (x > 2 ** 50) return 50
    return bitLength(Math.ceil(x))
  }

  private hasNonZero(): boolean {
    return this.total > (this.counts.get(0) ?? 0)
  }

  /**
   * The range moves n binary orders down: recorded values take 2^n times more units. When that
   * would push the largest one off the counts array, the array grows instead and the range's
   * top stays where it is.
   */
  private moveDown(n: number): void {
    const factor = 2 ** -n
    let highest = this.highest
    if (this.hasNonZero()) {
      const shift = n * this.half
      if (this.maxIndex >= this.arrayLength() - shift) {
        this.grow(n, 'Operation would overflow, would discard recorded value counts')
        highest /= factor
      }
      this.shiftIndices(shift)
    }
    this.setRange(this.lowest * factor, highest * factor)
  }

  /**
   * The range moves n binary orders up. Recorded values would take 2^n times fewer units, which
   * loses precision when the smallest one lies in the lowest n buckets: then the array grows
   * instead and the range's bottom stays. (When the shift does happen, the library scales the
   * range twice; that is kept.)
   */
  private moveUp(n: number): void {
    const factor = 2 ** n
    let lowest = this.lowest
    let highest = this.highest
    if (this.hasNonZero()) {
      const shift = n * this.half
      if (this.minIndex < shift + this.half) {
        this.grow(n, 'Operation would underflow and lose precision of already recorded value counts')
        lowest /= factor
      } else {
        this.shiftIndices(-shift)
        lowest *= factor
        highest *= factor
      }
    }
    this.setRange(lowest * factor, highest * factor)
  }

  /** The counts array grows by n binary orders of magnitude, since shifting by them failed for `why`. */
  private grow(n: number, why: string): void {
    if (this.order + n > 63)
      throw new Error(
        `Cannot resize histogram covered range beyond (1L << 63) / (1L << ${this.halfMagnitude}) - 1.\nCaused by: java.lang.ArrayIndexOutOfBoundsException: ${why}`,
      )
    this.order += n
    this.ratio *= 2 ** n
  }

  /** Every non-zero value's index moves by `shift` (n half-buckets: n binary orders of magnitude). */
  private shiftIndices(shift: number): void {
    const moved = [...this.counts].map(([index, n]): [number, number] => [index === 0 ? 0 : index + shift, n])
    this.counts.clear()
    for (const [index, n] of moved) this.counts.set(index, n)
    this.maxIndex += shift
    this.minIndex += shift
  }
}

/**
 * The merging t-digest of t-digest 3.3 (`MergingDigest`), which OpenSearch 3.4's `TDigestState`
 * is: values wait in a buffer, and a full buffer is sorted and merged into the centroids under
 * the K_2 scale's weight limit. Every choice of the library is kept (buffer and working sizes,
 * merge directions that alternate, the first and last values kept alone, the order of the
 * floating-point operations), because percentiles, percentile_ranks and
 * median_absolute_deviation are read off the centroids and should agree value for value.
 */

/** Centroids in ascending order of mean; `count` of each array is in use. */
interface Centroids {
  mean: Float64Array
  weight: Float64Array
  count: number
}

export class MergingDigest {
  /** The compression asked for (at least 10, as the library forces); compress() merges to it. */
  readonly compression: number
  /** The compression values are merged with on the way: twice the asked one (the library's "two-level" mode). */
  private readonly working: number
  /** Values buffered at most, the centroids included (a merge copies them into the buffer). */
  private readonly bufferSize: number
  private merged: Centroids = { mean: new Float64Array(0), weight: new Float64Array(0), count: 0 }
  private totalWeight = 0
  private tempMean = new Float64Array(16)
  private tempWeight = new Float64Array(16)
  private tempUsed = 0
  private unmergedWeight = 0
  /** Every buffered weight is 1 (values, not centroids): a plain numeric sort orders them. */
  private unitWeights = true
  /** Merges done so far: every second one runs from the largest value down. */
  private mergeCount = 0
  min = Infinity
  max = -Infinity

  constructor(compression: number) {
    const c = Math.max(compression, 10)
    const sizeFudge = c < 30 ? 30 : 10
    let size = Math.trunc(2 * c + sizeFudge)
    let bufferSize = 5 * size
    const scale = Math.max(1, Math.trunc(bufferSize / size) - 1)
    this.compression = c
    this.working = Math.sqrt(scale) * c
    if (size < this.working + sizeFudge) size = Math.ceil(this.working + sizeFudge)
    if (bufferSize <= 2 * size) bufferSize = 2 * size
    this.bufferSize = bufferSize
  }

  /** Values added, merged or not. */
  get count(): number {
    return this.totalWeight + this.unmergedWeight
  }

  add(x: number, w = 1): void {
    if (this.tempUsed >= this.bufferSize - this.merged.count - 1) this.mergeNewValues(false, this.working)
    if (this.tempUsed === this.tempMean.length) this.growBuffer()
    this.tempMean[this.tempUsed] = x
    this.tempWeight[this.tempUsed++] = w
    if (w !== 1) this.unitWeights = false
    this.unmergedWeight += w
    if (x < this.min) this.min = x
    if (x > this.max) this.max = x
  }

  /** The buffer grows as values come, up to its size: a digest of a few values stays small. */
  private growBuffer(): void {
    const n = Math.min(this.bufferSize, this.tempMean.length * 2)
    const mean = new Float64Array(n)
    const weight = new Float64Array(n)
    mean.set(this.tempMean)
    weight.set(this.tempWeight)
    this.tempMean = mean
    this.tempWeight = weight
  }

  /** Merges the buffer into the centroids at the asked compression, even an empty one (each call can still merge). */
  compress(): void {
    this.mergeNewValues(true, this.compression)
  }

  /**
   * The centroids after compress(), as [mean, weight] pairs in ascending order. The library hands
   * them out as `Centroid` objects, whose mean is recomputed as (w * mean) / w: that rounding is kept.
   */
  centroids(): Array<[number, number]> {
    this.compress()
    const { mean, weight, count } = this.merged
    return Array.from({ length: count }, (_, i) => [(weight[i] * mean[i]) / weight[i], weight[i]])
  }

  /**
   * This digest as OpenSearch's coordinating node receives it from the shard that built it. A
   * search over one shard answers from that; over several, the received digests are merged.
   */
  shipped(): MergingDigest {
    // Written: byteSize() and asBytes() each compress it.
    this.compress()
    this.compress()
    // Read: fromBytes() rebuilds the written centroids, which centroids() (an emptiness check) and
    // add(List) each compress again before add(List) merges them into a new digest.
    const wire = new MergingDigest(this.compression)
    const { mean, weight, count } = this.merged
    wire.merged = { mean: mean.slice(0, count), weight: weight.slice(0, count), count }
    for (let i = 0; i < count; i++) wire.totalWeight += weight[i]
    wire.min = this.min
    wire.max = this.max
    wire.compress()
    const out = new MergingDigest(wire.compression)
    if (wire.merged.count === 0) return out
    wire.compress()
    const w = wire.merged
    out.merge(w.mean.slice(0, w.count), w.weight.slice(0, w.count), w.count, wire.totalWeight, false, out.working, true)
    return out
  }

  private mergeNewValues(force: boolean, compression: number): void {
    if (this.totalWeight === 0 && this.unmergedWeight === 0) return
    if (!force && this.unmergedWeight === 0) return
    const backwards = this.mergeCount % 2 === 1
    if (this.unitWeights) this.tempMean.subarray(0, this.tempUsed).sort()
    this.merge(this.tempMean, this.tempWeight, this.tempUsed, this.unmergedWeight, backwards, compression, this.unitWeights)
    this.mergeCount++
    this.tempUsed = 0
    this.unmergedWeight = 0
    this.unitWeights = true
  }

  /**
   * Merges `n` incoming centroids (`sorted`: already in ascending order) with the existing
   * ones into new centroids, each as large as the scale allows where it stands.
   */
  private merge(
    mean: Float64Array,
    weight: Float64Array,
    n: number,
    added: number,
    backwards: boolean,
    compression: number,
    sorted = false,
  ): void {
    const all = sorted ? mergeSorted(mean, weight, n, this.merged) : sortAll(mean, weight, n, this.merged)
    this.totalWeight += added
    this.merged = compressSorted(all, this.totalWeight, backwards, compression)
    const out = this.merged
    if (this.totalWeight > 0) {
      this.min = Math.min(this.min, out.mean[0])
      this.max = Math.max(this.max, out.mean[out.count - 1])
    }
  }

  /** The value at quantile q (0..1); NaN when empty. */
  quantile(q: number): number {
    this.mergeNewValues(false, this.working)
    const { mean, weight, count: n } = this.merged
    const total = this.totalWeight
    if (n === 0) return Number.NaN
    if (n === 1) return mean[0]
    const index = q * total
    if (index < 1) return this.min
    // The first and last values are known exactly: interpolate from them, not from their centroids.
    if (weight[0] > 1 && index < weight[0] / 2) return this.min + ((index - 1) / (weight[0] / 2 - 1)) * (mean[0] - this.min)
    if (index > total - 1) return this.max
    if (weight[n - 1] > 1 && total - index <= weight[n - 1] / 2)
      return this.max - ((total - index - 1) / (weight[n - 1] / 2 - 1)) * (this.max - mean[n - 1])
    let weightSoFar = weight[0] / 2
    for (let i = 0; i < n - 1; i++) {
      const dw = (weight[i] + weight[i + 1]) / 2
      if (weightSoFar + dw > index) {
        // A centroid of one value is that value: no interpolation within half a unit of it.
        let leftUnit = 0
        if (weight[i] === 1) {
          if (index - weightSoFar < 0.5) return mean[i]
          leftUnit = 0.5
        }
        let rightUnit = 0
        if (weight[i + 1] === 1) {
          if (weightSoFar + dw - index <= 0.5) return mean[i + 1]
          rightUnit = 0.5
        }
        const z1 = index - weightSoFar - leftUnit
        const z2 = weightSoFar + dw - index - rightUnit
        return weightedAverage(mean[i], z2, mean[i + 1], z1)
      }
      weightSoFar += dw
    }
    const z1 = index - total - weight[n - 1] / 2
    const z2 = weight[n - 1] / 2 - z1
    return weightedAverage(mean[n - 1], z1, this.max, z2)
  }

  /** The share (0..1) of values at or below x, half of those equal to it; NaN when empty. */
  cdf(x: number): number {
    this.mergeNewValues(false, this.working)
    const { mean, weight, count: n } = this.merged
    const { min, max, totalWeight: total } = this
    if (n === 0) return Number.NaN
    if (x < min) return 0
    if (x > max) return 1
    if (n === 1) return 0.5 // one centroid means min == max: x is that value
    if (x < mean[0]) {
      if (!(mean[0] - min > 0)) return 0
      return x === min ? 0.5 / total : (1 + ((x - min) / (mean[0] - min)) * (weight[0] / 2 - 1)) / total
    }
    if (x > mean[n - 1]) {
      if (!(max - mean[n - 1] > 0)) return 1
      return x === max ? 1 - 0.5 / total : 1 - (1 + ((max - x) / (max - mean[n - 1])) * (weight[n - 1] / 2 - 1)) / total
    }
    let weightSoFar = 0
    for (let i = 0; i < n - 1; i++) {
      if (mean[i] === x) {
        // Centroids exactly at x count as one, half of it below x.
        let dw = 0
        for (let j = i; j < n && mean[j] === x; j++) dw += weight[j]
        return (weightSoFar + dw / 2) / total
      }
      if (mean[i] <= x && x < mean[i + 1]) return weightUpTo(mean, weight, i, x, weightSoFar) / total
      weightSoFar += weight[i]
    }
    return 1 - 0.5 / total // x is the last centroid's mean
  }
}

/**
 * The weight up to x, x between centroids i and i + 1 and `before` the weight of the centroids
 * before i: a centroid of one value is all at its mean, so only the others' weights are spread.
 */
function weightUpTo(mean: Float64Array, weight: Float64Array, i: number, x: number, before: number): number {
  const dw = (weight[i] + weight[i + 1]) / 2
  // Centroids too close to interpolate between.
  if (!(mean[i + 1] - mean[i] > 0)) return before + dw
  let leftExcluded = 0
  let rightExcluded = 0
  if (weight[i] === 1) {
    if (weight[i + 1] === 1) return before + 1
    leftExcluded = 0.5
  } else if (weight[i + 1] === 1) rightExcluded = 0.5
  const spread = dw - leftExcluded - rightExcluded
  const base = before + weight[i] / 2 + leftExcluded
  return base + (spread * (x - mean[i])) / (mean[i + 1] - mean[i])
}

/** (x1 w1 + x2 w2) / (w1 + w2), kept between x1 and x2 despite rounding. */
function weightedAverage(x1: number, w1: number, x2: number, w2: number): number {
  if (x1 > x2) return weightedAverage(x2, w2, x1, w1)
  const x = (x1 * w1 + x2 * w2) / (w1 + w2)
  return Math.max(x1, Math.min(x, x2))
}

/** Sorted incoming values and the existing centroids as one ascending list; on equal means the incoming come first. */
function mergeSorted(mean: Float64Array, weight: Float64Array, n: number, old: Centroids): Centroids {
  const count = n + old.count
  const out: Centroids = { mean: new Float64Array(count), weight: new Float64Array(count), count }
  let i = 0
  let j = 0
  for (let k = 0; k < count; k++) {
    if (j >= old.count || (i < n && mean[i] <= old.mean[j])) {
      out.mean[k] = mean[i]
      out.weight[k] = weight[i++]
    } else {
      out.mean[k] = old.mean[j]
      out.weight[k] = old.weight[j++]
    }
  }
  return out
}

/** Incoming centroids followed by the existing ones, sorted by mean, ties in that order (the library's stable sort). */
function sortAll(mean: Float64Array, weight: Float64Array, n: number, old: Centroids): Centroids {
  const count = n + old.count
  const means = new Float64Array(count)
  const weights = new Float64Array(count)
  means.set(mean.subarray(0, n))
  weights.set(weight.subarray(0, n))
  means.set(old.mean.subarray(0, old.count), n)
  weights.set(old.weight.subarray(0, old.count), n)
  const order = Array.from({ length: count }, (_, i) => i).sort((a, b) => means[a] - means[b] || a - b)
  const out: Centroids = { mean: new Float64Array(count), weight: new Float64Array(count), count }
  order.forEach((from, k) => {
    out.mean[k] = means[from]
    out.weight[k] = weights[from]
  })
  return out
}

/**
 * One merge pass over sorted centroids (from the largest down when `backwards`): each joins the
 * centroid being built while their weight stays within the K_2 scale's limit at both its ends,
 * q(1 - q) / normalizer of the total. The second and the last one never join, so the smallest
 * and largest values stay centroids of their own.
 */
function compressSorted(all: Centroids, total: number, backwards: boolean, compression: number): Centroids {
  const n = all.count
  const out: Centroids = { mean: new Float64Array(n), weight: new Float64Array(n), count: 0 }
  if (n === 0) return out
  const at = (i: number) => (backwards ? n - 1 - i : i)
  const normalizer = compression / (4 * Math.log(total / compression) + 24)
  let mean = all.mean[at(0)]
  let weight = all.weight[at(0)]
  let weightSoFar = 0
  for (let i = 1; i < n; i++) {
    const x = all.mean[at(i)]
    const w = all.weight[at(i)]
    const proposed = weight + w
    const q0 = weightSoFar / total
    const q2 = (weightSoFar + proposed) / total
    const fits = i !== 1 && i !== n - 1 && proposed <= total * Math.min((q0 * (1 - q0)) / normalizer, (q2 * (1 - q2)) / normalizer)
    if (fits) {
      weight += w
      mean = mean + ((x - mean) * w) / weight
    } else {
      weightSoFar += weight
      out.mean[out.count] = mean
      out.weight[out.count++] = weight
      mean = x
      weight = w
    }
  }
  out.mean[out.count] = mean
  out.weight[out.count++] = weight
  if (backwards) {
    out.mean.subarray(0, out.count).reverse()
    out.weight.subarray(0, out.count).reverse()
  }
  // Only the centroids are kept: the digest's memory stays about its compression.
  return { mean: out.mean.slice(0, out.count), weight: out.weight.slice(0, out.count), count: out.count }
}

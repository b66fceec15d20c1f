/**
 * OpenSearch's MovingFunctions, what a `moving_fn` script calls on its window of values: the
 * same formulas in the same order, so the last digits agree. Missing values (NaN) are ignored;
 * an empty window answers NaN (a sum 0).
 */
const present = (values: number[]) => values.filter((v) => !Number.isNaN(v))

export function max(values: number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((m, v) => Math.max(m, v))
}

export function min(values: number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((m, v) => Math.min(m, v))
}

export function sum(values: number[]): number {
  return present(values).reduce((s, v) => s + v, 0)
}

export function unweightedAvg(values: number[]): number {
  const known = present(values)
  return known.length === 0 ? Number.NaN : sum(known) / known.length
}

/** The population standard deviation around a given average. */
export function stdDev(values: number[], avg: number): number {
  if (Number.isNaN(avg)) return Number.NaN
  const known = present(values)
  return Math.sqrt(known.reduce((s, v) => s + Math.pow(v - avg, 2), 0) / known.length)
}

/** Older values weigh linearly less: the i-th (from 1) weighs i, over a total weight of 1 + 1 + ... + n. */
export function linearWeightedAvg(values: number[]): number {
  let avg = 0
  let totalWeight = 1
  let current = 1
  for (const v of present(values)) {
    avg += v * current
    totalWeight += current
    current++
  }
  return totalWeight === 1 ? Number.NaN : avg / totalWeight
}

export function ewma(values: number[], alpha: number): number {
  let avg = Number.NaN
  for (const v of present(values)) avg = Number.isNaN(avg) ? v : v * alpha + avg * (1 - alpha)
  return avg
}

/** Double exponential smoothing: level and trend. */
export function holt(values: number[], alpha: number, beta: number): number {
  let s = 0
  let b = 0
  let lastS = 0
  let lastB = 0
  let counter = 0
  for (const v of present(values)) {
    if (counter === 0) {
      s = v
      b = 0
    } else {
      s = alpha * v + (1 - alpha) * (lastS + lastB)
      b = beta * (s - lastS) + (1 - beta) * lastB
    }
    counter++
    lastS = s
    lastB = b
  }
  return counter === 0 ? Number.NaN : s
}

/** Triple exponential smoothing: level, trend and a season of `period` values (at least two seasons). */
export function holtWinters(values: number[], alpha: number, beta: number, gamma: number, period: number, multiplicative: boolean): number {
  if (values.length === 0) return Number.NaN
  if (values.length < period * 2)
    throw new RangeError(
      `Holt-Winters aggregation requires at least (2 * period == 2 * ${period} == ${2 * period}) data-points to function.  Only [${values.length}] were provided.`,
    )
  const padding = multiplicative ? 0.0000000001 : 0
  const vs = present(values).map((v) => v + padding)
  if (vs.length === 0) return Number.NaN
  // Java's arrays are zero-filled: the missing values' places read 0.
  while (vs.length < values.length) vs.push(0)
  let s = 0
  let b = 0
  for (let i = 0; i < period; i++) {
    s += vs[i]
    b += (vs[i + period] - vs[i]) / period
  }
  s /= period
  b /= period
  let lastS = s
  let lastB = 0
  const seasonal = new Array<number>(vs.length).fill(0)
  if (s !== 0) for (let i = 0; i < period; i++) seasonal[i] = vs[i] / s
  for (let i = period; i < vs.length; i++) {
    s = multiplicative
      ? alpha * (vs[i] / seasonal[i - period]) + (1 - alpha) * (lastS + lastB)
      : alpha * (vs[i] - seasonal[i - period]) + (1 - alpha) * (lastS + lastB)
    b = beta * (s - lastS) + (1 - beta) * lastB
    seasonal[i] = multiplicative
      ? gamma * (vs[i] / (lastS + lastB)) + (1 - gamma) * seasonal[i - period]
      : gamma * (vs[i] - (lastS - lastB)) + (1 - gamma) * seasonal[i - period]
    lastS = s
    lastB = b
  }
  const idx = values.length - period
  return multiplicative ? (s + b) * seasonal[idx] : s + b + seasonal[idx]
}

/** Edit distances for `fuzzy` (and `term~` in query strings): Damerau-Levenshtein, bounded. */
import { ParsingError } from '../errors'

/** OpenSearch's fuzziness: `AUTO` (0 edits up to 2 code points, 1 up to 5, then 2), `AUTO:lo,hi`, or 0, 1, 2. */
export function fuzzyEdits(fuzziness: unknown, value: string): number {
  const len = [...value].length
  if (fuzziness === undefined || fuzziness === null) return len <= 2 ? 0 : len <= 5 ? 1 : 2
  const text = String(fuzziness).toUpperCase()
  const auto = /^AUTO(?::(\d+),(\d+))?$/.exec(text)
  if (auto) {
    const lo = auto[1] === undefined ? 3 : Number(auto[1])
    const hi = auto[2] === undefined ? 6 : Number(auto[2])
    return len < lo ? 0 : len < hi ? 1 : 2
  }
  const n = Number(text)
  if (!Number.isFinite(n) || n < 0) throw new ParsingError(`failed to parse fuzziness [${String(fuzziness)}]`)
  // Lucene allows at most 2 edits.
  return Math.min(2, Math.floor(n))
}

/** True when `a` is within `max` edits of `b` (insertions, deletions, substitutions, and adjacent swaps). */
export function editDistanceWithin(a: string, b: string, max: number, transpositions = true): boolean {
  const x = [...a]
  const y = [...b]
  if (Math.abs(x.length - y.length) > max) return false
  let prev2: number[] = []
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j)
  for (let i = 1; i <= x.length; i++) {
    const cur = [i]
    let best = i
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1
      let v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
      if (transpositions && i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) v = Math.min(v, prev2[j - 2] + 1)
      cur.push(v)
      if (v < best) best = v
    }
    if (best > max) return false
    prev2 = prev
    prev = cur
  }
  return prev[y.length] <= max
}

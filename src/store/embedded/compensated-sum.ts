/**
 * OpenSearch's `CompensatedSum` (Kahan summation), which its sum, avg and stats aggregations use:
 * the same values give the same last digits as there (a plain running sum drifts, 1088.7800000000002
 * where OpenSearch answers 1088.78).
 *
 * Kahan's result still depends on the order of addition, and OpenSearch adds in document order
 * where the store may read a field's values sorted: longs near 2^53 summed to 246913664 here and to
 * 246913665 there. While every value is an integer of at most 2^53 the sum is also kept exactly
 * (in two doubles of 26-bit limbs), and answered rounded once: what Kahan's compensation reaches in
 * any order but the unlucky ones.
 */
const LIMB = 2 ** 26
/** Values an exact sum takes: each limb sum stays below 2^53. */
const EXACT_VALUES = 2 ** 26

export class CompensatedSum {
  private kahan = 0
  private delta = 0
  private high = 0
  private low = 0
  private exactValues = 0

  get value(): number {
    return this.exactValues >= 0 ? this.high * LIMB + this.low : this.kahan
  }

  add(v: number): void {
    if (this.exactValues >= 0) {
      if (Number.isSafeInteger(v) && this.exactValues < EXACT_VALUES) {
        const high = Math.floor(v / LIMB)
        this.high += high
        this.low += v - high * LIMB
        this.exactValues++
      } else this.exactValues = -1
    }
    // An infinite or NaN value makes the sum infinite or NaN, as there.
    if (!Number.isFinite(v)) this.kahan = v + this.kahan
    if (!Number.isFinite(this.kahan)) return
    const corrected = v + this.delta
    const updated = this.kahan + corrected
    this.delta = corrected - (updated - this.kahan)
    this.kahan = updated
  }
}

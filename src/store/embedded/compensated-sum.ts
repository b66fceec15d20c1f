/**
 * OpenSearch's `CompensatedSum` (Kahan summation), which its sum, avg and stats aggregations use:
 * the same values give the same last digits as there (a plain running sum drifts, 1088.7800000000002
 * where OpenSearch answers 1088.78).
 */
export class CompensatedSum {
  value = 0
  private delta = 0

  add(v: number): void {
    // An infinite or NaN value makes the sum infinite or NaN, as there.
    if (!Number.isFinite(v)) this.value = v + this.value
    if (!Number.isFinite(this.value)) return
    const corrected = v + this.delta
    const updated = this.value + corrected
    this.delta = corrected - (updated - this.value)
    this.value = updated
  }
}

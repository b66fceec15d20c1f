/** A double as Java's Double.toString writes it (1.0, 0.5, 1.0E7, 1.0E-4). */
export function javaDouble(n: number): string {
  if (Number.isNaN(n)) return 'NaN'
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity'
  const abs = Math.abs(n)
  if (abs !== 0 && (abs < 1e-3 || abs >= 1e7)) {
    const [mantissa, exponent] = n.toExponential().split('e')
    return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`
  }
  const s = String(n)
  return s.includes('.') ? s : `${s}.0`
}

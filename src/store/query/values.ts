/** A query's number and boolean values as OpenSearch's parsers read them. */

// Decimal text only, as Java's number parsing reads it (surrounding blanks allowed); JavaScript's
// Number() would also take hexadecimal, binary and octal literals.
const DECIMAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/

export const toNumber = (v: unknown): number | undefined => {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined
  if (typeof v === 'string' && DECIMAL.test(v)) {
    const n = Number(v)
    return Number.isFinite(n) ? n : undefined
  }
  return undefined
}

export const toBool = (v: unknown): boolean | undefined => {
  if (v === true || v === 'true') return true
  if (v === false || v === 'false' || v === '') return false
  return undefined
}

/**
 * Case folding for `case_insensitive` queries. OpenSearch expands each code point to its case
 * variants; folding both sides to one representative gives the same answers without automata.
 * Each code point maps to lower(upper(c)) when that stays a single code point (so σ/ς/Σ, ſ/s/S,
 * ẞ/ß meet), which is Unicode simple case folding for practically every script.
 */
const ASCII = /^[\x00-\x7f]*$/

/** Whether `s` holds ASCII code units only (folding, tokenising and the native regexps take a shorter path for it). */
export const isAscii = (s: string) => ASCII.test(s)

export function fold(s: string): string {
  if (isAscii(s)) return s.toLowerCase()
  let out = ''
  for (const ch of s) out += foldCodePoint(ch)
  return out
}

const memo = new Map<string, string>()

/** One code point (a string of one or two UTF-16 units, or a lone surrogate) folded as `fold` folds it. */
export function foldCodePoint(ch: string): string {
  let f = memo.get(ch)
  if (f !== undefined) return f
  const upper = ch.toUpperCase()
  const viaUpper = [...upper].length === 1 ? upper.toLowerCase() : ch.toLowerCase()
  f = [...viaUpper].length === 1 ? viaUpper : ch
  memo.set(ch, f)
  return f
}

/** Compare strings by code point (UTF-8 byte order), the order Lucene and SQLite BINARY use. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    // Surrogates (0xD800-0xDFFF) encode code points above 0xFFFF, so they sort after 0xE000-0xFFFF.
    const xs = x >= 0xd800 && x <= 0xdfff
    const ys = y >= 0xd800 && y <= 0xdfff
    if (xs !== ys) return xs ? 1 : -1
    return x - y
  }
  return a.length - b.length
}

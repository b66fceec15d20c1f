/**
 * The `standard` analyzer, approximately: Unicode word tokens (letters, digits, `_`, joined by
 * an inner `.` or `'` as UAX#29 does for `example.com` and `don't`), lower-cased.
 */
const WORD = /[\p{L}\p{N}\p{M}_]+(?:['.’][\p{L}\p{N}\p{M}_]+)*/gu

export function analyze(text: string): string[] {
  const ascii = analyzeAscii(text)
  if (ascii) return ascii
  const out: string[] = []
  for (const m of text.matchAll(WORD)) out.push(m[0].toLowerCase())
  return out
}

/** The `standard` tokenizer's tokens (not lower-cased) with their character offsets. */
export function standardTokens(text: string): Array<{ token: string; start: number; end: number }> {
  const out: Array<{ token: string; start: number; end: number }> = []
  for (const m of text.matchAll(WORD)) out.push({ token: m[0], start: m.index, end: m.index + m[0].length })
  return out
}

/** The `standard` analyzer's tokens with their character offsets (`_analyze`, highlighting). */
export function analyzeWithOffsets(text: string): Array<{ token: string; start: number; end: number }> {
  return standardTokens(text).map((t) => ({ ...t, token: t.token.toLowerCase() }))
}

/** [A-Za-z0-9_]: what WORD's classes hold below U+0080. */
const wordChar = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95

/**
 * WORD's tokens of an ASCII text without the Unicode regular expression (every document's text
 * fields are analysed on write, for the text index): undefined at the first non-ASCII character.
 */
function analyzeAscii(text: string): string[] | undefined {
  const out: string[] = []
  const n = text.length
  let i = 0
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c >= 128) return undefined
    if (!wordChar(c)) {
      i++
      continue
    }
    const start = i
    for (;;) {
      while (i < n && wordChar(text.charCodeAt(i))) i++
      // An inner `.` or `'` joins two runs of word characters.
      const j = text.charCodeAt(i)
      if ((j === 46 || j === 39) && i + 1 < n && wordChar(text.charCodeAt(i + 1))) i++
      else break
    }
    if (i < n && text.charCodeAt(i) >= 128) return undefined
    out.push(text.slice(start, i).toLowerCase())
  }
  return out
}

/**
 * The `standard` analyzer, approximately: Unicode word tokens (letters, digits, `_`, joined by
 * an inner `.` or `'` as UAX#29 does for `example.com` and `don't`), lower-cased.
 */
import { isAscii } from './fold'

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

/** WORD below U+0080, on lower-cased text: [a-z0-9_] runs joined by an inner `.` or `'`. */
const ASCII_WORD = /[a-z0-9_]+(?:[.'][a-z0-9_]+)*/g

/**
 * WORD's tokens of an ASCII text without the Unicode regular expression (every document's text
 * fields are analysed on write, for the text index): undefined when the text is not ASCII. One
 * lower-casing and one match of a plain pattern (JIT-compiled) instead of a loop over characters,
 * which was a third of a bulk ingest of 1 KB texts.
 */
function analyzeAscii(text: string): string[] | undefined {
  if (!isAscii(text)) return undefined
  return text.toLowerCase().match(ASCII_WORD) ?? []
}

const SEPARATORS = /[^a-z0-9]+/g

/**
 * analyze(text).join(' ') and the number of tokens, without a token array, for the common text:
 * ASCII without `_`, `.` or `'` (the characters ASCII_WORD joins runs with), whose tokens are then
 * its runs of letters and digits. One pass over the characters counts the runs; one native replace
 * writes the separators (`separator`, ' ' by default; no `$` in it, which replace would read as a
 * pattern). Undefined for any other text (analyze it). The text index stores every
 * document's text fields this way (store/embedded/text-index.ts).
 */
export function plainTokensJoined(text: string, separator = ' '): [joined: string, count: number] | undefined {
  let count = 0
  let inWord = false
  let first = -1
  let last = -1
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    const word = (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90)
    if (!word && (c >= 128 || c === 95 || c === 46 || c === 39)) return undefined
    if (word) {
      if (!inWord) count++
      if (first < 0) first = i
      last = i
    }
    inWord = word
  }
  if (count === 0) return ['', 0]
  // The runs between the first and the last token only: no trim, and the caller's separator written
  // by the same replace (the text index's ` <field id>_`, no second pass to prefix each token).
  return [
    text
      .slice(first, last + 1)
      .toLowerCase()
      .replace(SEPARATORS, separator),
    count,
  ]
}

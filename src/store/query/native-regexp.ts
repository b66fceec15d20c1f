/**
 * JavaScript's own RegExp for the RE2 patterns it provably runs in linear time, on ASCII values:
 * re2js's automaton reads about 9 ns a character in JavaScript, the native engine a fraction of
 * that (SigmaHQ's `CommandLine|re` rules were 45% of the rule evaluation of 2,407 Windows rules).
 *
 * A backtracking engine is linear on a pattern when it never has a choice worth backtracking
 * into. Accepted here: one or more branches (`|` at the top only), each a sequence of atoms (a
 * character, an escape, a class, `.`), each at most once quantified, `^` first and `$` last, where
 *  - every quantified atom (`*`, `+`, `?`, `{n,}`, `{n,m}`) reads a character set disjoint from
 *    the atoms on both sides of it: a run it took can only end where the next atom cannot match,
 *    so giving back a character fails at once;
 *  - a branch starts with an unquantified atom whose set is disjoint from every quantified atom's
 *    (or with `^`): no attempt starts inside a run another attempt read.
 * Each (position, atom) pair is then reached by one attempt at most: O(value × pattern) steps,
 * like RE2. Everything else (groups, back-references, look-arounds, lazy quantifiers, `\b`,
 * Unicode classes, non-ASCII characters) stays with RE2. On ASCII values only, so Unicode case
 * folding and RE2's ASCII-only `\s`, `\w` and `\d` read the same in both engines.
 */

/** A set of ASCII code units. */
type Chars = Uint8Array

const ASCII = 128
const WORD = charsOf((c) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95)
const DIGIT = charsOf((c) => c >= 48 && c <= 57)
// RE2's \s: [\t\n\f\r ] (no \v, unlike JavaScript's).
const SPACE = charsOf((c) => c === 9 || c === 10 || c === 12 || c === 13 || c === 32)
const CONTROL_ESCAPES: Record<string, number> = { t: 9, n: 10, f: 12, r: 13, v: 11, a: 7 }

function charsOf(has: (c: number) => boolean): Chars {
  const s = new Uint8Array(ASCII)
  for (let c = 0; c < ASCII; c++) s[c] = has(c) ? 1 : 0
  return s
}
const not = (s: Chars) => charsOf((c) => s[c] === 0)
const disjoint = (a: Chars, b: Chars) => a.every((x, c) => x === 0 || b[c] === 0)
const one = (c: number) => charsOf((x) => x === c)
const folded = (s: Chars) =>
  charsOf((c) => s[c] === 1 || (c >= 65 && c <= 90 && s[c + 32] === 1) || (c >= 97 && c <= 122 && s[c - 32] === 1))

interface Item {
  /** The characters it reads (before case folding), or an anchor. */
  chars: Chars | '^' | '$'
  /** Its text in a JavaScript pattern. */
  js: string
  variable: boolean
}

/** Why a pattern is left to RE2 (never shown: the pattern simply runs there). */
class Unsupported extends Error {}

/** The class (or single character) of an escape `\x` at `src[at]` (the character after the backslash). */
function escapeAt(src: string, at: number): { chars: Chars; next: number } {
  const e = src[at]
  if (e === undefined) throw new Unsupported()
  if (e === 'd' || e === 'D') return { chars: e === 'd' ? DIGIT : not(DIGIT), next: at + 1 }
  if (e === 's' || e === 'S') return { chars: e === 's' ? SPACE : not(SPACE), next: at + 1 }
  if (e === 'w' || e === 'W') return { chars: e === 'w' ? WORD : not(WORD), next: at + 1 }
  if (e in CONTROL_ESCAPES) return { chars: one(CONTROL_ESCAPES[e]), next: at + 1 }
  if (e === 'x' && /^[0-9A-Fa-f]{2}$/.test(src.slice(at + 1, at + 3))) {
    const c = parseInt(src.slice(at + 1, at + 3), 16)
    if (c >= ASCII) throw new Unsupported()
    return { chars: one(c), next: at + 3 }
  }
  // A quoted punctuation character; letters and digits are classes, anchors or references.
  const c = e.charCodeAt(0)
  if (c < ASCII && !/[0-9A-Za-z]/.test(e)) return { chars: one(c), next: at + 1 }
  throw new Unsupported()
}

/**
 * The class `[...]` opening at `src[at]`. Ignoring case, a negated class leaves out both cases of
 * what it lists (RE2 folds before it negates; JavaScript would fold the complement).
 */
function classAt(src: string, at: number, caseInsensitive: boolean): { chars: Chars; next: number } {
  let i = at + 1
  const negated = src[i] === '^'
  if (negated) i++
  const set = new Uint8Array(ASCII)
  let first = true
  for (;;) {
    const ch = src[i]
    if (ch === undefined || (ch === '[' && src[i + 1] === ':')) throw new Unsupported()
    if (ch === ']' && !first) break
    first = false
    let lo: Chars
    ;({ chars: lo, next: i } = ch === '\\' ? escapeAt(src, i + 1) : { chars: literal(ch), next: i + 1 })
    const single = lo.reduce((n, x) => n + x, 0) === 1 ? lo.indexOf(1) : -1
    if (src[i] === '-' && src[i + 1] !== ']' && single >= 0) {
      const hiCh = src[i + 1]
      if (hiCh === undefined) throw new Unsupported()
      const { chars: hi, next } = hiCh === '\\' ? escapeAt(src, i + 2) : { chars: literal(hiCh), next: i + 2 }
      const top = hi.reduce((n, x) => n + x, 0) === 1 ? hi.indexOf(1) : -1
      if (top < single) throw new Unsupported()
      for (let c = single; c <= top; c++) set[c] = 1
      i = next
    } else lo.forEach((x, c) => x && (set[c] = 1))
  }
  return { chars: negated ? not(caseInsensitive ? folded(set) : set) : set, next: i + 1 }
}

function literal(ch: string): Chars {
  const c = ch.charCodeAt(0)
  if (c >= ASCII) throw new Unsupported()
  return one(c)
}

/** A JavaScript class for a set (an exact one: every character listed by code). */
function jsClass(s: Chars): string {
  let out = ''
  for (let c = 0; c < ASCII; c++) {
    if (!s[c]) continue
    let end = c
    while (end + 1 < ASCII && s[end + 1]) end++
    const hex = (x: number) => `\\x${x.toString(16).padStart(2, '0')}`
    out += end > c ? `${hex(c)}-${hex(end)}` : hex(c)
    c = end
  }
  return out === '' ? '[^\\x00-\\uffff]' : `[${out}]`
}

/** The quantifier at `src[at]` (empty when none), refusing lazy and possessive forms. */
function quantifierAt(src: string, at: number): { text: string; variable: boolean; next: number } {
  const ch = src[at]
  let text = ''
  let variable = false
  if (ch === '*' || ch === '+' || ch === '?') ((text = ch), (variable = true))
  else if (ch === '{') {
    const m = /^\{(\d{1,4})(,(\d{0,4}))?\}/.exec(src.slice(at))
    if (!m) throw new Unsupported()
    text = m[0]
    variable = m[2] !== undefined && m[3] !== m[1]
    if (m[3] !== undefined && m[3] !== '' && Number(m[3]) < Number(m[1])) throw new Unsupported()
  }
  const next = at + text.length
  if (text !== '' && (src[next] === '?' || src[next] === '+' || src[next] === '*' || src[next] === '{')) throw new Unsupported()
  return { text, variable, next }
}

function branchItems(src: string, o: NativeOptions): Item[] {
  const items: Item[] = []
  let i = 0
  while (i < src.length) {
    const ch = src[i]
    if (ch === '^' || ch === '$') {
      if ((ch === '^' && i !== 0) || (ch === '$' && i !== src.length - 1)) throw new Unsupported()
      items.push({ chars: ch, js: ch, variable: false })
      i++
      continue
    }
    if ('()|*+?{}'.includes(ch)) throw new Unsupported()
    let chars: Chars
    if (ch === '\\') ({ chars, next: i } = escapeAt(src, i + 1))
    else if (ch === '[') ({ chars, next: i } = classAt(src, i, o.caseInsensitive === true))
    else if (ch === '.') ((chars = o.dotAll ? charsOf(() => true) : not(one(10))), i++)
    else ((chars = literal(ch)), i++)
    const q = quantifierAt(src, i)
    i = q.next
    items.push({ chars, js: jsClass(chars) + q.text, variable: q.variable })
  }
  return items
}

/** Whether a branch's backtracking is linear (see the module comment), its sets folded when case is ignored. */
function linear(items: Item[], caseInsensitive: boolean): boolean {
  const sets = items.map((it) => (typeof it.chars === 'string' ? it.chars : caseInsensitive ? folded(it.chars) : it.chars))
  const starts = items.findIndex((it) => it.chars !== '^')
  if (starts === -1) return true
  const anchored = starts > 0
  const first = sets[starts]
  if (!anchored && (items[starts].variable || typeof first === 'string')) return items.length === starts + 1 && first === '$'
  for (let k = starts; k < items.length; k++) {
    if (!items[k].variable) continue
    const mine = sets[k] as Chars
    if (!anchored && !disjoint(first as Chars, mine)) return false
    for (const n of [sets[k - 1], sets[k + 1]]) if (n !== undefined && typeof n !== 'string' && !disjoint(n, mine)) return false
  }
  return true
}

/** Splits at the top-level `|` (none inside classes or escapes: those are read by branchItems). */
function branches(src: string): string[] {
  const out: string[] = []
  let start = 0
  for (let i = 0; i < src.length; i++) {
    if (src[i] === '\\') i++
    else if (src[i] === '[') {
      // Past the class: its first `]` closes it unless it is the first character.
      i += src[i + 1] === '^' ? 2 : 1
      if (src[i] === ']') i++
      while (i < src.length && src[i] !== ']') i += src[i] === '\\' ? 2 : 1
    } else if (src[i] === '|') (out.push(src.slice(start, i)), (start = i + 1))
  }
  out.push(src.slice(start))
  return out
}

export interface NativeOptions {
  anchored: boolean
  caseInsensitive?: boolean
  dotAll?: boolean
  multiline?: boolean
}

/**
 * A test equal to RE2's for ASCII values, or undefined when the pattern is not one this module
 * proves linear (the caller keeps RE2 for it, and for every value with a non-ASCII character).
 */
export function nativeTest(source: string, o: NativeOptions): ((ascii: string) => boolean) | undefined {
  if (o.multiline || source.length > 1000) return undefined
  // A leading `(?i)` (how Sigma rules ask to ignore case) is the flag; any other group stays with RE2.
  if (source.startsWith('(?i)')) return nativeTest(source.slice(4), { ...o, caseInsensitive: true })
  let parts: Item[][]
  try {
    parts = branches(source).map((b) => branchItems(b, o))
  } catch (e) {
    if (e instanceof Unsupported) return undefined
    throw e
  }
  if (parts.length === 0 || !parts.every((p) => linear(p, o.caseInsensitive === true))) return undefined
  const body = parts.map((p) => p.map((it) => it.js).join('')).join('|')
  const re = new RegExp(o.anchored ? `^(?:${body})$` : body, o.caseInsensitive ? 'i' : '')
  return (s) => re.test(s)
}

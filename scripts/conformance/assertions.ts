/**
 * The assertion steps with the Java harness's semantics: `is_true` goes by the value's text
 * form, numbers compare across int/long/double, and `/regex/` expectations are compiled with
 * Java's COMMENTS flag (which JavaScript lacks, so whitespace and `#` comments are stripped here).
 */

export class AssertionFailure extends Error {}

/** Java's `String.valueOf` for what JSON can hold; decides `is_true`/`is_false`. */
function javaText(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : String(value)
  if (typeof value === 'boolean') return String(value)
  return JSON.stringify(value)
}

export function isTrue(value: unknown): boolean {
  if (value === null || value === undefined) return false
  const text = javaText(value)
  return !(text === '' || text.toLowerCase() === 'false' || text === '0')
}

/**
 * Removes what Java's COMMENTS mode ignores: unescaped whitespace and `#` to end of line.
 * Also rewrites Java's possessive `*+` (not valid JavaScript) to a plain `*`.
 */
export function javaCommentsRegex(source: string): string {
  let out = ''
  for (let i = 0; i < source.length; i++) {
    const c = source[i]
    if (c === '\\' && i + 1 < source.length) {
      out += c + source[i + 1]
      i++
      continue
    }
    if (c === '#') {
      while (i < source.length && source[i] !== '\n') i++
      continue
    }
    if (/\s/.test(c)) continue
    out += c
  }
  return possessiveToGreedy(out)
}

export function possessiveToGreedy(source: string): string {
  return source.replace(/(?<!\\)([*+?}])\+/g, '$1')
}

/** A find (not a full match), where Java's `$` also matches before one final newline. */
export function regexFinds(pattern: RegExp, text: string): boolean {
  if (pattern.test(text)) return true
  return text.endsWith('\n') && pattern.test(text.slice(0, -1))
}

export function isRegexExpectation(expected: unknown): expected is string {
  if (typeof expected !== 'string') return false
  const t = expected.trim()
  return t.length >= 2 && t.startsWith('/') && t.endsWith('/')
}

export function compileJavaCommentsRegex(expected: string): RegExp {
  const t = expected.trim()
  return new RegExp(javaCommentsRegex(t.slice(1, -1)))
}

function numeric(v: unknown): v is number {
  return typeof v === 'number'
}

/** Deep equality: maps ignore key order, lists are ordered, numbers compare by value. */
export function deepEqual(actual: unknown, expected: unknown): boolean {
  if (numeric(actual) && numeric(expected)) return actual === expected
  if (expected === null || expected === undefined) return actual === null || actual === undefined
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => deepEqual(actual[i], e))
  }
  if (typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false
    const a = actual as Record<string, unknown>
    const e = expected as Record<string, unknown>
    const ak = Object.keys(a)
    const ek = Object.keys(e)
    return ak.length === ek.length && ek.every((k) => Object.prototype.hasOwnProperty.call(a, k) && deepEqual(a[k], e[k]))
  }
  return actual === expected
}

const show = (v: unknown) => (v === undefined ? '<absent>' : JSON.stringify(v))

export function assertMatch(path: string, actual: unknown, expected: unknown): void {
  if (isRegexExpectation(expected)) {
    if (typeof actual !== 'string')
      throw new AssertionFailure(`match [${path}]: expected a string matching ${expected.trim()}, got ${show(actual)}`)
    if (!regexFinds(compileJavaCommentsRegex(expected), actual)) {
      throw new AssertionFailure(`match [${path}]: ${show(actual)} does not match ${expected.trim()}`)
    }
    return
  }
  if (!deepEqual(actual, expected)) throw new AssertionFailure(`match [${path}]: expected ${show(expected)}, got ${show(actual)}`)
}

function comparable(v: unknown, path: string, what: string): number | string {
  if (typeof v === 'number' || typeof v === 'string') return v
  throw new AssertionFailure(`${what} [${path}]: value ${show(v)} is not comparable`)
}

export function assertCompare(kind: 'gt' | 'gte' | 'lt' | 'lte', path: string, actual: unknown, expected: unknown): void {
  const a = comparable(actual, path, kind)
  const e = comparable(expected, path, kind)
  if (typeof a !== typeof e) throw new AssertionFailure(`${kind} [${path}]: cannot compare ${show(actual)} with ${show(expected)}`)
  const ok = kind === 'gt' ? a > e : kind === 'gte' ? a >= e : kind === 'lt' ? a < e : a <= e
  if (!ok) throw new AssertionFailure(`${kind} [${path}]: ${show(actual)} is not ${kind} ${show(expected)}`)
}

export function assertLength(path: string, actual: unknown, expected: unknown): void {
  let n: number
  if (typeof actual === 'string' || Array.isArray(actual)) n = actual.length
  else if (actual !== null && typeof actual === 'object') n = Object.keys(actual).length
  else throw new AssertionFailure(`length [${path}]: ${show(actual)} has no length`)
  if (n !== Number(expected)) throw new AssertionFailure(`length [${path}]: expected ${show(expected)}, got ${n}`)
}

export function assertContains(path: string, actual: unknown, expected: unknown): void {
  if (!Array.isArray(actual)) throw new AssertionFailure(`contains [${path}]: ${show(actual)} is not a list`)
  const found = actual.some((item) => {
    if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
      if (item === null || typeof item !== 'object') return false
      return Object.entries(expected).every(([k, v]) => deepEqual((item as Record<string, unknown>)[k], v))
    }
    return deepEqual(item, expected)
  })
  if (!found) throw new AssertionFailure(`contains [${path}]: ${show(expected)} not found in ${show(actual)}`)
}

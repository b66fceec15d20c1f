/**
 * The one regular-expression engine of the evaluator: RE2 (the `re2js` port), whose matching time
 * is linear in the input for every pattern. JavaScript's backtracking RegExp is never given a
 * caller's pattern: `(a+)+` against a 31-character value took seconds there and stalled the node.
 * Lucene `regexp`, `wildcard` and Sigma `re` (`_pcre`) all compile through here; the patterns
 * JavaScript's engine provably runs in linear time run there on ASCII values (native-regexp.ts).
 */
import { RE2JS } from 're2js'
import { IllegalArgument } from '../errors'
import { isAscii } from './fold'
import { nativeTest } from './native-regexp'

export interface Matcher {
  test(value: string): boolean
}

export interface LinearOptions {
  /** Whole-value match (Lucene, wildcard) instead of a substring search (PCRE). */
  anchored: boolean
  caseInsensitive?: boolean
  /** `.` matches line terminators too. */
  dotAll?: boolean
  /** `^`/`$` match at line boundaries. */
  multiline?: boolean
  /** Quoted into the error message: the caller's own pattern. */
  display?: string
}

/** Compile RE2 syntax; a pattern RE2 refuses (look-arounds, back-references, repeats over 1,000) is a 400. */
export function linearRegExp(source: string, o: LinearOptions): Matcher {
  let flags = 0
  if (o.caseInsensitive) flags |= RE2JS.CASE_INSENSITIVE
  if (o.dotAll) flags |= RE2JS.DOTALL
  if (o.multiline) flags |= RE2JS.MULTILINE
  let re: RE2JS
  try {
    re = RE2JS.compile(source, flags)
  } catch (e) {
    throw new IllegalArgument(`failed to parse regexp [${o.display ?? source}]: ${(e as Error).message}`)
  }
  const re2: (s: string) => boolean = o.anchored ? (s) => re.matches(s) : (s) => re.test(s)
  // The native engine where it is provably linear too, on the values it reads as RE2 does.
  const native = nativeTest(source, o)
  return native ? { test: (s) => (isAscii(s) ? native(s) : re2(s)) } : { test: re2 }
}

/** A JavaScript (PCRE-ish) pattern in RE2 syntax: `[^]`, `\uXXXX`, `\cX` and named groups rewritten. */
export function fromJavaScript(pattern: string): string {
  try {
    return RE2JS.translateRegExp(pattern)
  } catch (e) {
    throw new IllegalArgument(`invalid regular expression [${pattern}]: ${(e as Error).message}`)
  }
}

/** Literal text in RE2 syntax. */
export function quote(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')
}

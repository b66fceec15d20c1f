import { fold } from './fold'
import { linearRegExp, quote } from './linear-regexp'
import { prefixMatcher, type StringMatcher, suffixMatcher } from './affixes'

export type { StringMatcher }

/**
 * OpenSearch `wildcard` as a whole-value matcher: `*` any run of code points (newlines too),
 * `?` exactly one code point, `\` escapes the next character. Patterns made only of literals and
 * `*` (all Sigma contains/startswith/endswith) run on indexOf (greedy leftmost, linear); the rest
 * on the linear-time engine.
 * With `caseInsensitive` the returned matcher expects an already folded value (see `fold`).
 */
export function wildcardMatcher(pattern: string, caseInsensitive = false): StringMatcher {
  const parts: string[] = [] // literals, separated by '*' positions
  const tokens: Array<string | { any: true } | { one: true }> = []
  let lit = ''
  let hasOne = false
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === '\\' && i + 1 < pattern.length) {
      lit += pattern[++i]
    } else if (c === '*') {
      tokens.push(lit, { any: true })
      lit = ''
    } else if (c === '?') {
      tokens.push(lit, { one: true })
      lit = ''
      hasOne = true
    } else lit += c
  }
  tokens.push(lit)
  const norm = (s: string) => (caseInsensitive ? fold(s) : s)

  if (!hasOne) {
    let cur = ''
    for (const t of tokens) {
      if (typeof t === 'string') cur += norm(t)
      else {
        parts.push(cur)
        cur = ''
      }
    }
    parts.push(cur)
    if (parts.length === 1) {
      const whole = parts[0]
      return (v) => v === whole
    }
    const first = parts[0]
    const last = parts[parts.length - 1]
    const middle = parts.slice(1, -1).filter((p) => p !== '')
    const min = first.length + last.length
    if (middle.length === 0) {
      const pre = prefixMatcher(first)
      const suf = suffixMatcher(last)
      if (last === '') return pre
      if (first === '') return suf
      return (v) => v.length >= min && pre(v) && suf(v)
    }
    if (middle.length === 1 && first === '' && last === '') {
      const m = middle[0]
      return (v) => v.includes(m)
    }
    return (v) => {
      if (v.length < min || !v.startsWith(first) || !v.endsWith(last)) return false
      let pos = first.length
      const end = v.length - last.length
      for (const m of middle) {
        const at = v.indexOf(m, pos)
        if (at < 0 || at + m.length > end) return false
        pos = at + m.length
      }
      return true
    }
  }
  let src = ''
  for (const t of tokens) {
    if (typeof t === 'string') src += quote(norm(t))
    else src += 'any' in t ? '.*' : '.'
  }
  const re = linearRegExp(src, { anchored: true, dotAll: true, display: pattern })
  return (v) => re.test(v)
}

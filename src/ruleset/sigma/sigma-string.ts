/**
 * Sigma string values: the rule text parsed into literal runs, wildcards and (under `expand`)
 * placeholders, following pySigma's escaping: `\*`, `\?`, `\\` escape; a backslash before any
 * other character (or at the end) is literal.
 */
export const ANY = Symbol('*')
export const ONE = Symbol('?')
export interface Placeholder {
  placeholder: string
}
export type Part = string | typeof ANY | typeof ONE | Placeholder

export interface SigmaString {
  kind: 'str'
  parts: Part[]
  /** Literal runs hold bytes (one char per byte) after a utf16 modifier: base64 must not re-encode them as UTF-8. */
  bytes: boolean
}

export function parseSigmaString(text: string, placeholders = false): SigmaString {
  const parts: Part[] = []
  let run = ''
  const flush = () => {
    if (run !== '') parts.push(run)
    run = ''
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '\\') {
      const next = text[i + 1]
      if (next === '*' || next === '?' || next === '\\' || (placeholders && next === '%')) {
        run += next
        i++
      } else run += c
    } else if (c === '*' || c === '?') {
      flush()
      parts.push(c === '*' ? ANY : ONE)
    } else if (placeholders && c === '%') {
      const end = text.indexOf('%', i + 1)
      const name = end > i + 1 ? text.slice(i + 1, end) : ''
      if (/^[\w-]+$/.test(name)) {
        flush()
        parts.push({ placeholder: name })
        i = end
      } else run += c
    } else run += c
  }
  flush()
  return { kind: 'str', parts, bytes: false }
}

export const literal = (text: string): SigmaString => ({ kind: 'str', parts: text === '' ? [] : [text], bytes: false })

export const isWildcard = (p: Part): p is typeof ANY | typeof ONE => p === ANY || p === ONE

export const hasWildcards = (s: SigmaString) => s.parts.some(isWildcard)

export const placeholdersOf = (s: SigmaString) => s.parts.filter((p): p is Placeholder => typeof p === 'object').map((p) => p.placeholder)

/** The literal text of a value without wildcards. */
export const plainText = (s: SigmaString) => s.parts.map((p) => (typeof p === 'string' ? p : '')).join('')

export function withPrefixAny(s: SigmaString): SigmaString {
  return s.parts[0] === ANY ? s : { ...s, parts: [ANY, ...s.parts] }
}

export function withSuffixAny(s: SigmaString): SigmaString {
  return s.parts[s.parts.length - 1] === ANY ? s : { ...s, parts: [...s.parts, ANY] }
}

/** OpenSearch wildcard syntax: `\` escapes the three special characters in literal runs. */
export function toWildcardPattern(s: SigmaString): string {
  return s.parts.map((p) => (p === ANY ? '*' : p === ONE ? '?' : typeof p === 'string' ? p.replace(/[\\*?]/g, '\\$&') : '')).join('')
}

/** Only strings with cased letters need `case_insensitive` (numeric fields reject the flag). */
export const hasCasedLetters = (text: string) => text.toLowerCase() !== text.toUpperCase()

/** Merges adjacent literal runs (expansions can leave them split). */
export function normalise(parts: Part[]): Part[] {
  const out: Part[] = []
  for (const p of parts) {
    if (typeof p === 'string') {
      if (p === '') continue
      if (typeof out[out.length - 1] === 'string') out[out.length - 1] = (out[out.length - 1] as string) + p
      else out.push(p)
    } else out.push(p)
  }
  return out
}

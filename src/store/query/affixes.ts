/**
 * Prefix and suffix tests that compare one code unit inline before calling startsWith/endsWith
 * (a call into the runtime): the prefix's last unit, or the suffix's first, at its place in the
 * value. Nearly every value fails there: SigmaHQ's exclusion filters test dozens of paths
 * (`C:\Windows\System32\`, `\svchost.exe`...) against every process event's image.
 */
/** A test of a string value (wildcard.ts builds the general ones). */
export type StringMatcher = (value: string) => boolean

export function prefixMatcher(p: string): StringMatcher {
  if (p === '') return () => true
  const at = p.length - 1
  const unit = p.charCodeAt(at)
  // Past the value's end charCodeAt is NaN: a shorter value fails the comparison.
  return (v) => v.charCodeAt(at) === unit && v.startsWith(p)
}

export function suffixMatcher(s: string): StringMatcher {
  if (s === '') return () => true
  const unit = s.charCodeAt(0)
  return (v) => v.charCodeAt(v.length - s.length) === unit && v.endsWith(s)
}

/** Whether a value starts with one of `prefixes`. */
export function anyPrefix(prefixes: readonly string[]): StringMatcher {
  if (prefixes.length === 1) return prefixMatcher(prefixes[0])
  const at = prefixes.map((p) => p.length - 1)
  const units = prefixes.map((p, i) => p.charCodeAt(at[i]))
  return (v) => {
    for (let i = 0; i < prefixes.length; i++) if ((at[i] < 0 || v.charCodeAt(at[i]) === units[i]) && v.startsWith(prefixes[i])) return true
    return false
  }
}

/** Whether a value ends with one of `suffixes`. */
export function anySuffix(suffixes: readonly string[]): StringMatcher {
  if (suffixes.length === 1) return suffixMatcher(suffixes[0])
  const units = suffixes.map((s) => s.charCodeAt(0))
  return (v) => {
    for (let i = 0; i < suffixes.length; i++) {
      const s = suffixes[i]
      if ((s === '' || v.charCodeAt(v.length - s.length) === units[i]) && v.endsWith(s)) return true
    }
    return false
  }
}

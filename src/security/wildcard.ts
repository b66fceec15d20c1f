/**
 * Pattern matching as the platform's security plugin does it (WildcardMatcher):
 * `*` is any run of characters, `?` is one character, and a pattern written
 * `/.../` is a regular expression that must match the whole string. Everything
 * else is literal, so dots and slashes in action names need no escaping.
 */
export type Matcher = (value: string) => boolean

const cache = new Map<string, Matcher>()
const CACHE_LIMIT = 10_000

export function isPattern(pattern: string): boolean {
  return pattern.includes('*') || pattern.includes('?') || isRegexPattern(pattern)
}

function isRegexPattern(pattern: string): boolean {
  return pattern.length > 1 && pattern.startsWith('/') && pattern.endsWith('/')
}

function compile(pattern: string): Matcher {
  if (pattern === '*') return () => true
  if (isRegexPattern(pattern)) {
    let re: RegExp
    try {
      re = new RegExp(`^(?:${pattern.slice(1, -1)})$`)
    } catch {
      // A broken regex grants nothing rather than failing every request.
      return () => false
    }
    return (v) => re.test(v)
  }
  if (!isPattern(pattern)) return (v) => v === pattern
  const src = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.')
  const re = new RegExp(`^${src}$`, 's')
  return (v) => re.test(v)
}

export function matcher(pattern: string): Matcher {
  let m = cache.get(pattern)
  if (!m) {
    m = compile(pattern)
    if (cache.size >= CACHE_LIMIT) cache.clear()
    cache.set(pattern, m)
  }
  return m
}

export function matches(pattern: string, value: string): boolean {
  return matcher(pattern)(value)
}

/** Validates a pattern from a config file: returns an error text for a broken `/regex/`. */
export function patternError(pattern: string): string | undefined {
  if (!isRegexPattern(pattern)) return undefined
  try {
    new RegExp(pattern.slice(1, -1))
    return undefined
  } catch (e) {
    return `invalid regular expression ${pattern}: ${(e as Error).message}`
  }
}

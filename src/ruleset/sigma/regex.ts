/**
 * `re` values. The evaluator runs the original pattern with JavaScript substring (search)
 * semantics (`_pcre`); OpenSearch gets a Lucene translation that accepts the same strings.
 * Lucene regexes match the whole value and have no anchors, look-arounds, lazy quantifiers or
 * inline flags, so: unanchored ends get `.*`, outer anchors are dropped, shorthand classes are
 * spelled out with JavaScript's definitions, `.` excludes line terminators unless `s`.
 * Zero-width assertions Lucene cannot say (word boundaries `\b` `\B`, anchors inside the pattern)
 * are left out of the translation, which then accepts a superset: the leaf is marked
 * (`_pcre.superset`) and the platform adapter evaluates the original on the fetched documents.
 * What JavaScript and the spec's flavour do not share (look-arounds, back-references, possessive
 * quantifiers) is refused.
 */
import { SigmaInvalid, SigmaUnsupported } from './errors'
import type { Pcre } from './dsl'

export type RegexFlag = 'i' | 'm' | 's'

export interface CompiledRegex {
  lucene: string
  pcre: Pcre
  caseInsensitive: boolean
  /** The Lucene translation accepts exactly the strings the pattern finds a match in. */
  exact: boolean
}

export const MAX_LUCENE_REGEX = 1000

const LINE_TERMINATORS = '\n\r\u2028\u2029'
// JavaScript's own definitions (ECMAScript WhiteSpace + LineTerminator for \s).
const SPACE = '\t\n\u000b\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff'
const CLASS_BODY: Record<string, string> = { d: '0-9', w: 'A-Za-z0-9_', s: SPACE }
const CONTROL: Record<string, string> = { n: '\n', r: '\r', t: '\t', f: '\f', v: '\u000b', '0': '\0' }

const unsupported = (what: string, pattern: string) =>
  new SigmaUnsupported(`regex ${what}`, `cannot be expressed as an OpenSearch regexp: ${pattern}`)

/** Lucene takes `\` + any character as that character; escaping every non-alphanumeric is safe. */
const lit = (c: string) => (/[\p{L}\p{N}]/u.test(c) || c.charCodeAt(0) > 0x7f ? c : `\\${c}`)
// Inside a class, the spelled-out bodies use `-` as a range operator: escape only the single characters.
const litClassBody = (body: string) => body.replace(/[\t\n\u000b\f\r ]/g, (c) => `\\${c}`)

export function compileRegex(raw: string, modifierFlags: Set<RegexFlag>): CompiledRegex {
  let pattern = raw
  const flags = new Set(modifierFlags)
  // A leading inline group like `(?i)` is the old way to say `|i`; JavaScript only has flags.
  const inline = /^\(\?([ims]+)\)/.exec(pattern)
  if (inline) {
    for (const f of inline[1]) flags.add(f as RegexFlag)
    pattern = pattern.slice(inline[0].length)
  }
  const jsFlags = ['i', 'm', 's'].filter((f) => flags.has(f as RegexFlag)).join('')
  try {
    new RegExp(pattern, jsFlags)
  } catch (e) {
    throw new SigmaInvalid("modifier 're'", (e as Error).message)
  }
  const { lucene, exact } = translate(pattern, flags)
  if (lucene.length > MAX_LUCENE_REGEX) throw unsupported(`longer than ${MAX_LUCENE_REGEX} characters once translated`, raw)
  return { lucene, pcre: { pattern, flags: jsFlags, ...(exact ? {} : { superset: true }) }, caseInsensitive: flags.has('i'), exact }
}

/** `A-Z` for `a-z` (and the reverse): a range of ASCII letters of one case in the other; else nothing. */
function otherCaseRange(from: string, to: string): string {
  const lower = /^[a-z]$/
  const upper = /^[A-Z]$/
  if (lower.test(from) && lower.test(to)) return `${from.toUpperCase()}-${to.toUpperCase()}`
  if (upper.test(from) && upper.test(to)) return `${from.toLowerCase()}-${to.toLowerCase()}`
  return ''
}

function translate(pattern: string, flags: Set<RegexFlag>): { lucene: string; exact: boolean } {
  const dot = flags.has('s') ? '.' : `[^${LINE_TERMINATORS}]`
  const alternatives: string[] = []
  let out = ''
  let depth = 0
  let startAnchored = false
  let atStart = true // nothing emitted yet in this top-level alternative
  let endAnchored = false
  // Set when a zero-width assertion is left out: the translation then accepts a superset.
  let exact = true
  let i = 0

  const finishAlternative = () => {
    const lt = `[${LINE_TERMINATORS}]`
    const head = startAnchored ? (flags.has('m') ? `(.*${lt})?` : '') : '.*'
    const tail = endAnchored ? (flags.has('m') ? `(${lt}.*)?` : '') : '.*'
    alternatives.push(head + out + tail)
    out = ''
    startAnchored = endAnchored = false
    atStart = true
  }

  const quantifierFollows = () => {
    // Lazy `?` changes which match is found, never whether one is: drop it. Possessive can change it.
    if (pattern[i] === '?') i++
    else if (pattern[i] === '+') throw unsupported('possessive quantifier', pattern)
  }

  while (i < pattern.length) {
    const c = pattern[i]
    i++
    switch (c) {
      case '\\':
        out += escape()
        break
      case '[':
        out += charClass()
        break
      case '.':
        out += dot
        break
      case '^':
        if (depth > 0 || !atStart) exact = false
        else startAnchored = true
        break
      case '$':
        // Only a `$` that ends a top-level alternative is an outer anchor.
        if (depth === 0 && (i === pattern.length || pattern[i] === '|')) endAnchored = true
        else exact = false
        break
      case '|':
        if (depth === 0) {
          finishAlternative()
          continue
        }
        out += '|'
        break
      case '(':
        out += group()
        break
      case ')':
        depth--
        out += ')'
        break
      case '*':
      case '+':
      case '?':
        out += c
        quantifierFollows()
        break
      case '{': {
        const q = /^(\d+)(,(\d*))?\}/.exec(pattern.slice(i))
        if (q) {
          i += q[0].length
          out += `{${q[1]}${q[2] ?? ''}}`
          quantifierFollows()
        } else out += lit(c)
        break
      }
      default:
        out += lit(c)
    }
    atStart = false
  }
  finishAlternative()
  return { lucene: alternatives.join('|'), exact }

  function group(): string {
    depth++
    if (pattern[i] !== '?') return '('
    const rest = pattern.slice(i)
    if (rest.startsWith('?:')) {
      i += 2
      return '('
    }
    const name = /^\?P?<[A-Za-z_]\w*>/.exec(rest)
    if (name) {
      i += name[0].length
      return '('
    }
    if (/^\?<?[=!]/.test(rest)) throw unsupported('look-around', pattern)
    throw unsupported(`group '(${rest.slice(0, 3)}'`, pattern)
  }

  function escape(): string {
    const c = pattern[i++]
    if (c === undefined) return '\\\\'
    if (c in CLASS_BODY) return `[${litClassBody(CLASS_BODY[c])}]`
    if (c.toLowerCase() in CLASS_BODY) return `[^${litClassBody(CLASS_BODY[c.toLowerCase()])}]`
    if (c in CONTROL) return lit(CONTROL[c])
    const code = codePoint(c)
    if (code !== undefined) return lit(code)
    if (/[bB]/.test(c)) {
      exact = false
      return ''
    }
    if (/[1-9k]/.test(c)) throw unsupported('back-reference', pattern)
    if (/[pPc]/.test(c)) throw unsupported(`escape '\\${c}'`, pattern)
    return lit(c)
  }

  /** `\xHH` / `\uHHHH` (the backslash and letter already consumed up to the letter). */
  function codePoint(c: string): string | undefined {
    const hex = c === 'x' ? /^[0-9a-fA-F]{2}/.exec(pattern.slice(i)) : c === 'u' ? /^[0-9a-fA-F]{4}/.exec(pattern.slice(i)) : null
    if (!hex) return undefined
    i += hex[0].length
    return String.fromCharCode(parseInt(hex[0], 16))
  }

  function charClass(): string {
    let body = ''
    let negated = false
    if (pattern[i] === '^') {
      negated = true
      i++
    }
    // JavaScript: `[]` never matches and `[^]` matches anything; neither is worth translating.
    if (pattern[i] === ']') throw unsupported('empty character class', pattern)
    // A `-` is a range operator only between two single characters (JavaScript reads `[\w-.]` literally).
    let canStartRange = false
    let closingRange = false
    // Lucene's case-insensitive matching folds the characters a class lists but not its ranges
    // (`[a-z]` misses `Z`), while `(?i)` folds both: a letter range gets its other case spelled out.
    let previous = ''
    let rangeFrom = ''
    while (i < pattern.length && pattern[i] !== ']') {
      const c = pattern[i++]
      if (c === '-' && canStartRange && pattern[i] !== ']' && !/^\\[dswDSW]/.test(pattern.slice(i))) {
        body += '-'
        canStartRange = false
        closingRange = true
        rangeFrom = previous
        continue
      }
      previous = c
      let single = true
      if (c === '\\') {
        const e = pattern[i++]
        const code = codePoint(e)
        if (code !== undefined) body += lit(code)
        else if (e in CLASS_BODY) {
          body += litClassBody(CLASS_BODY[e])
          single = false
        } else if (e.toLowerCase() in CLASS_BODY) throw unsupported(`negated class '\\${e}' inside [...]`, pattern)
        else if (e in CONTROL) body += lit(CONTROL[e])
        else if (e === 'b') body += lit('\b')
        else if (/[pPc]/.test(e)) throw unsupported(`escape '\\${e}'`, pattern)
        else body += lit(e)
      } else body += lit(c)
      if (closingRange && flags.has('i') && c !== '\\') body += otherCaseRange(rangeFrom, c)
      canStartRange = single && !closingRange
      closingRange = false
    }
    i++ // the closing `]`
    return `[${negated ? '^' : ''}${body}]`
  }
}

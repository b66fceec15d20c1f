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
  return new Translation(pattern, flags).run()
}

/** One pattern's translation, read left to right; `i` is the position of the next character. */
class Translation {
  private readonly dot: string
  private readonly alternatives: string[] = []
  private out = ''
  private depth = 0
  private startAnchored = false
  private atStart = true // nothing emitted yet in this top-level alternative
  private endAnchored = false
  // Set when a zero-width assertion is left out: the translation then accepts a superset.
  private exact = true
  private i = 0

  constructor(
    private readonly pattern: string,
    private readonly flags: Set<RegexFlag>,
  ) {
    this.dot = flags.has('s') ? '.' : `[^${LINE_TERMINATORS}]`
  }

  run(): { lucene: string; exact: boolean } {
    while (this.i < this.pattern.length) {
      const c = this.pattern[this.i]
      this.i++
      if (this.step(c)) this.atStart = false
    }
    this.finishAlternative()
    return { lucene: this.alternatives.join('|'), exact: this.exact }
  }

  /** Translates one character (and what it takes after it); false when it ended a top-level alternative. */
  private step(c: string): boolean {
    const { pattern } = this
    switch (c) {
      case '\\':
        this.out += this.escape()
        break
      case '[':
        this.out += this.charClass()
        break
      case '.':
        this.out += this.dot
        break
      case '^':
        if (this.depth > 0 || !this.atStart) this.exact = false
        else this.startAnchored = true
        break
      case '$':
        // Only a `$` that ends a top-level alternative is an outer anchor.
        if (this.depth === 0 && (this.i === pattern.length || pattern[this.i] === '|')) this.endAnchored = true
        else this.exact = false
        break
      case '|':
        if (this.depth === 0) {
          this.finishAlternative()
          return false
        }
        this.out += '|'
        break
      case '(':
        this.out += this.group()
        break
      case ')':
        this.depth--
        this.out += ')'
        break
      case '*':
      case '+':
      case '?':
        this.out += c
        this.quantifierFollows()
        break
      case '{':
        this.out += this.bounds(c)
        break
      default:
        this.out += lit(c)
    }
    return true
  }

  private finishAlternative(): void {
    const lt = `[${LINE_TERMINATORS}]`
    const head = this.startAnchored ? (this.flags.has('m') ? `(.*${lt})?` : '') : '.*'
    const tail = this.endAnchored ? (this.flags.has('m') ? `(${lt}.*)?` : '') : '.*'
    this.alternatives.push(head + this.out + tail)
    this.out = ''
    this.startAnchored = this.endAnchored = false
    this.atStart = true
  }

  private quantifierFollows(): void {
    // Lazy `?` changes which match is found, never whether one is: drop it. Possessive can change it.
    if (this.pattern[this.i] === '?') this.i++
    else if (this.pattern[this.i] === '+') throw unsupported('possessive quantifier', this.pattern)
  }

  /** `{n}`, `{n,}`, `{n,m}` after the `{`; else a literal `{`. */
  private bounds(c: string): string {
    const q = /^(\d+)(,(\d*))?\}/.exec(this.pattern.slice(this.i))
    if (!q) return lit(c)
    this.i += q[0].length
    const out = `{${q[1]}${q[2] ?? ''}}`
    this.quantifierFollows()
    return out
  }

  private group(): string {
    const { pattern } = this
    this.depth++
    if (pattern[this.i] !== '?') return '('
    const rest = pattern.slice(this.i)
    if (rest.startsWith('?:')) {
      this.i += 2
      return '('
    }
    const name = /^\?P?<[A-Za-z_]\w*>/.exec(rest)
    if (name) {
      this.i += name[0].length
      return '('
    }
    if (/^\?<?[=!]/.test(rest)) throw unsupported('look-around', pattern)
    throw unsupported(`group '(${rest.slice(0, 3)}'`, pattern)
  }

  private escape(): string {
    const c = this.pattern[this.i++]
    if (c === undefined) return '\\\\'
    if (c in CLASS_BODY) return `[${litClassBody(CLASS_BODY[c])}]`
    if (c.toLowerCase() in CLASS_BODY) return `[^${litClassBody(CLASS_BODY[c.toLowerCase()])}]`
    if (c in CONTROL) return lit(CONTROL[c])
    const code = this.codePoint(c)
    if (code !== undefined) return lit(code)
    if (/[bB]/.test(c)) {
      this.exact = false
      return ''
    }
    if (/[1-9k]/.test(c)) throw unsupported('back-reference', this.pattern)
    if (/[pPc]/.test(c)) throw unsupported(`escape '\\${c}'`, this.pattern)
    return lit(c)
  }

  /** `\xHH` / `\uHHHH` (the backslash and letter already consumed up to the letter). */
  private codePoint(c: string): string | undefined {
    const rest = this.pattern.slice(this.i)
    const hex = c === 'x' ? /^[0-9a-fA-F]{2}/.exec(rest) : c === 'u' ? /^[0-9a-fA-F]{4}/.exec(rest) : null
    if (!hex) return undefined
    this.i += hex[0].length
    return String.fromCharCode(parseInt(hex[0], 16))
  }

  private charClass(): string {
    const { pattern } = this
    let body = ''
    let negated = false
    if (pattern[this.i] === '^') {
      negated = true
      this.i++
    }
    // JavaScript: `[]` never matches and `[^]` matches anything; neither is worth translating.
    if (pattern[this.i] === ']') throw unsupported('empty character class', pattern)
    // A `-` is a range operator only between two single characters (JavaScript reads `[\w-.]` literally).
    let canStartRange = false
    let closingRange = false
    // Lucene's case-insensitive matching folds the characters a class lists but not its ranges
    // (`[a-z]` misses `Z`), while `(?i)` folds both: a letter range gets its other case spelled out.
    let previous = ''
    let rangeFrom = ''
    while (this.i < pattern.length && pattern[this.i] !== ']') {
      const c = pattern[this.i++]
      if (c === '-' && canStartRange && pattern[this.i] !== ']' && !/^\\[dswDSW]/.test(pattern.slice(this.i))) {
        body += '-'
        canStartRange = false
        closingRange = true
        rangeFrom = previous
        continue
      }
      previous = c
      const member = c === '\\' ? this.classEscape() : { text: lit(c), single: true }
      body += member.text
      if (closingRange && this.flags.has('i') && c !== '\\') body += otherCaseRange(rangeFrom, c)
      canStartRange = member.single && !closingRange
      closingRange = false
    }
    this.i++ // the closing `]`
    return `[${negated ? '^' : ''}${body}]`
  }

  /** An escape inside `[...]` (the backslash consumed); `single` when it stands for one character. */
  private classEscape(): { text: string; single: boolean } {
    const e = this.pattern[this.i++]
    const code = this.codePoint(e)
    if (code !== undefined) return { text: lit(code), single: true }
    if (e in CLASS_BODY) return { text: litClassBody(CLASS_BODY[e]), single: false }
    if (e.toLowerCase() in CLASS_BODY) throw unsupported(`negated class '\\${e}' inside [...]`, this.pattern)
    if (e in CONTROL) return { text: lit(CONTROL[e]), single: true }
    if (e === 'b') return { text: lit('\b'), single: true }
    if (/[pPc]/.test(e)) throw unsupported(`escape '\\${e}'`, this.pattern)
    return { text: lit(e), single: true }
  }
}

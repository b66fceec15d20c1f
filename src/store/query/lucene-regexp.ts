import { IllegalArgument } from '../errors'
import { linearRegExp, type Matcher, quote as escapeRegExp } from './linear-regexp'

/**
 * Lucene `regexp` syntax -> a whole-value matcher on the linear-time engine (`.` matches newline,
 * one code point per `.`). Optional operators follow `flags` (default ALL): `@` any string, `#`
 * empty language, `<n-m>` numeric interval, `&` intersection and `~` complement — the last two
 * over the whole pattern (each side compiled on its own, since RE2 has no look-arounds).
 * `^` and `$` are plain characters in Lucene.
 */
export function luceneRegExp(pattern: string, flags = 'ALL', caseInsensitive = false): Matcher {
  const f = parseFlags(flags)
  const { conjuncts, negate } = new Translator(pattern, f, caseInsensitive).translate()
  const compile = (src: string) => linearRegExp(src, { anchored: true, dotAll: true, caseInsensitive, display: pattern })
  const all = conjuncts.map(compile)
  const test = all.length === 1 ? all[0].test : (s: string) => all.every((m) => m.test(s))
  return negate ? { test: (s) => !test(s) } : { test }
}

const FLAG_BITS: Record<string, number> = {
  INTERSECTION: 1,
  COMPLEMENT: 2,
  EMPTY: 4,
  ANYSTRING: 8,
  INTERVAL: 32,
  ALL: 0xffff,
  NONE: 0,
}
const INTERSECTION = 1
const COMPLEMENT = 2
const EMPTY = 4
const ANYSTRING = 8
const INTERVAL = 32

function parseFlags(flags: string): number {
  let bits = 0
  for (const name of flags.split('|')) {
    const key = name.trim().toUpperCase()
    if (key === '') continue
    if (!(key in FLAG_BITS)) throw new IllegalArgument(`Unknown regexp flag [${name}]`)
    bits |= FLAG_BITS[key]
  }
  return bits
}

class Translator {
  private pos = 0
  private depth = 0
  constructor(
    private readonly p: string,
    private readonly flags: number,
    private readonly caseInsensitive = false,
  ) {}

  /** Whole-pattern `~`: the rest is the language to exclude. */
  private negated = false
  /** Whole-pattern `&`: every side must match. */
  private readonly conjuncts: string[] = []

  translate(): { conjuncts: string[]; negate: boolean } {
    const out = this.union()
    if (this.pos < this.p.length) this.fail(`unexpected character '${this.p[this.pos]}'`)
    if (this.conjuncts.length > 0) {
      if (this.unionAtTop) this.topOnly('&')
      return { conjuncts: [...this.conjuncts, out], negate: this.negated }
    }
    return { conjuncts: [out], negate: this.negated }
  }

  private unionAtTop = false

  private fail(why: string): never {
    throw new IllegalArgument(`failed to parse regexp [${this.p}]: ${why} at position ${this.pos}`)
  }

  private peek(c: string): boolean {
    return this.p[this.pos] === c
  }

  private has(flag: number): boolean {
    return (this.flags & flag) !== 0
  }

  private union(): string {
    const alts = [this.inter()]
    while (this.peek('|')) {
      this.pos++
      if (this.depth === 0) this.unionAtTop = true
      alts.push(this.inter())
    }
    return alts.join('|')
  }

  private topOnly(op: string): never {
    this.fail(`operator '${op}' is supported only over the whole pattern`)
  }

  private inter(): string {
    const left = this.concat()
    if (this.has(INTERSECTION) && this.peek('&')) {
      if (this.depth > 0 || this.unionAtTop) this.topOnly('&')
      this.pos++
      this.conjuncts.push(left)
      return this.inter()
    }
    return left
  }

  private concat(): string {
    let out = ''
    while (this.pos < this.p.length && !this.peek('|') && !this.peek(')') && !(this.has(INTERSECTION) && this.peek('&')))
      out += this.repeat()
    return out
  }

  private repeat(): string {
    let atom = this.complement()
    for (;;) {
      const c = this.p[this.pos]
      if (c === '*' || c === '+' || c === '?') {
        this.pos++
        atom = `(?:${atom})${c}`
      } else if (c === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(this.p.slice(this.pos))
        if (!m) this.fail('malformed repetition')
        this.pos += m[0].length
        atom = `(?:${atom})${m[0]}`
      } else return atom
    }
  }

  private complement(): string {
    if (this.has(COMPLEMENT) && this.peek('~')) {
      const start = this.pos
      this.pos++
      const inner = this.complement()
      // Expressible only when it spans the whole pattern: "any string except those".
      if (start !== 0 || this.pos !== this.p.length) this.topOnly('~')
      this.negated = true
      return inner
    }
    return this.charClass()
  }

  private charClass(): string {
    if (!this.peek('[')) return this.simple()
    this.pos++
    let negate = false
    if (this.peek('^')) {
      negate = true
      this.pos++
    }
    let body = ''
    let ranges = ''
    let singles = ''
    let folded = ''
    let first = true
    while (this.pos < this.p.length && (!this.peek(']') || first)) {
      first = false
      const lo = this.classChar()
      if (this.peek('-') && this.p[this.pos + 1] !== ']' && this.pos + 1 < this.p.length) {
        this.pos++
        const hi = this.classChar()
        body += `${lo}-${hi}`
        ranges += `${lo}-${hi}`
      } else {
        body += lo
        singles += lo
        folded += lo
        if (lo.length === 1 || !lo.startsWith('\\'))
          for (const v of new Set([lo.toLowerCase(), lo.toUpperCase()])) if (v !== lo && [...v].length === 1) folded += v
      }
    }
    if (!this.peek(']')) this.fail('expected ]')
    this.pos++
    // Lucene's case_insensitive folds the characters a class lists, not its ranges: `[a-c]` stays lowercase.
    if (this.caseInsensitive && ranges !== '') {
      if (negate) return `(?-i:[^${ranges}${folded}])`
      return singles === '' ? `(?-i:[${ranges}])` : `(?:(?-i:[${ranges}])|[${singles}])`
    }
    return `[${negate ? '^' : ''}${body}]`
  }

  private classChar(): string {
    let c = this.nextCodePoint()
    if (c === '\\') {
      c = this.nextCodePoint()
      if (c === '') this.fail('dangling escape')
      if ('dDsSwW'.includes(c)) return `\\${c}`
    }
    return /[\\\]\[^-]/.test(c) ? `\\${c}` : c
  }

  private nextCodePoint(): string {
    const cp = this.p.codePointAt(this.pos)
    if (cp === undefined) return ''
    const s = String.fromCodePoint(cp)
    this.pos += s.length
    return s
  }

  private simple(): string {
    const c = this.p[this.pos]
    if (c === '.') {
      this.pos++
      return '.'
    }
    if (c === '#' && this.has(EMPTY)) {
      this.pos++
      return '[^\\x00-\\x{10FFFF}]'
    }
    if (c === '@' && this.has(ANYSTRING)) {
      this.pos++
      return '.*'
    }
    if (c === '"') {
      const end = this.p.indexOf('"', this.pos + 1)
      if (end < 0) this.fail('expected "')
      const lit = this.p.slice(this.pos + 1, end)
      this.pos = end + 1
      return escapeRegExp(lit)
    }
    if (c === '(') {
      this.pos++
      if (this.peek(')')) {
        this.pos++
        return '(?:)'
      }
      this.depth++
      const inner = this.union()
      this.depth--
      if (!this.peek(')')) this.fail('expected )')
      this.pos++
      return `(?:${inner})`
    }
    if (c === '<' && this.has(INTERVAL)) {
      const m = /^<(\d+)-(\d+)>/.exec(this.p.slice(this.pos))
      if (m) {
        this.pos += m[0].length
        return interval(m[1], m[2], this)
      }
    }
    if (c === '\\') {
      this.pos++
      const e = this.nextCodePoint()
      if (e === '') this.fail('dangling escape')
      if ('dDsSwW'.includes(e)) return `\\${e}`
      return escapeRegExp(e)
    }
    if (c === ')' || c === '*' || c === '+' || c === '?' || c === '{') this.fail(`unexpected '${c}'`)
    return escapeRegExp(this.nextCodePoint())
  }

  failInterval(): never {
    this.fail('numeric interval too wide')
  }
}

/** `<n-m>`: decimal numbers in range; leading zeros free unless both bounds have the same width. */
function interval(lo: string, hi: string, t: Translator): string {
  let a = Number(lo)
  let b = Number(hi)
  if (a > b) [a, b] = [b, a]
  if (b - a > 10_000) t.failInterval()
  const width = lo.length === hi.length ? lo.length : 0
  const alts: string[] = []
  for (let n = a; n <= b; n++) alts.push(width ? String(n).padStart(width, '0') : String(n))
  return width ? `(?:${alts.join('|')})` : `0*(?:${alts.join('|')})`
}

/**
 * Literals a Sigma `re` pattern (JavaScript syntax, substring search) cannot match without: the
 * rule index then waits for one of them instead of testing the regex on every event that has the
 * field (SigmaHQ's Invoke-Obfuscation and network-command rules put a regex on every command
 * line). Only a necessary condition is read: anything this reader does not know (escapes of
 * letters it has no meaning for, groups other than plain, named and non-capturing ones, non-ASCII
 * characters) breaks a literal run or gives up, never adds text the pattern does not require.
 */

/** At least one of the literals (ASCII, as written) is in every string the pattern finds a match in; undefined: none known. */
export function requiredLiterals(pattern: string): string[] | undefined {
  try {
    const r = new Reader(pattern)
    const out = r.alternation()
    return r.done() ? out : undefined
  } catch {
    return undefined
  }
}

class GiveUp extends Error {}

/** A required piece of a sequence: a literal character, or a group's own any-of literals. */
type Piece = { char: string } | { any: string[] | undefined; text?: string } | 'break'

const CONTROL: Record<string, string> = { n: '\n', r: '\r', t: '\t', f: '\f', v: '\u000b', '0': '\0' }
/** Shorthand classes and zero-width assertions: no literal, no failure. */
const NON_LITERAL = new Set(['d', 'D', 'w', 'W', 's', 'S', 'b', 'B'])
const ASCII_PRINTABLE = /^[\x20-\x7e]$/

class Reader {
  private i = 0
  constructor(private readonly p: string) {}

  done(): boolean {
    return this.i === this.p.length
  }

  /** `a|b|...` up to a `)` or the end: one literal of each branch (none if a branch has none). */
  alternation(): string[] | undefined {
    const out: string[] = []
    let known = true
    for (;;) {
      const branch = best(this.sequence())
      if (branch === undefined) known = false
      else out.push(...branch.any)
      if (this.p[this.i] !== '|') break
      this.i++
    }
    return known ? [...new Set(out)] : undefined
  }

  /** The pieces of one branch, each quantifier applied. */
  private sequence(): Piece[] {
    const pieces: Piece[] = []
    while (this.i < this.p.length && this.p[this.i] !== '|' && this.p[this.i] !== ')') {
      const atom = this.atom()
      const q = this.quantifier()
      if (q === 'optional') pieces.push('break')
      else {
        pieces.push(atom)
        if (q === 'repeated') pieces.push('break')
      }
    }
    return pieces
  }

  private atom(): Piece {
    const c = this.p[this.i++]
    switch (c) {
      case '\\':
        return this.escape()
      case '[':
        this.skipClass()
        return 'break'
      case '.':
      case '^':
      case '$':
        return 'break'
      case '(':
        return this.group()
      case '*':
      case '+':
      case '?':
        throw new GiveUp()
      default:
        return ASCII_PRINTABLE.test(c) ? { char: c } : 'break'
    }
  }

  private escape(): Piece {
    const c = this.p[this.i++]
    if (c === undefined) throw new GiveUp()
    if (NON_LITERAL.has(c)) return 'break'
    if (c in CONTROL) return { char: CONTROL[c] }
    if (/[A-Za-z0-9]/.test(c)) {
      const hex = c === 'x' ? /^[0-9a-fA-F]{2}/.exec(this.p.slice(this.i)) : c === 'u' ? /^[0-9a-fA-F]{4}/.exec(this.p.slice(this.i)) : null
      if (!hex) throw new GiveUp()
      this.i += hex[0].length
      const ch = String.fromCharCode(parseInt(hex[0], 16))
      return ASCII_PRINTABLE.test(ch) ? { char: ch } : 'break'
    }
    return ASCII_PRINTABLE.test(c) ? { char: c } : 'break'
  }

  private skipClass(): void {
    if (this.p[this.i] === '^') this.i++
    if (this.p[this.i] === ']') throw new GiveUp()
    while (this.i < this.p.length && this.p[this.i] !== ']') if (this.p[this.i++] === '\\') this.i++
    if (this.i >= this.p.length) throw new GiveUp()
    this.i++
  }

  private group(): Piece {
    const rest = this.p.slice(this.i)
    const opener = /^\?(?::|P?<[A-Za-z_]\w*>)/.exec(rest)
    if (opener) this.i += opener[0].length
    else if (rest[0] === '?') throw new GiveUp()
    const start = this.i
    const any = this.alternation()
    if (this.p[this.i] !== ')') throw new GiveUp()
    const inner = this.p.slice(start, this.i)
    this.i++
    // A group of plain characters joins the run around it.
    return { any, text: /^[A-Za-z0-9 _\-,:;'"<>=!@#%&/~`]*$/.test(inner) ? inner : undefined }
  }

  /** What the quantifier after an atom makes of it, if any. */
  private quantifier(): 'once' | 'optional' | 'repeated' {
    const c = this.p[this.i]
    let q: 'once' | 'optional' | 'repeated' = 'once'
    if (c === '*' || c === '?') q = 'optional'
    else if (c === '+') q = 'repeated'
    else if (c === '{') {
      const b = /^\{(\d+)(,\d*)?\}/.exec(this.p.slice(this.i))
      if (!b) return 'once' // a literal `{`, read as the next atom
      this.i += b[0].length - 1
      q = Number(b[1]) === 0 ? 'optional' : 'repeated'
    } else return 'once'
    this.i++
    if (this.p[this.i] === '?') this.i++ // lazy: the same strings match
    return q
  }
}

/** The most selective any-of the pieces of one sequence require: the longest literal run, or a group's literals. */
function best(pieces: Piece[]): { any: string[] } | undefined {
  let found: { any: string[]; weight: number } | undefined
  const consider = (any: string[]) => {
    const weight = Math.min(...any.map((s) => s.length)) - (any.length > 1 ? 1 : 0)
    if (weight > 0 && (!found || weight > found.weight)) found = { any, weight }
  }
  let run = ''
  for (const piece of pieces) {
    if (piece !== 'break' && 'char' in piece) {
      run += piece.char
      continue
    }
    if (piece !== 'break' && piece.text !== undefined) {
      run += piece.text
      continue
    }
    if (run) consider([run])
    run = ''
    if (piece !== 'break' && piece.any !== undefined && piece.any.length > 0) consider(piece.any)
  }
  if (run) consider([run])
  return found
}

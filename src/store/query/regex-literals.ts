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
  return readWhole(pattern, (r) => r.alternation())
}

/**
 * Every string the pattern finds a match in satisfies one of the branches, each a list of
 * any-ofs that must all hold: all of a branch's literal runs, not only its longest one (`net\s+config`
 * needs `net` and a white space, and ` config`; command lines full of `netsvcs` and `config` ran
 * the regex engine on every one). Undefined: a branch without any.
 */
export function requiredLiteralSets(pattern: string): string[][][] | undefined {
  return readWhole(pattern, (r) => r.branches())
}

/** What `read` makes of the whole pattern; undefined if it stops short or gives up. */
function readWhole<T>(pattern: string, read: (r: Reader) => T | undefined): T | undefined {
  try {
    const r = new Reader(pattern)
    const out = read(r)
    return r.done() ? out : undefined
  } catch {
    return undefined
  }
}

class GiveUp extends Error {}

/** A required piece of a sequence: a literal character, a white space (`\s`), or a group's own any-of literals. */
type Piece = { char: string } | { space: true } | { any: string[] | undefined; text?: string } | 'break'

/** What RE2 (the evaluator's engine, see linear-regexp.ts) matches with `\s`. */
const SPACES = [' ', '\t', '\n', '\f', '\r']
/** Alternatives a run may grow to (each `\s` multiplies them by five). */
const MAX_ALTERNATIVES = 25

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

  /** `a|b|...` at the top: every literal any-of of each branch (undefined if a branch has none). */
  branches(): string[][][] | undefined {
    const out: string[][][] = []
    for (;;) {
      // The plain runs first, longest first (one `includes` each turns most values away), then
      // those with white spaces (five alternatives each).
      const pieces = this.sequence()
      const plain = runs(pieces, false).sort((x, y) => y.weight - x.weight)
      const spaced = runs(pieces, true).filter((r) => r.any.length > 1)
      const sets = [...plain, ...spaced].map((r) => r.any)
      if (sets.length === 0) return undefined
      out.push(sets)
      if (this.p[this.i] !== '|') return out
      this.i++
    }
  }

  /** The pieces of one branch, each quantifier applied. */
  private sequence(): Piece[] {
    const pieces: Piece[] = []
    while (this.i < this.p.length && this.p[this.i] !== '|' && this.p[this.i] !== ')') {
      const atom = this.atom()
      const q = this.quantifier()
      if (q === 'optional') pieces.push('break')
      // A repeated atom is both the first and the last of its repeats: the runs on each side reach it.
      else pieces.push(...(q === 'repeated' ? [atom, 'break' as const, atom] : [atom]))
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
    if (c === 's') return { space: true }
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
  for (const r of runs(pieces, false)) if (!found || r.weight > found.weight) found = r
  return found
}

/**
 * Each literal run of a sequence and each group's any-of, weighed by its shortest alternative;
 * with `spaces`, a run takes in the white spaces beside it (any of five characters: a run is then
 * a few alternatives, too many for one literal the rule index waits for).
 */
function runs(pieces: Piece[], spaces: boolean): Array<{ any: string[]; weight: number }> {
  const out: Array<{ any: string[]; weight: number }> = []
  const consider = (any: string[]) => {
    const weight = Math.min(...any.map((s) => s.length)) - (any.length > 1 ? 1 : 0)
    if (weight > 0) out.push({ any, weight })
  }
  let run = ['']
  const end = () => {
    if (run[0] !== '' || run.length > 1) consider(run)
    run = ['']
  }
  for (const piece of pieces) {
    if (piece !== 'break' && 'char' in piece) run = run.map((r) => r + piece.char)
    else if (spaces && piece !== 'break' && 'space' in piece) {
      if (run.length * SPACES.length > MAX_ALTERNATIVES) end()
      run = run.flatMap((r) => SPACES.map((sp) => r + sp))
    } else if (piece !== 'break' && 'text' in piece && piece.text !== undefined) run = run.map((r) => r + piece.text)
    else {
      end()
      if (piece !== 'break' && 'any' in piece && piece.any !== undefined && piece.any.length > 0) consider(piece.any)
    }
  }
  end()
  return out
}

/**
 * `query_string` and `simple_query_string`: Lucene's query syntax translated into the query DSL
 * this evaluator already runs (bool, match, match_phrase, wildcard, regexp, fuzzy, range,
 * exists). Fields without a name in the query go to `fields`, else `default_field`, else every
 * field of the mapping (`*`), keeping only fields the term can be a value of, as OpenSearch's
 * lenient expansion does.
 */
import { ParsingError } from '../errors'
import { isObject } from './doc'

/** A mapped field and how it is queried. */
export interface QueryableField {
  name: string
  kind: string
}

type Query = Record<string, unknown>
type Occur = 'must' | 'should' | 'must_not'

interface Options {
  simple: boolean
  defaultAnd: boolean
  fields: string[]
  expand: (pattern: string) => QueryableField[]
  fuzziness: unknown
  phraseSlop: number
  analyzeWildcard: boolean
  /** `time_zone`: read by the ranges the text holds, on date fields. */
  timeZone?: string
}

class Lexer {
  pos = 0
  constructor(
    readonly text: string,
    readonly simple: boolean,
  ) {}
  peek(): string {
    return this.text[this.pos] ?? ''
  }
  skipSpace(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos])) this.pos++
  }
  done(): boolean {
    this.skipSpace()
    return this.pos >= this.text.length
  }
  /** A bare word up to whitespace or syntax, with backslash escapes kept as `\x`. */
  word(stop: RegExp): string {
    let out = ''
    while (this.pos < this.text.length) {
      const c = this.text[this.pos]
      if (c === '\\' && this.pos + 1 < this.text.length) {
        out += c + this.text[this.pos + 1]
        this.pos += 2
        continue
      }
      if (/\s/.test(c) || stop.test(c)) break
      out += c
      this.pos++
    }
    return out
  }
}

const unescape = (s: string) => s.replace(/\\(.)/g, '$1')
const OPS = new Set(['AND', 'OR', 'NOT', '&&', '||'])

class Parser {
  private readonly lx: Lexer
  constructor(
    text: string,
    private readonly o: Options,
  ) {
    this.lx = new Lexer(text, o.simple)
  }

  parse(): Query {
    const q = this.o.simple ? this.simpleExpr(undefined, false) : this.expr(undefined, false)
    if (!this.lx.done()) throw this.error(`Encountered " ")" ") "" at column ${this.lx.pos + 1}`)
    return q
  }

  private error(reason: string): ParsingError {
    return new ParsingError(`Failed to parse query [${this.lx.text}]: ${reason}`)
  }

  /** A sequence of clauses combined with Lucene's classic rules for AND/OR/NOT and +/-. */
  private expr(field: string | undefined, nested: boolean): Query {
    const out: Array<{ q: Query; occur: Occur }> = []
    for (;;) {
      this.lx.skipSpace()
      if (this.lx.pos >= this.lx.text.length) break
      if (this.lx.peek() === ')') {
        if (!nested) throw this.error(`Encountered " ")" ") "" at column ${this.lx.pos + 1}`)
        break
      }
      let conj: 'AND' | 'OR' | undefined
      const op = this.operator()
      if (op === 'AND' || op === 'OR') {
        conj = op
        if (out.length === 0) throw this.error(`Encountered " <${op}> "${op}"" at line 1, column ${this.lx.pos}`)
      }
      let mod: '+' | '-' | undefined
      const next = conj ? this.operator() : op
      if (next === 'NOT') mod = '-'
      else if (next === 'AND' || next === 'OR') throw this.error(`Encountered " <${next}> "${next}"" at column ${this.lx.pos}`)
      this.lx.skipSpace()
      const c = this.lx.peek()
      if (mod === undefined && (c === '+' || c === '-' || (c === '!' && !this.o.simple))) {
        mod = c === '+' ? '+' : '-'
        this.lx.pos++
      }
      const q = this.clause(field)
      if (q === undefined) continue
      const prev = out[out.length - 1]
      if (prev && conj === 'AND' && prev.occur !== 'must_not') prev.occur = 'must'
      if (prev && conj === 'OR' && this.o.defaultAnd && prev.occur !== 'must_not') prev.occur = 'should'
      const occur: Occur =
        mod === '-' ? 'must_not' : mod === '+' ? 'must' : conj === 'OR' ? 'should' : this.o.defaultAnd || conj === 'AND' ? 'must' : 'should'
      out.push({ q, occur })
    }
    if (out.length === 0) return { match_none: {} }
    if (out.length === 1 && out[0].occur !== 'must_not') return out[0].q
    const bool: Record<string, unknown[]> = {}
    for (const { q, occur } of out) (bool[occur] ??= []).push(q)
    return { bool }
  }

  /**
   * The simple syntax as Lucene's SimpleQueryParser builds it: clauses joined left to right, where a
   * change of operator makes what came before one clause (`a b +c` is `(a | b) + c`), and a negated
   * clause is "not it" on its own (`a -b` under OR is "a, or anything without b").
   */
  private simpleExpr(field: string | undefined, nested: boolean): Query {
    let top: Query | undefined
    let previous: 'must' | 'should' | undefined
    for (;;) {
      let op: 'must' | 'should' | undefined
      let not = 0
      for (;;) {
        this.lx.skipSpace()
        const c = this.lx.peek()
        if (c === '|') op = 'should'
        else if (c === '+') op = 'must'
        else if (c === '-') not++
        else break
        this.lx.pos++
      }
      if (this.lx.pos >= this.lx.text.length || this.lx.peek() === ')') {
        if (this.lx.peek() === ')' && !nested) throw this.error(`Encountered " ")" ") "" at column ${this.lx.pos + 1}`)
        break
      }
      const q = this.clause(field)
      if (q === undefined) continue
      const branch: Query = not % 2 === 1 ? { bool: { must_not: [q], should: [{ match_all: {} }] } } : q
      if (top === undefined) {
        top = branch
        continue
      }
      const current = op ?? (this.o.defaultAnd ? 'must' : 'should')
      if (previous !== current) top = { bool: { [current]: [top] } }
      ;((top as { bool: Record<string, Query[]> }).bool[current] as Query[]).push(branch)
      previous = current
    }
    return top ?? { match_none: {} }
  }

  /** AND, OR, NOT (or &&, ||, and in the simple syntax + and |) at the cursor, consumed. */
  private operator(): 'AND' | 'OR' | 'NOT' | undefined {
    this.lx.skipSpace()
    const rest = this.lx.text.slice(this.lx.pos)
    if (this.o.simple) {
      if (rest.startsWith('|')) {
        this.lx.pos += rest.match(/^\|+/)![0].length
        return 'OR'
      }
      if (rest.startsWith('+') && /^\+\s/.test(rest)) {
        this.lx.pos++
        return 'AND'
      }
      return undefined
    }
    const m = /^(AND|OR|NOT|&&|\|\|)(?=[\s(]|$)/.exec(rest)
    if (!m || !OPS.has(m[1])) return undefined
    this.lx.pos += m[1].length
    return m[1] === '&&' ? 'AND' : m[1] === '||' ? 'OR' : (m[1] as 'AND' | 'OR' | 'NOT')
  }

  private clause(field: string | undefined): Query | undefined {
    this.lx.skipSpace()
    let c = this.lx.peek()
    if (c === '(') {
      this.lx.pos++
      const q = this.o.simple ? this.simpleExpr(field, true) : this.expr(field, true)
      this.lx.skipSpace()
      if (this.lx.peek() !== ')') throw this.error('Encountered "<EOF>": missing )')
      this.lx.pos++
      this.boost()
      return q
    }
    // A field prefix `name:` (not in the simple syntax).
    if (!this.o.simple && field === undefined) {
      const save = this.lx.pos
      const name = this.lx.word(/[:()"[\]{}^~/]/)
      if (name !== '' && this.lx.peek() === ':') {
        this.lx.pos++
        this.lx.skipSpace()
        c = this.lx.peek()
        if (c === '(') {
          this.lx.pos++
          const q = this.expr(unescape(name), true)
          if (this.lx.peek() !== ')') throw this.error('Encountered "<EOF>": missing )')
          this.lx.pos++
          this.boost()
          return q
        }
        return this.term(unescape(name))
      }
      this.lx.pos = save
    }
    return this.term(field)
  }

  private boost(): void {
    if (this.lx.peek() === '^') {
      this.lx.pos++
      this.lx.word(/[()"]/)
    }
  }

  private term(field: string | undefined): Query | undefined {
    const c = this.lx.peek()
    if (c === '"') {
      const end = this.closing('"')
      const phrase = unescape(this.lx.text.slice(this.lx.pos + 1, end))
      this.lx.pos = end + 1
      let slop = this.o.phraseSlop
      if (this.lx.peek() === '~') {
        this.lx.pos++
        const n = this.lx.word(/[()^"]/)
        slop = n === '' ? 2 : Number(n)
      }
      this.boost()
      return this.onFields(field, phrase, (f) => ({ match_phrase: { [f.name]: { query: phrase, slop } } }), true)
    }
    if (!this.o.simple && (c === '[' || c === '{')) return this.range(field)
    if (!this.o.simple && c === '/') {
      const end = this.closing('/')
      const re = this.lx.text.slice(this.lx.pos + 1, end)
      this.lx.pos = end + 1
      this.boost()
      // On a text field OpenSearch (3.0 on) matches the expression ignoring ASCII case, as the
      // field's analyzer would have lower-cased its terms; on a keyword field it is exact.
      return this.onFields(
        field,
        re,
        (f) => ({ regexp: { [f.name]: { value: re, ...(f.kind === 'text' ? { case_insensitive: true } : {}) } } }),
        false,
      )
    }
    if (!this.o.simple) {
      const cmp = /^(>=|<=|>|<)/.exec(this.lx.text.slice(this.lx.pos))
      if (cmp) {
        this.lx.pos += cmp[1].length
        const v = unescape(this.lx.word(/[()]/))
        const op = { '>=': 'gte', '<=': 'lte', '>': 'gt', '<': 'lt' }[cmp[1]]!
        return this.onFields(field, v, (f) => ({ range: { [f.name]: this.zoned(f, { [op]: v }) } }), false)
      }
    }
    const raw = this.lx.word(this.o.simple ? /[()"|]/ : /[()"^~]/)
    if (raw === '') {
      if (this.lx.peek() === '"' || this.lx.peek() === '(') return undefined
      this.lx.pos++
      if (this.o.simple) return undefined
      throw this.error(`Encountered "${c}" at column ${this.lx.pos}`)
    }
    let fuzzy: string | undefined
    if (this.lx.peek() === '~') {
      this.lx.pos++
      fuzzy = this.lx.word(/[()^"]/) || 'AUTO'
    }
    if (this.o.simple && raw.endsWith('~')) fuzzy = 'AUTO'
    this.boost()
    const word = raw
    if (field === '_exists_') return { exists: { field: unescape(word) } }
    if (word === '*' && field !== undefined) return field === '*' ? { match_all: {} } : { exists: { field } }
    const wild = /(?<!\\)[*?]/.test(word)
    const value = unescape(word)
    if (wild) {
      if (this.o.simple) {
        const prefix = value.replace(/\*$/, '')
        return this.onFields(
          field,
          prefix,
          (f) => ({ prefix: { [f.name]: { value: f.kind === 'text' ? prefix.toLowerCase() : prefix } } }),
          true,
        )
      }
      return this.onFields(
        field,
        value,
        (f) => ({ wildcard: { [f.name]: { value: f.kind === 'text' ? value.toLowerCase() : value } } }),
        true,
      )
    }
    if (fuzzy !== undefined) {
      const fuzziness = /^\d+(\.\d+)?$/.test(fuzzy) ? Number(fuzzy) : 'AUTO'
      return this.onFields(
        field,
        value,
        (f) => ({ fuzzy: { [f.name]: { value: f.kind === 'text' ? value.toLowerCase() : value, fuzziness } } }),
        true,
      )
    }
    return this.onFields(
      field,
      value,
      (f) => ({ match: { [f.name]: { query: value, ...(this.o.defaultAnd ? { operator: 'and' } : {}) } } }),
      false,
    )
  }

  private range(field: string | undefined): Query {
    const open = this.lx.peek()
    this.lx.pos++
    const m = /^\s*("[^"]*"|[^\s\]}]+)\s+TO\s+("[^"]*"|[^\s\]}]+)\s*([\]}])/.exec(this.lx.text.slice(this.lx.pos))
    if (!m) throw this.error(`Encountered malformed range at column ${this.lx.pos}`)
    this.lx.pos += m[0].length
    this.boost()
    const val = (s: string) => (s === '*' ? undefined : s.replace(/^"|"$/g, ''))
    const lo = val(m[1])
    const hi = val(m[2])
    const body: Record<string, unknown> = {}
    if (lo !== undefined) body[open === '[' ? 'gte' : 'gt'] = lo
    if (hi !== undefined) body[m[3] === ']' ? 'lte' : 'lt'] = hi
    return this.onFields(field, lo ?? hi ?? '', (f) => ({ range: { [f.name]: this.zoned(f, body) } }), false)
  }

  /** A range's body with the query's `time_zone`, on a date field (others have no zone). */
  private zoned(f: QueryableField, body: Query): Query {
    return this.o.timeZone !== undefined && f.kind === 'date' ? { ...body, time_zone: this.o.timeZone } : body
  }

  /** The index of the closing character (escapes skipped). */
  private closing(ch: string): number {
    for (let i = this.lx.pos + 1; i < this.lx.text.length; i++) {
      if (this.lx.text[i] === '\\') i++
      else if (this.lx.text[i] === ch) return i
    }
    throw this.error(`Lexical error: unterminated ${ch === '"' ? 'phrase' : 'regular expression'}`)
  }

  /** One query per target field; several fields are alternatives (dis_max). */
  private onFields(field: string | undefined, value: string, make: (f: QueryableField) => Query, textual: boolean): Query {
    const patterns = field !== undefined ? [field] : this.o.fields
    const explicit = field !== undefined && !field.includes('*')
    const targets = patterns.flatMap((p) => this.o.expand(p))
    // Expanded fields keep only those the value can be a value of (OpenSearch is lenient there).
    const fit = explicit ? targets : targets.filter((f) => fits(f.kind, value, textual))
    if (fit.length === 0) return explicit ? make({ name: field!, kind: 'auto' }) : { match_none: {} }
    if (fit.length === 1) return make(fit[0])
    return { dis_max: { queries: fit.map(make) } }
  }
}

function fits(kind: string, value: string, textual: boolean): boolean {
  switch (kind) {
    case 'text':
    case 'keyword':
    case 'auto':
      return true
    case 'number':
      return !textual && value.trim() !== '' && !Number.isNaN(Number(value))
    case 'boolean':
      return !textual && (value === 'true' || value === 'false')
    case 'date':
      return !textual && /^\d{4}-\d{2}|^now/.test(value)
    case 'ip':
      return !textual && /^[\d.:a-fA-F/]+$/.test(value) && /[.:]/.test(value)
    default:
      return false
  }
}

const fieldList = (v: unknown): string[] | undefined =>
  v === undefined ? undefined : (Array.isArray(v) ? v : [v]).map((f) => String(f).replace(/\^[\d.]+$/, ''))

/** The DSL query a `query_string` (or, with `simple`, `simple_query_string`) body means. */
export function translateQueryString(body: unknown, simple: boolean, expand: (pattern: string) => QueryableField[]): Query {
  const type = simple ? 'simple_query_string' : 'query_string'
  if (!isObject(body)) throw new ParsingError(`[${type}] query malformed, no start_object after query name`)
  if (typeof body.query !== 'string') throw new ParsingError(`[${type}] must be provided with a [query]`)
  if (Array.isArray(body.fields) && body.fields.some((f) => f === null || f === undefined))
    throw new ParsingError(`[${type}] field name in [fields] cannot be null`)
  const op = String(body.default_operator ?? 'or').toLowerCase()
  if (op !== 'or' && op !== 'and') throw new ParsingError(`[${type}] default operator [${op}] is not allowed`)
  const fields = fieldList(body.fields) ?? (typeof body.default_field === 'string' ? [body.default_field] : ['*'])
  const parser = new Parser(body.query, {
    simple,
    defaultAnd: op === 'and',
    fields,
    expand,
    fuzziness: body.fuzziness,
    phraseSlop: typeof body.phrase_slop === 'number' ? body.phrase_slop : 0,
    analyzeWildcard: body.analyze_wildcard === true,
    timeZone: typeof body.time_zone === 'string' && !simple ? body.time_zone : undefined,
  })
  if (!simple) return parser.parse()
  try {
    return parser.parse()
  } catch {
    // simple_query_string never fails on syntax: the text is then searched as plain words.
    return new Parser(body.query.replace(/[()"|+\-~*]/g, ' '), {
      simple,
      defaultAnd: op === 'and',
      fields,
      expand,
      fuzziness: undefined,
      phraseSlop: 0,
      analyzeWildcard: false,
    }).parse()
  }
}

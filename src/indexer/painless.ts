/**
 * The Painless a by-query write or a scripted `_update` accepts: statements that assign a literal
 * or a `params` value to a `ctx._source` field (dotted or bracketed path) with `=` or a compound
 * operator (`+=`, `-=`, `*=`, `/=`, `%=`), increment or decrement one (`++`, `--`, either side),
 * append to a list (`.add(value)`) or remove one; `ctx.op = 'noop' | 'delete' | 'index'`; blocks
 * and `if (condition) ... else ...` (conditions: painless-conditions.ts). Anything else answers
 * OpenSearch's `script_exception` (a 400) before any document is touched; arithmetic on a missing
 * value answers Painless's runtime error (a 400).
 */
import { OpenSearchHttpError } from '../http/errors'
import { isObject } from '../store/query/doc'
import { setOwn } from '../store/own'
import { compileCondition, quoted, typeName, walk } from './painless-conditions'

/** What a script leaves to do with the document (`ctx.op`): write it (`index`), leave it (`noop`) or delete it. */
export type ScriptOp = 'index' | 'noop' | 'delete'
/** A compiled script: edits the source in place and answers its `ctx.op`. */
export type SourceEdit = (source: Record<string, unknown>) => ScriptOp
/** One statement's edit of the source. */
type Edit = (source: Record<string, unknown>) => void
type Node = (source: Record<string, unknown>, state: { op: ScriptOp }) => void

/** Painless's script_exception, pointing at `offset` in the script. */
function scriptException(kind: 'compile error' | 'runtime error', source: string, offset: number, type: string, reason: string) {
  return new OpenSearchHttpError(400, 'script_exception', kind, {
    script_stack: [source.slice(Math.max(0, offset - 25), offset + 25), `${' '.repeat(Math.min(offset, 25))}^---- HERE`],
    script: source,
    lang: 'painless',
    position: { offset, start: Math.max(0, offset - 25), end: Math.min(source.length, offset + 25) },
    caused_by: { type, reason },
  })
}

function scriptError(source: string, offset: number, reason: string, type = 'illegal_argument_exception'): OpenSearchHttpError {
  return scriptException('compile error', source, offset, type, reason)
}

class Reader {
  pos = 0
  constructor(
    readonly text: string,
    private readonly base: number,
    private readonly whole: string,
  ) {}
  ws(): void {
    while (/\s/.test(this.text[this.pos] ?? '')) this.pos++
  }
  eat(s: string): boolean {
    this.ws()
    if (this.text.startsWith(s, this.pos)) {
      this.pos += s.length
      return true
    }
    return false
  }
  fail(reason: string): never {
    throw scriptError(this.whole, this.base + this.pos, reason)
  }
  ident(): string {
    this.ws()
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.text.slice(this.pos))
    if (!m) this.fail(`unexpected token ['${this.text[this.pos] ?? '<EOF>'}'] was expecting an identifier`)
    this.pos += m[0].length
    return m[0]
  }
  string(): string {
    this.ws()
    const s = quoted(this.text, this.pos, (reason) => this.fail(reason))
    this.pos = s.end
    return s.value
  }
  /** `.name` or `['name']` steps of a path. */
  path(): string[] {
    const out: string[] = []
    for (;;) {
      if (this.eat('.')) {
        const save = this.pos
        const name = this.ident()
        this.ws()
        if ((name === 'remove' || name === 'add') && this.text[this.pos] === '(') {
          this.pos = save - 1
          return out
        }
        out.push(name)
      } else if (this.eat('[')) {
        out.push(this.string())
        if (!this.eat(']')) this.fail("expected ']'")
      } else return out
    }
  }
}

/** A literal or a params reference: the value it evaluates to. */
function expression(r: Reader, params: Record<string, unknown>): unknown {
  r.ws()
  const rest = r.text.slice(r.pos)
  const num = /^-?\d+(\.\d+)?([eE][+-]?\d+)?[LlFfDd]?/.exec(rest)
  if (num) {
    r.pos += num[0].length
    return Number(num[0].replace(/[LlFfDd]$/, ''))
  }
  if (rest.startsWith("'") || rest.startsWith('"')) return r.string()
  const word = /^(true|false|null)\b/.exec(rest)
  if (word) {
    r.pos += word[0].length
    return word[1] === 'true' ? true : word[1] === 'false' ? false : null
  }
  if (/^params\b/.test(rest)) {
    r.pos += 'params'.length
    return structuredClone(walk(params, r.path()))
  }
  return r.fail('only literals and params values can be assigned by this server')
}

function runtimeError(source: string, offset: number, type: string, reason: string): OpenSearchHttpError {
  return scriptException('runtime error', source, offset, type, reason)
}

type Op = '+' | '-' | '*' | '/' | '%'

/** `old op value` as Painless computes it on def values (string concatenation for `+`, integer division on integers). */
function arithmetic(op: Op, old: unknown, value: unknown, fail: (type: string, reason: string) => never): unknown {
  if (op === '+' && (typeof old === 'string' || typeof value === 'string')) {
    const str = (v: unknown) => (v === undefined || v === null ? 'null' : typeof v === 'object' ? JSON.stringify(v) : String(v))
    return str(old) + str(value)
  }
  if (old === undefined || old === null || value === undefined || value === null)
    fail('null_pointer_exception', `cannot apply [${op}] to a null value`)
  if (typeof old !== 'number' || typeof value !== 'number')
    fail('class_cast_exception', `Cannot apply [${op}] operation to types [${typeName(old)}] and [${typeName(value)}].`)
  const ints = Number.isInteger(old) && Number.isInteger(value)
  switch (op) {
    case '+':
      return old + value
    case '-':
      return old - value
    case '*':
      return old * value
    case '/':
      if (ints) {
        if (value === 0) fail('arithmetic_exception', '/ by zero')
        return Math.trunc(old / value)
      }
      return old / value
    case '%':
      if (ints && value === 0) fail('arithmetic_exception', '/ by zero')
      return old % value
  }
}

function container(source: Record<string, unknown>, path: string[], create: boolean): Record<string, unknown> | undefined {
  let cur: Record<string, unknown> = source
  for (const step of path) {
    let next = Object.hasOwn(cur, step) ? cur[step] : undefined
    if (!isObject(next)) {
      if (!create) return undefined
      next = {}
      setOwn(cur, step, next)
    }
    cur = next as Record<string, unknown>
  }
  return cur
}

/** Compiles a `script` (string or `{source, lang, params}`) into an edit of a document's source. */
export function compileScript(script: unknown): SourceEdit {
  const spec = typeof script === 'string' ? { source: script } : script
  if (!isObject(spec)) throw new OpenSearchHttpError(400, 'parsing_exception', '[script] must be a string or an object')
  if (spec.id !== undefined)
    throw new OpenSearchHttpError(400, 'resource_not_found_exception', `unable to find script [${String(spec.id)}] in cluster state`)
  const lang = spec.lang ?? 'painless'
  if (lang !== 'painless') throw new OpenSearchHttpError(400, 'illegal_argument_exception', `script_lang not supported [${String(lang)}]`)
  const source = spec.source ?? spec.inline
  if (typeof source !== 'string')
    throw new OpenSearchHttpError(400, 'parsing_exception', 'must specify either [source] for an inline script or [id] for a stored script')
  const params = isObject(spec.params) ? spec.params : {}
  const nodes = new Program(source, params).statements(false)
  return (src) => {
    const state = { op: 'index' as ScriptOp }
    for (const n of nodes) n(src, state)
    return state.op
  }
}

const OPS: ScriptOp[] = ['index', 'noop', 'delete']

/** The script's statements: blocks, `if`/`else`, and simple statements ended by `;` or a block's end. */
class Program {
  private pos = 0
  constructor(
    private readonly source: string,
    private readonly params: Record<string, unknown>,
  ) {}

  private ws(): void {
    while (/\s/.test(this.source[this.pos] ?? '')) this.pos++
  }

  private rest(): string {
    return this.source.slice(this.pos)
  }

  statements(inBlock: boolean): Node[] {
    const out: Node[] = []
    for (;;) {
      this.ws()
      const c = this.source[this.pos]
      if (c === undefined) {
        if (inBlock) throw scriptError(this.source, this.pos, "unexpected end of script: expected '}'")
        return out
      }
      if (c === '}') {
        if (!inBlock) throw scriptError(this.source, this.pos, "unexpected token ['}']")
        this.pos++
        return out
      }
      if (c === ';') this.pos++
      else out.push(this.statement())
    }
  }

  private statement(): Node {
    this.ws()
    if (this.source[this.pos] === '{') {
      this.pos++
      const body = this.statements(true)
      return (src, state) => {
        for (const n of body) n(src, state)
      }
    }
    const iff = /^if\s*\(/.exec(this.rest())
    if (iff) return this.ifStatement(this.pos + iff[0].length - 1)
    const at = this.pos
    const end = this.scan(at, (c, depth) => depth === 0 && (c === ';' || c === '}'))
    this.pos = end
    if (this.source[end] === ';') this.pos++
    return simpleStatement({ text: this.source.slice(at, end), at }, this.source, this.params)
  }

  /** `if (condition) statement [else statement]`, the condition's `(` at `open`. */
  private ifStatement(open: number): Node {
    const close = this.scan(open + 1, (c, depth) => depth === 0 && c === ')')
    if (this.source[close] !== ')') throw scriptError(this.source, open, "expected ')' closing the condition")
    const { source } = this
    const cond = compileCondition(
      {
        text: source.slice(open + 1, close),
        at: open + 1,
        fail: (offset, reason) => {
          throw scriptError(source, offset, reason)
        },
        runtime: (offset, type, reason) => runtimeError(source, offset, type, reason),
      },
      this.params,
    )
    this.pos = close + 1
    const then = this.statement()
    this.ws()
    let otherwise: Node | undefined
    if (/^else\b/.test(this.rest())) {
      this.pos += 4
      otherwise = this.statement()
    }
    return (src, state) => (cond(src) ? then(src, state) : otherwise?.(src, state))
  }

  /** The first position from `from` where `stop` holds outside strings (depth: open brackets), or the end. */
  private scan(from: number, stop: (c: string, depth: number) => boolean): number {
    let depth = 0
    let quote: string | undefined
    for (let i = from; i < this.source.length; i++) {
      const c = this.source[i]
      if (quote) {
        if (c === '\\') i++
        else if (c === quote) quote = undefined
        continue
      }
      if (stop(c, depth)) return i
      if (c === "'" || c === '"') quote = c
      else if (c === '(' || c === '[' || c === '{') depth++
      else if (c === ')' || c === ']' || c === '}') depth--
    }
    return this.source.length
  }
}

/** A statement without blocks: `ctx.op = '...'`, or an edit of `ctx._source` (compileStatement). */
function simpleStatement(st: { text: string; at: number }, source: string, params: Record<string, unknown>): Node {
  const op = /^\s*ctx\s*\.\s*op\s*=\s*/.exec(st.text)
  if (op) {
    const r = new Reader(st.text, st.at, source)
    r.pos = op[0].length
    const value = r.string()
    r.ws()
    if (r.pos < r.text.length) r.fail(`unexpected token ['${r.text[r.pos]}']`)
    if (!OPS.includes(value as ScriptOp))
      throw new OpenSearchHttpError(
        400,
        'illegal_argument_exception',
        `Operation type [${value}] not allowed, only [noop, index, delete] are allowed`,
      )
    return (_src, state) => void (state.op = value as ScriptOp)
  }
  const edit = compileStatement(st, source, params)
  return (src) => edit(src)
}

/** One statement of a script, compiled into an edit of a document's source. */
function compileStatement(st: { text: string; at: number }, source: string, params: Record<string, unknown>): Edit {
  const r = new Reader(st.text, st.at, source)
  // `++ctx._source.n` / `--ctx._source.n`
  const prefix: Op | undefined = r.eat('++') ? '+' : r.eat('--') ? '-' : undefined
  if (!r.eat('ctx')) r.fail('only statements on ctx._source are supported by this server')
  if (!r.eat('.') || r.ident() !== '_source') r.fail('only statements on ctx._source are supported by this server')
  const path = r.path()
  if (prefix === undefined && r.eat('.remove')) {
    if (!r.eat('(')) r.fail("expected '('")
    const name = r.string()
    if (!r.eat(')')) r.fail("expected ')'")
    r.ws()
    if (r.pos < r.text.length) r.fail(`unexpected token ['${r.text[r.pos]}']`)
    return (src) => {
      const c = container(src, path, false)
      if (c && Object.hasOwn(c, name)) delete c[name]
    }
  }
  if (prefix === undefined && r.eat('.add')) {
    // `ctx._source.list.add(value)`: appends to a list (Painless's List.add).
    if (path.length === 0) r.fail('only a list field of ctx._source can be added to')
    if (!r.eat('(')) r.fail("expected '('")
    const at = r.pos
    expression(r, params) // validates now
    const valueText = r.text.slice(at, r.pos)
    if (!r.eat(')')) r.fail("expected ')'")
    r.ws()
    if (r.pos < r.text.length) r.fail(`unexpected token ['${r.text[r.pos]}']`)
    const addAt = st.at + at
    return (src) => {
      const c = container(src, path.slice(0, -1), false)
      const list = c && Object.hasOwn(c, path[path.length - 1]) ? c[path[path.length - 1]] : null
      if (list === null || list === undefined)
        throw runtimeError(source, addAt, 'null_pointer_exception', 'Cannot invoke "Object.add(Object)" on a null value')
      if (!Array.isArray(list))
        throw runtimeError(source, addAt, 'illegal_argument_exception', `dynamic method [${typeName(list)}, add/1] not found`)
      list.push(expression(new Reader(valueText, addAt, source), params))
    }
  }
  if (path.length === 0) r.fail('only a field of ctx._source can be assigned')
  const parent = path.slice(0, -1)
  const leaf = path[path.length - 1]
  const opAt = st.at + r.pos
  const fail = (type: string, reason: string): never => {
    throw runtimeError(source, opAt, type, reason)
  }
  const current = (src: Record<string, unknown>): unknown => {
    const c = container(src, parent, false)
    return c && Object.hasOwn(c, leaf) ? c[leaf] : null
  }
  r.ws()
  const step: Op | undefined = prefix ?? (r.eat('++') ? '+' : r.eat('--') ? '-' : undefined)
  if (step !== undefined) {
    r.ws()
    if (r.pos < r.text.length) r.fail(`unexpected token ['${r.text[r.pos]}']`)
    return (src) => {
      const next = arithmetic(step, current(src), 1, fail)
      setOwn(container(src, parent, true)!, leaf, next)
    }
  }
  r.ws()
  const compound = /^([-+*/%])=/.exec(r.text.slice(r.pos))
  let op: Op | undefined
  if (compound) {
    op = compound[1] as Op
    r.pos += 2
  } else {
    if (r.text[r.pos] !== '=' || r.text[r.pos + 1] === '=')
      r.fail('only assignments (=, +=, -=, *=, /=, %=), ++, -- and remove() are supported by this server')
    r.pos++
  }
  const at = r.pos
  expression(r, params) // validates now
  r.ws()
  if (r.pos < r.text.length) r.fail(`unexpected token ['${r.text[r.pos]}'] after the assigned value`)
  const valueText = st.text.slice(at)
  return (src) => {
    const value = expression(new Reader(valueText, st.at + at, source), params)
    const next = op === undefined ? value : arithmetic(op, current(src), value, fail)
    setOwn(container(src, parent, true)!, leaf, next)
  }
}

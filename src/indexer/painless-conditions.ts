/**
 * The conditions of the Painless subset's `if`: comparisons (`==`, `!=`, `<`, `<=`, `>`, `>=`) of
 * `ctx._source` fields, `params` values and literals, a list's or string's `contains(...)`, a
 * map's `containsKey(...)`, `isEmpty()` and `size()`, joined by `!`, `&&`, `||` and parentheses.
 * Values compare as Painless compares `def` values: numbers by value, other values by equality,
 * an ordering of a null or of non-numbers is the runtime error Painless raises.
 */
import { isObject } from '../store/query/doc'

/** Reads the text of a condition; `fail` answers the compile error at a position of it. */
export interface ConditionText {
  text: string
  /** Offset of `text` in the whole script. */
  at: number
  fail(offset: number, reason: string): never
  /** A runtime error at an offset of the script. */
  runtime(offset: number, type: string, reason: string): Error
}

/** What a condition reads: the document's source and the script's params. */
export type Condition = (source: Record<string, unknown>) => boolean
type Value = (source: Record<string, unknown>) => unknown

const COMPARISONS = ['==', '!=', '<=', '>=', '<', '>'] as const
type Comparison = (typeof COMPARISONS)[number]

class CondReader {
  pos = 0
  constructor(readonly c: ConditionText) {}
  ws(): void {
    while (/\s/.test(this.c.text[this.pos] ?? '')) this.pos++
  }
  peek(s: string): boolean {
    this.ws()
    return this.c.text.startsWith(s, this.pos)
  }
  eat(s: string): boolean {
    if (!this.peek(s)) return false
    this.pos += s.length
    return true
  }
  fail(reason: string): never {
    return this.c.fail(this.c.at + this.pos, reason)
  }
}

/** Compiles a condition's text (what is between the parentheses of `if (...)`). */
export function compileCondition(c: ConditionText, params: Record<string, unknown>): Condition {
  const r = new CondReader(c)
  const cond = or(r, params)
  r.ws()
  if (r.pos < c.text.length) r.fail(`unexpected token ['${c.text[r.pos]}'] in the condition`)
  return cond
}

function or(r: CondReader, params: Record<string, unknown>): Condition {
  const parts = [and(r, params)]
  while (r.eat('||')) parts.push(and(r, params))
  return parts.length === 1 ? parts[0] : (s) => parts.some((p) => p(s))
}

function and(r: CondReader, params: Record<string, unknown>): Condition {
  const parts = [not(r, params)]
  while (r.eat('&&')) parts.push(not(r, params))
  return parts.length === 1 ? parts[0] : (s) => parts.every((p) => p(s))
}

function not(r: CondReader, params: Record<string, unknown>): Condition {
  if (r.peek('!') && !r.peek('!=')) {
    r.pos++
    const inner = not(r, params)
    return (s) => !inner(s)
  }
  if (r.eat('(')) {
    const inner = or(r, params)
    if (!r.eat(')')) r.fail("expected ')'")
    return inner
  }
  return comparison(r, params)
}

function comparison(r: CondReader, params: Record<string, unknown>): Condition {
  const at = r.c.at + r.pos
  const left = operand(r, params)
  r.ws()
  const op = COMPARISONS.find((o) => r.c.text.startsWith(o, r.pos))
  if (!op) {
    return (s) => {
      const v = left(s)
      if (typeof v !== 'boolean') throw r.c.runtime(at, 'class_cast_exception', `Cannot cast ${typeName(v)} to java.lang.Boolean`)
      return v
    }
  }
  r.pos += op.length
  const right = operand(r, params)
  return (s) =>
    compare(op, left(s), right(s), (type, reason) => {
      throw r.c.runtime(at, type, reason)
    })
}

function compare(op: Comparison, a: unknown, b: unknown, fail: (type: string, reason: string) => never): boolean {
  if (op === '==' || op === '!=') return equal(a, b) === (op === '==')
  if (a === null || a === undefined || b === null || b === undefined) fail('null_pointer_exception', `cannot apply [${op}] to a null value`)
  if (typeof a !== 'number' || typeof b !== 'number')
    fail('class_cast_exception', `Cannot apply [${op}] operation to types [${typeName(a)}] and [${typeName(b)}].`)
  return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b
}

/** Painless's `==` on def values: numbers by value, null only to null, lists and maps by content. */
function equal(a: unknown, b: unknown): boolean {
  if (a === undefined) a = null
  if (b === undefined) b = null
  if (typeof a === 'number' && typeof b === 'number') return a === b
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b
  return JSON.stringify(a) === JSON.stringify(b)
}

/** The Java class Painless names a def value by in its errors. */
export function typeName(v: unknown): string {
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'number') return Number.isInteger(v) ? 'java.lang.Integer' : 'java.lang.Double'
  if (typeof v === 'string') return 'java.lang.String'
  if (typeof v === 'boolean') return 'java.lang.Boolean'
  return Array.isArray(v) ? 'java.util.ArrayList' : 'java.util.HashMap'
}

/** A literal, a `params` value or a `ctx._source` field, with the method calls a condition may make on it. */
function operand(r: CondReader, params: Record<string, unknown>): Value {
  r.ws()
  const rest = r.c.text.slice(r.pos)
  const num = /^-?\d+(\.\d+)?([eE][+-]?\d+)?[LlFfDd]?/.exec(rest)
  if (num) {
    r.pos += num[0].length
    const n = Number(num[0].replace(/[LlFfDd]$/, ''))
    return () => n
  }
  if (rest.startsWith("'") || rest.startsWith('"')) {
    const s = stringLiteral(r)
    return () => s
  }
  const word = /^(true|false|null)\b/.exec(rest)
  if (word) {
    r.pos += word[0].length
    const v = word[1] === 'true' ? true : word[1] === 'false' ? false : null
    return () => v
  }
  let base: (s: Record<string, unknown>) => unknown
  if (/^params\b/.test(rest)) {
    r.pos += 'params'.length
    const path = steps(r)
    base = () => walk(params, path)
  } else if (/^ctx\s*\.\s*_source\b/.test(rest)) {
    r.pos += /^ctx\s*\.\s*_source/.exec(rest)![0].length
    const path = steps(r)
    base = (s) => walk(s, path)
  } else return r.fail('only literals, params values and ctx._source fields can be compared by this server')
  return call(r, params, base)
}

/** `.contains(x)`, `.containsKey(x)`, `.isEmpty()`, `.size()` after a value, or the value itself. */
function call(r: CondReader, params: Record<string, unknown>, base: Value): Value {
  const at = r.c.at + r.pos
  const m = /^\s*\.\s*(contains|containsKey|isEmpty|size)\s*\(/.exec(r.c.text.slice(r.pos))
  if (!m) return base
  r.pos += m[0].length
  const method = m[1]
  const arg = method === 'contains' || method === 'containsKey' ? operand(r, params) : undefined
  if (!r.eat(')')) r.fail("expected ')'")
  return (s) => {
    const v = base(s)
    if (v === null || v === undefined) throw r.c.runtime(at, 'null_pointer_exception', `Cannot invoke "Object.${method}()" on a null value`)
    if (method === 'size') {
      if (typeof v === 'string' || Array.isArray(v)) return v.length
      if (isObject(v)) return Object.keys(v).length
    } else if (method === 'isEmpty') {
      if (typeof v === 'string' || Array.isArray(v)) return v.length === 0
      if (isObject(v)) return Object.keys(v).length === 0
    } else if (method === 'contains') {
      const want = arg!(s)
      if (Array.isArray(v)) return v.some((x) => equal(x, want))
      if (typeof v === 'string' && typeof want === 'string') return v.includes(want)
    } else if (isObject(v)) return Object.hasOwn(v, String(arg!(s)))
    throw r.c.runtime(at, 'illegal_argument_exception', `dynamic method [${typeName(v)}, ${method}/${arg ? 1 : 0}] not found`)
  }
}

function steps(r: CondReader): string[] {
  const out: string[] = []
  for (;;) {
    const save = r.pos
    if (r.eat('.')) {
      r.ws()
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(r.c.text.slice(r.pos))
      if (!m) r.fail('expected a field name')
      // A method call ends the path: it is the caller's to read.
      if (/^\s*\(/.test(r.c.text.slice(r.pos + m[0].length))) {
        r.pos = save
        return out
      }
      r.pos += m[0].length
      out.push(m[0])
    } else if (r.eat('[')) {
      r.ws()
      out.push(stringLiteral(r))
      if (!r.eat(']')) r.fail("expected ']'")
    } else return out
  }
}

/** The value at `path` under `root` (own properties only), null where a step is missing. */
export function walk(root: unknown, path: string[]): unknown {
  let v = root
  for (const step of path) v = isObject(v) && Object.hasOwn(v, step) ? v[step] : null
  return v === undefined ? null : v
}

function stringLiteral(r: CondReader): string {
  r.ws()
  const s = quoted(r.c.text, r.pos, (reason) => r.fail(reason))
  r.pos = s.end
  return s.value
}

/** The string literal (single or double quotes, backslash escapes) at `pos` of `text`, and where it ends. */
export function quoted(text: string, pos: number, fail: (reason: string) => never): { value: string; end: number } {
  const q = text[pos]
  if (q !== "'" && q !== '"') fail('expected a string literal')
  let value = ''
  for (let i = pos + 1; i < text.length; i++) {
    const ch = text[i]
    if (ch === '\\') {
      value += text[++i] ?? ''
      continue
    }
    if (ch === q) return { value, end: i + 1 }
    value += ch
  }
  return fail('unterminated string')
}

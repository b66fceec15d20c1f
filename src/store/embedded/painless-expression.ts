/**
 * The Painless of pipeline aggregation scripts (`bucket_script`, `bucket_selector`, `moving_fn`):
 * one expression, optionally `return ...;`, over `params.<name>` (or `params['name']`), literals,
 * the context's variables (`values`), with `+ - * / %`, comparisons, `&& || !`, `?:`, casts and
 * calls of `Math.*`, `Double.*` and the context's classes (`MovingFunctions.*`). Numbers keep
 * Painless's types: integer literals and integer `params` divide as integers, bucket values are
 * doubles. Errors are Painless's `script_exception` at the offending offset. `lang: expression`
 * reads its variables without `params.`.
 */
import { isObject } from '../query/doc'
import { IllegalArgument, ResourceNotFound, StoreError } from '../errors'

/** A Painless integer (int or long); plain numbers are doubles. */
export class Int {
  constructor(readonly value: number) {}
}
export type Value = number | Int | boolean | string | null | readonly unknown[] | { readonly [k: string]: unknown }

type Fn = (...args: Value[]) => Value
/** Classes whose static methods and constants a script may use (`MovingFunctions`). */
type Classes = Record<string, Record<string, Fn | number | Int>>

type Env = Record<string, Value>
type Node = (env: Env) => Value

export interface Script {
  /** The script's own `params` (integers as Int), to which a pipeline adds its variables. */
  params: Record<string, Value>
  /** Runs the script; `env` holds `params` and the context's variables. */
  run(env: Env): Value
  /** Painless's error about what the script answered. */
  error(type: string, reason: string, phase?: 'compile' | 'runtime'): StoreError
}

const BUILT_IN: Classes = {
  Math: {
    PI: Math.PI,
    E: Math.E,
    abs: (x) => (x instanceof Int ? new Int(Math.abs(x.value)) : Math.abs(num(x))),
    max: (a, b) => arithmetic('max', a, b),
    min: (a, b) => arithmetic('min', a, b),
    pow: (a, b) => Math.pow(num(a), num(b)),
    sqrt: (x) => Math.sqrt(num(x)),
    cbrt: (x) => Math.cbrt(num(x)),
    exp: (x) => Math.exp(num(x)),
    log: (x) => Math.log(num(x)),
    log10: (x) => Math.log10(num(x)),
    floor: (x) => Math.floor(num(x)),
    ceil: (x) => Math.ceil(num(x)),
    round: (x) => new Int(Math.floor(num(x) + 0.5)),
    signum: (x) => Math.sign(num(x)),
    hypot: (a, b) => Math.hypot(num(a), num(b)),
  },
  Double: {
    NaN: Number.NaN,
    POSITIVE_INFINITY: Infinity,
    NEGATIVE_INFINITY: -Infinity,
    MAX_VALUE: Number.MAX_VALUE,
    MIN_VALUE: Number.MIN_VALUE,
    isNaN: (x) => Number.isNaN(num(x)),
    isInfinite: (x) => Math.abs(num(x)) === Infinity,
  },
  Integer: { MAX_VALUE: new Int(2147483647), MIN_VALUE: new Int(-2147483648) },
}

/** A failure while the script runs; `at` is the offset of the operation that failed. */
export class ScriptFailure extends Error {
  at?: number
  constructor(
    readonly type: string,
    reason: string,
  ) {
    super(reason)
  }
}

/** A number's value whatever its Painless type (anything else is Painless's cast error). */
export function num(v: Value): number {
  if (v instanceof Int) return v.value
  if (typeof v === 'number') return v
  throw new ScriptFailure(v === null ? 'null_pointer_exception' : 'class_cast_exception', `Cannot cast ${typeName(v)} to double`)
}

const isNumber = (v: Value): v is number | Int => typeof v === 'number' || v instanceof Int

function typeName(v: Value): string {
  if (v === null) return 'null'
  if (v instanceof Int) return 'java.lang.Integer'
  if (typeof v === 'number') return 'java.lang.Double'
  if (typeof v === 'boolean') return 'java.lang.Boolean'
  if (typeof v === 'string') return 'java.lang.String'
  return Array.isArray(v) ? 'double[]' : 'java.util.HashMap'
}

/** What Painless names a value's primitive type in its casts' errors. */
export function primitiveName(v: Value): string {
  return v instanceof Int ? 'int' : typeof v === 'number' ? 'double' : typeof v === 'boolean' ? 'boolean' : typeName(v)
}

/** Painless's script_exception: the script, the offset it failed at and why. */
function scriptError(source: string, lang: string, offset: number, phase: 'compile' | 'runtime', type: string, reason: string) {
  const start = Math.max(0, offset - 25)
  return new StoreError('script_exception', 400, `${phase} error`, {
    script_stack: [source.slice(start, offset + 25), `${' '.repeat(offset - start)}^---- HERE`],
    script: source,
    lang,
    position: { offset, start, end: Math.min(source.length, offset + 25) },
    caused_by: { type, reason },
  })
}

/** A `script` (a string, or `{source, lang, params}`) compiled for a context's variables and classes. */
export function compileScript(spec: unknown, vars: string[] = [], classes: Classes = {}): Script {
  const given = typeof spec === 'string' ? { source: spec } : spec
  if (!isObject(given)) throw new IllegalArgument('[script] must be a string or an object')
  if (given.id !== undefined) throw new ResourceNotFound(`unable to find script [${String(given.id)}] in cluster state`)
  const lang = typeof given.lang === 'string' ? given.lang : 'painless'
  if (lang !== 'painless' && lang !== 'expression') throw new IllegalArgument(`script_lang not supported [${lang}]`)
  const source = given.source ?? given.inline
  if (typeof source !== 'string') throw new IllegalArgument('must specify either [source] for an inline script or [id] for a stored script')
  const root = new Parser(source, lang, new Set(vars), { ...BUILT_IN, ...classes }).program()
  return {
    params: isObject(given.params) ? (toValue(given.params) as Record<string, Value>) : {},
    run(env) {
      try {
        return root(env)
      } catch (e) {
        if (!(e instanceof ScriptFailure)) throw e
        throw scriptError(source, lang, e.at ?? 0, 'runtime', e.type, e.message)
      }
    },
    error: (type, reason, phase = 'runtime') => scriptError(source, lang, 0, phase, type, reason),
  }
}

/** JSON as Painless reads it: whole numbers are integers. */
function toValue(v: unknown): Value {
  if (typeof v === 'number') return Number.isInteger(v) ? new Int(v) : v
  if (Array.isArray(v)) return v.map(toValue)
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toValue(x)]))
  return v as Value
}

/** `a op b` on Painless's def values: integers stay integers (dividing by 0 fails), `+` joins strings. */
function arithmetic(op: string, a: Value, b: Value): Value {
  if (op === '+' && (typeof a === 'string' || typeof b === 'string')) return `${text(a)}${text(b)}`
  if (!isNumber(a) || !isNumber(b)) throw operandError(op, a, b)
  const ints = a instanceof Int && b instanceof Int
  const x = num(a)
  const y = num(b)
  if (ints && (op === '/' || op === '%') && y === 0) throw new ScriptFailure('arithmetic_exception', '/ by zero')
  const r = OPS[op](x, y)
  return ints ? new Int(op === '/' ? Math.trunc(r) : r) : r
}

/** Painless's failure on an operand of the wrong type: a null one is a NullPointerException. */
function operandError(op: string, a: Value, b: Value): ScriptFailure {
  if (a === null || b === null)
    return new ScriptFailure(
      'null_pointer_exception',
      `Cannot invoke "Object.getClass()" because "${a === null ? 'left' : 'right'}Object" is null`,
    )
  return new ScriptFailure('class_cast_exception', `Cannot apply [${op}] operation to types [${typeName(a)}] and [${typeName(b)}].`)
}

const OPS: Record<string, (x: number, y: number) => number> = {
  '+': (x, y) => x + y,
  '-': (x, y) => x - y,
  '*': (x, y) => x * y,
  '/': (x, y) => x / y,
  '%': (x, y) => x % y,
  max: Math.max,
  min: Math.min,
}

const text = (v: Value) => (v instanceof Int ? String(v.value) : typeof v === 'number' && Number.isInteger(v) ? `${v}.0` : String(v))

function compare(op: string, a: Value, b: Value): boolean {
  if (op === '==' || op === '!=') {
    const same = isNumber(a) && isNumber(b) ? num(a) === num(b) : a === b
    return same === (op === '==')
  }
  if (!isNumber(a) || !isNumber(b)) throw operandError(op, a, b)
  const x = num(a)
  const y = num(b)
  return op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y
}

function truth(v: Value): boolean {
  if (typeof v === 'boolean') return v
  throw new ScriptFailure('class_cast_exception', `cannot cast def [${primitiveName(v)}] to boolean`)
}

/** A node that places its failures at `at`. */
function at(offset: number, node: Node): Node {
  return (env) => {
    try {
      return node(env)
    } catch (e) {
      if (e instanceof ScriptFailure) e.at ??= offset
      throw e
    }
  }
}

interface Token {
  kind: 'number' | 'string' | 'name' | 'op' | 'end'
  text: string
  at: number
}

const OPERATORS = ['==', '!=', '<=', '>=', '&&', '||', '+', '-', '*', '/', '%', '<', '>', '!', '(', ')', '[', ']', '.', ',', '?', ':', ';']

function tokenize(source: string, fail: (at: number, reason: string) => never): Token[] {
  const out: Token[] = []
  let i = 0
  while (i < source.length) {
    const rest = source.slice(i)
    const space = /^\s+/.exec(rest)
    if (space) {
      i += space[0].length
      continue
    }
    const m = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[lLfFdD]?/.exec(rest) ?? /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest)
    const quoted = /^'(?:[^'\\]|\\.)*'|^"(?:[^"\\]|\\.)*"/.exec(rest)
    const op = OPERATORS.find((o) => rest.startsWith(o))
    if (m) out.push({ kind: /^[\d.]/.test(m[0]) ? 'number' : 'name', text: m[0], at: i })
    else if (quoted) out.push({ kind: 'string', text: quoted[0], at: i })
    else if (op) out.push({ kind: 'op', text: op, at: i })
    else fail(i, `unexpected character [${rest[0]}].`)
    i += out[out.length - 1].text.length
  }
  out.push({ kind: 'end', text: '<EOF>', at: source.length })
  return out
}

const CASTS = new Set(['double', 'float', 'int', 'long', 'def'])
const BINARY: string[][] = [['||'], ['&&'], ['==', '!='], ['<', '<=', '>', '>='], ['+', '-'], ['*', '/', '%']]

class Parser {
  private readonly tokens: Token[]
  private pos = 0

  constructor(
    private readonly source: string,
    private readonly lang: string,
    private readonly vars: Set<string>,
    private readonly classes: Classes,
  ) {
    this.tokens = tokenize(source, (offset, reason) => this.fail(reason, offset))
  }

  private fail(reason: string, offset = this.peek().at): never {
    throw scriptError(this.source, this.lang, offset, 'compile', 'illegal_argument_exception', reason)
  }
  private peek(ahead = 0): Token {
    return this.tokens[Math.min(this.pos + ahead, this.tokens.length - 1)]
  }
  private next(): Token {
    return this.tokens[this.pos++]
  }
  private eat(text: string): boolean {
    if (this.peek().kind === 'end' || this.peek().text !== text || this.peek().kind === 'string') return false
    this.pos++
    return true
  }
  private expect(text: string): void {
    if (!this.eat(text)) this.unexpected()
  }
  private unexpected(): never {
    const t = this.peek()
    return this.fail(t.kind === 'end' ? 'unexpected end of script.' : `unexpected token ['${t.text}'].`)
  }

  /** `[return] expression [;]`, and nothing after. */
  program(): Node {
    if (this.peek().text === 'return' && this.peek().kind === 'name') this.pos++
    const node = this.expression()
    this.eat(';')
    if (this.peek().kind !== 'end') this.unexpected()
    return node
  }

  private expression(): Node {
    const test = this.binary(0)
    const q = this.peek().at
    if (!this.eat('?')) return test
    const yes = this.expression()
    this.expect(':')
    const no = this.expression()
    return at(q, (env) => (truth(test(env)) ? yes(env) : no(env)))
  }

  /** Left-associative operators, loosest first (BINARY). */
  private binary(level: number): Node {
    if (level === BINARY.length) return this.unary()
    let left = this.binary(level + 1)
    for (;;) {
      const t = this.peek()
      if (t.kind !== 'op' || !BINARY[level].includes(t.text)) return left
      this.pos++
      const l = left
      const r = this.binary(level + 1)
      left = at(t.at, binaryNode(t.text, l, r))
    }
  }

  private unary(): Node {
    const t = this.peek()
    if (t.kind === 'op' && (t.text === '-' || t.text === '+' || t.text === '!')) {
      this.pos++
      const inner = this.unary()
      if (t.text === '!') return at(t.at, (env) => !truth(inner(env)))
      return t.text === '+' ? inner : at(t.at, (env) => arithmetic('-', new Int(0), inner(env)))
    }
    if (t.text === '(' && this.peek(1).kind === 'name' && CASTS.has(this.peek(1).text) && this.peek(2).text === ')') {
      const type = this.peek(1).text
      this.pos += 3
      return at(t.at, castNode(type, this.unary()))
    }
    return this.postfix(this.primary())
  }

  private primary(): Node {
    const t = this.next()
    if (t.kind === 'number') return numberNode(t.text)
    if (t.kind === 'string') {
      const s = t.text.slice(1, -1).replace(/\\(.)/g, '$1')
      return () => s
    }
    if (t.text === '(' && t.kind === 'op') {
      const inner = this.expression()
      this.expect(')')
      return inner
    }
    if (t.kind !== 'name') {
      this.pos--
      return this.unexpected()
    }
    return this.name(t)
  }

  private name(t: Token): Node {
    const word = t.text
    if (word === 'true' || word === 'false' || word === 'null') {
      const v = word === 'null' ? null : word === 'true'
      return () => v
    }
    if (word === 'params' || this.vars.has(word)) return (env) => env[word] ?? null
    const cls = this.classes[word]
    if (cls) return this.member(cls, word)
    if (this.lang === 'expression') return (env) => (env.params as Record<string, Value>)[word] ?? null
    return this.fail(`cannot resolve symbol [${word}]`, t.at)
  }

  /** `Class.CONSTANT` or `Class.method(args)`. */
  private member(cls: Classes[string], className: string): Node {
    this.expect('.')
    const t = this.next()
    const m = cls[t.text]
    if (t.kind !== 'name' || m === undefined) return this.fail(`unknown field or method [${t.text}] of [${className}]`, t.at)
    if (typeof m !== 'function') return () => m
    const args = this.arguments()
    return at(t.at, (env) => m(...args.map((a) => a(env))))
  }

  private arguments(): Node[] {
    this.expect('(')
    const args: Node[] = []
    if (this.eat(')')) return args
    do args.push(this.expression())
    while (this.eat(','))
    this.expect(')')
    return args
  }

  /** `.field`, `.method(args)` and `[index]` after a value. */
  private postfix(base: Node): Node {
    for (;;) {
      const t = this.peek()
      if (this.eat('[')) {
        const index = this.expression()
        this.expect(']')
        const of = base
        base = at(t.at, (env) => element(of(env), index(env)))
      } else if (this.eat('.')) {
        const name = this.next()
        if (name.kind !== 'name') return this.unexpected()
        const of = base
        if (this.peek().text === '(') {
          const args = this.arguments()
          base = at(name.at, (env) =>
            method(
              of(env),
              name.text,
              args.map((a) => a(env)),
            ),
          )
        } else base = at(name.at, (env) => field(of(env), name.text))
      } else return base
    }
  }
}

function binaryNode(op: string, l: Node, r: Node): Node {
  if (op === '&&') return (env) => truth(l(env)) && truth(r(env))
  if (op === '||') return (env) => truth(l(env)) || truth(r(env))
  if (op in OPS) return (env) => arithmetic(op, l(env), r(env))
  return (env) => compare(op, l(env), r(env))
}

function numberNode(literal: string): Node {
  const double = /[.eEdDfF]/.test(literal)
  const n = Number(literal.replace(/[lLfFdD]$/, ''))
  const v = double ? n : new Int(n)
  return () => v
}

function castNode(type: string, inner: Node): Node {
  return (env) => {
    const v = inner(env)
    if (type === 'def') return v
    const n = num(v)
    return type === 'double' ? n : type === 'float' ? Math.fround(n) : new Int(Math.trunc(n))
  }
}

/** `map.name` is `map.get('name')` in Painless; an array has its `length`. */
function field(v: Value, name: string): Value {
  if (Array.isArray(v) && name === 'length') return new Int(v.length)
  if (isObject(v)) return (v[name] as Value) ?? null
  throw new ScriptFailure(
    v === null ? 'null_pointer_exception' : 'illegal_argument_exception',
    `dynamic getter [${typeName(v)}, ${name}] not found`,
  )
}

function element(v: Value, index: Value): Value {
  if (Array.isArray(v)) {
    const i = num(index)
    if (!(i >= 0 && i < v.length))
      throw new ScriptFailure('array_index_out_of_bounds_exception', `Index ${i} out of bounds for length ${v.length}`)
    return v[i] as Value
  }
  return field(v, String(index instanceof Int ? index.value : index))
}

function method(v: Value, name: string, args: Value[]): Value {
  const size = Array.isArray(v) ? v.length : isObject(v) ? Object.keys(v).length : undefined
  if (name === 'size' && size !== undefined) return new Int(size)
  if (name === 'isEmpty' && size !== undefined) return size === 0
  if (name === 'get' && args.length === 1) return element(v, args[0])
  if (name === 'containsKey' && isObject(v)) return Object.hasOwn(v, String(args[0]))
  if (name === 'doubleValue' && isNumber(v)) return num(v)
  if ((name === 'intValue' || name === 'longValue') && isNumber(v)) return new Int(Math.trunc(num(v)))
  throw new ScriptFailure(
    v === null ? 'null_pointer_exception' : 'illegal_argument_exception',
    `dynamic method [${typeName(v)}, ${name}/${args.length}] not found`,
  )
}

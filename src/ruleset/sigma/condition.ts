/**
 * Sigma condition grammar (pySigma's): operands are search identifiers or `1|any|all of
 * <pattern|them>`; operators `not`, `and`, `or` (lower case only) and parentheses. Binding from
 * loosest to tightest: or, and, not, `x of`, parentheses.
 */
import { SigmaInvalid, SigmaUnsupported } from './errors'

export type Condition =
  | { op: 'and' | 'or'; args: Condition[] }
  | { op: 'not'; arg: Condition }
  | { op: 'id'; name: string }
  | { op: 'of'; quantifier: 'any' | 'all'; pattern: string }

const TOKEN = /\s*(?:(\()|(\))|(\|)|([\w.*-]+)|(\S))/y

export function parseCondition(text: string): Condition {
  const invalid = (detail: string) => new SigmaInvalid(`condition '${text}'`, detail)
  const tokens: string[] = []
  TOKEN.lastIndex = 0
  for (let m = TOKEN.exec(text); m && m[0].trim() !== ''; m = TOKEN.exec(text)) {
    if (m[3])
      throw new SigmaUnsupported(
        `condition aggregation '${text.slice(text.indexOf('|')).trim()}'`,
        'pipe aggregations are obsolete since Sigma 2.0; use a correlation rule',
      )
    if (m[5]) throw invalid(`unexpected character '${m[5]}'`)
    tokens.push(m[1] ?? m[2] ?? m[4])
  }
  if (tokens.length === 0) throw invalid('empty condition')
  let pos = 0
  const peek = () => tokens[pos]
  const take = () => tokens[pos++]

  /** `operand (op operand)*`, one node for the whole run. */
  const chain = (op: 'or' | 'and', operand: () => Condition): Condition => {
    const args = [operand()]
    while (peek() === op) {
      take()
      args.push(operand())
    }
    return args.length === 1 ? args[0] : { op, args }
  }
  const parseOr = (): Condition => chain('or', parseAnd)
  const parseAnd = (): Condition => chain('and', parseNot)
  const parseNot = (): Condition => {
    if (peek() === 'not') {
      take()
      return { op: 'not', arg: parseNot() }
    }
    return parseAtom()
  }
  const parseAtom = (): Condition => {
    const t = take()
    if (t === undefined) throw invalid('unexpected end')
    if (t === '(') {
      const inner = parseOr()
      if (take() !== ')') throw invalid("missing ')'")
      return inner
    }
    if (t === '1' || t === 'any' || t === 'all') {
      if (peek() === 'of') {
        take()
        const pattern = take()
        if (pattern === undefined || !/^[\w*-]+$/.test(pattern)) throw invalid(`'${t} of' needs an identifier pattern or 'them'`)
        return { op: 'of', quantifier: t === 'all' ? 'all' : 'any', pattern }
      }
    }
    if (t === ')' || ['and', 'or', 'not', 'of', 'them'].includes(t)) throw invalid(`unexpected '${t}'`)
    if (t.includes('*')) throw invalid(`the pattern '${t}' is only valid after '1 of' or 'all of'`)
    return { op: 'id', name: t }
  }

  const tree = parseOr()
  if (pos < tokens.length) {
    const t = tokens[pos]
    const hint = tokens.some((x) => /^(AND|OR|NOT|OF|THEM)$/i.test(x) && x !== x.toLowerCase()) ? ' (operators are lower case)' : ''
    throw invalid(`unexpected '${t}'${hint}`)
  }
  return tree
}

/**
 * Date math in index names, OpenSearch's DateMathExpressionResolver: `<logstash-{now/M}>` names
 * `logstash-2024.06.01`, `<logs-{now/d{yyyy.MM|+12:00}}>` formats in a pattern and zone. Only a
 * name wrapped in `<` `>` is read so; `{` and `}` must be escaped (`\{`) to be kept as text.
 * OpenSearch resolves before anything else (wildcards, exclusions, existence), so a name resolved
 * here is what every later step (and the caller's authorization) sees.
 */
import { StoreError } from './errors'
import { formatInZone } from './embedded/aggs-time'
import { parseDateMath } from './query/dates'
import { zoneOf } from './query/zones'

const DEFAULT_FORMAT = 'uuuu.MM.dd'

/** Each comma-separated name of an index expression resolved (see resolveDateMathName). */
export function resolveDateMathExpression(expression: string, now: number): string {
  if (!expression.includes('<')) return expression
  return expression
    .split(',')
    .map((name) => resolveDateMathName(name, now))
    .join(',')
}

/** The name a date math name stands for at `now`; any other name as it is. */
export function resolveDateMathName(name: string, now: number): string {
  if (!name.startsWith('<') || !name.endsWith('>')) return name
  // OpenSearch quotes the expression from after `<` to the end, `>` included.
  const shown = name.slice(1)
  const fail = (why: string) => new StoreError('parse_exception', 400, `invalid dynamic name expression [${shown}]. ${why}`)
  let out = ''
  let placeholder: string | undefined
  let inFormat = false
  let escape = false
  for (let i = 1; i < name.length - 1; i++) {
    const escaped = escape
    escape = false
    const c = name[i]
    if (c === '\\') {
      if (escaped) out += c
      else escape = true
      continue
    }
    if (placeholder !== undefined) {
      if (c === '{' && !(inFormat && escaped)) {
        if (inFormat) throw fail(`invalid character in placeholder at position [${i}]`)
        inFormat = true
      } else if (c === '}' && !(inFormat && escaped)) {
        if (!inFormat) {
          out += placeholderValue(placeholder, now)
          placeholder = undefined
          continue
        }
        inFormat = false
      }
      placeholder += c
    } else if (c === '{' && !escaped) placeholder = ''
    else if (c === '}' && !escaped)
      throw fail(
        `invalid character at position [${i}]. \`{\` and \`}\` are reserved characters and should be escaped when used as part of the index name using \`\\\` (e.g. \`\\{text\\}\`)`,
      )
    else out += c
  }
  if (placeholder !== undefined) throw fail('date math placeholder is open ended')
  if (out === '') throw new StoreError('parse_exception', 400, 'nothing captured')
  return out
}

/** One `{math}` or `{math{format|zone}}` placeholder (its braces left off) as text. */
function placeholderValue(text: string, now: number): string {
  const open = text.indexOf('{')
  if (open < 0) return formatInZone(parseDateMath(text, false, now), zoneOf(undefined), DEFAULT_FORMAT)
  const fail = (why: string) => new StoreError('parse_exception', 400, `invalid dynamic name expression [${text}]. ${why}`)
  if (text.lastIndexOf('}') !== text.length - 1) throw fail('missing closing `}` for date math format')
  if (open === text.length - 2) throw fail('missing date format')
  const [pattern, zoneId] = text.slice(open + 1, -1).split('|', 2)
  const zone = zoneOf(zoneId)
  return formatInZone(parseDateMath(text.slice(0, open), false, now, undefined, zone), zone, pattern)
}

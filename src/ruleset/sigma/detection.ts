/**
 * Search identifiers (the `detection` entries other than `condition`) rendered as query trees.
 * Plain strings are case-insensitive whole-value matches (term / wildcard), `null` is "absent",
 * keywords are case-insensitive substring matches over the configured keyword fields.
 */
import { cidrQuery } from './cidr'
import { type Query, and, exists, fieldref, named, not, or, range, regexp, term, wildcard } from './dsl'
import { SigmaInvalid, SigmaUnsupported } from './errors'
import { type Item, type Raw, type Value, buildItem } from './modifiers'
import { compileRegex } from './regex'
import { hasCasedLetters, hasWildcards, plainText, type SigmaString, toWildcardPattern, withPrefixAny, withSuffixAny } from './sigma-string'

export interface DetectionContext {
  mapField: (sigmaField: string) => string
  keywordFields: string[]
  placeholders: (name: string) => SigmaString[] | undefined
  isIpField: (field: string) => boolean
  /** Document fields the rule reads (for `query_field_names`). */
  fields: Set<string>
}

const isScalar = (v: unknown): v is Raw => v === null || ['string', 'number', 'boolean'].includes(typeof v)

export function compileSearch(name: string, definition: unknown, ctx: DetectionContext): Query {
  const invalid = (detail: string) => new SigmaInvalid(`search identifier '${name}'`, detail)
  const compileMap = (map: Record<string, unknown>): Query => {
    const entries = Object.entries(map)
    if (entries.length === 0) throw invalid('empty map')
    return and(entries.map(([key, value]) => compileEntry(key, value, invalid, ctx)))
  }
  let q: Query
  if (isScalar(definition)) q = keywords([definition], [], ctx)
  else if (Array.isArray(definition)) {
    if (definition.length === 0) throw invalid('empty list')
    const scalars = definition.filter(isScalar)
    const maps = definition.filter((d) => !isScalar(d))
    for (const m of maps) if (typeof m !== 'object' || Array.isArray(m)) throw invalid('a list may hold maps or plain values only')
    q = or([...(scalars.length ? [keywords(scalars, [], ctx)] : []), ...maps.map((m) => compileMap(m as Record<string, unknown>))])
  } else if (typeof definition === 'object') q = compileMap(definition as Record<string, unknown>)
  else throw invalid('unsupported value')
  return named(q, name)
}

function compileEntry(key: string, value: unknown, invalid: (d: string) => Error, ctx: DetectionContext): Query {
  const [field, ...modifiers] = key.split('|')
  if (modifiers.some((m) => m === '')) throw invalid(`empty modifier in '${key}'`)
  let raws: Raw[]
  if (Array.isArray(value)) {
    if (!value.every(isScalar)) throw invalid(`'${key}' must hold plain values`)
    raws = value
  } else if (isScalar(value)) raws = [value]
  else throw invalid(`'${key}' must hold a plain value or a list of them`)

  if (field === '') {
    if (raws.length === 0) throw invalid(`keyword list '${key}' is empty`)
    return keywords(raws, modifiers, ctx)
  }
  const target = ctx.mapField(field)
  ctx.fields.add(target)
  // pySigma: `Field: []` is a null test.
  if (raws.length === 0) {
    if (modifiers.length > 0) throw invalid(`'${key}' has no values`)
    return not(exists(target))
  }
  const item = buildItem(modifiers, raws, ctx.placeholders)
  return combine(item, (v) => render(target, v, item.cased, ctx))
}

function combine(item: Item, leaf: (v: Value) => Query): Query {
  const groups = item.groups.map((g) => or(g.map(leaf)))
  const q = item.all ? and(groups) : or(groups)
  return item.neq ? not(q) : q
}

function render(field: string, v: Value, cased: boolean, ctx: DetectionContext): Query {
  switch (v.kind) {
    case 'str':
      return stringQuery(field, v, cased)
    case 'num':
    case 'bool':
      return term(field, v.value)
    case 'null':
      return not(exists(field))
    case 'exists':
      return v.value ? exists(field) : not(exists(field))
    case 'cmp':
      return range(field, v.op, v.value)
    case 'cidr':
      return cidrQuery(field, v.net, ctx.isIpField(field))
    case 'fieldref': {
      const ref = ctx.mapField(v.ref)
      ctx.fields.add(ref)
      // Compared like plain strings: whole value (or the mode), case-insensitive unless `cased`.
      return fieldref(field, ref, v.mode, !cased)
    }
    case 're': {
      const r = compileRegex(v.pattern, v.flags)
      return regexp(field, r.lucene, r.pcre, r.caseInsensitive)
    }
  }
}

function stringQuery(field: string, s: SigmaString, cased: boolean): Query {
  if (!hasWildcards(s)) {
    const text = plainText(s)
    return term(field, text, !cased && hasCasedLetters(text))
  }
  const pattern = toWildcardPattern(s)
  return wildcard(field, pattern, !cased && hasCasedLetters(pattern))
}

/** Field-less values: a case-insensitive substring of any configured keyword field. */
function keywords(raws: Raw[], modifiers: string[], ctx: DetectionContext): Query {
  if (ctx.keywordFields.length === 0) throw new SigmaUnsupported('keyword search', 'no keyword fields are configured for this log type')
  for (const f of ctx.keywordFields) ctx.fields.add(f)
  const strings = raws.map((r) => {
    if (r === null) throw new SigmaInvalid('keyword search', 'null is not a keyword')
    return typeof r === 'string' ? r : String(r)
  })
  const item = buildItem(modifiers, strings, ctx.placeholders)
  return combine(item, (v) => {
    if (v.kind === 're') return or(ctx.keywordFields.map((f) => render(f, v, item.cased, ctx)))
    if (v.kind !== 'str') throw new SigmaInvalid('keyword search', `a ${v.kind} value needs a field`)
    const s = withSuffixAny(withPrefixAny(v))
    return or(ctx.keywordFields.map((f) => stringQuery(f, s, item.cased)))
  })
}

/**
 * `_analyze` (`GET|POST /_analyze`, `/<index>/_analyze`) with the analyzers this store has: the
 * built-in `standard`, `simple`, `whitespace`, `keyword` and `stop` analyzers, the matching
 * tokenizers (`standard`, `letter`, `lowercase`, `whitespace`, `keyword`) and a few token filters
 * (`lowercase`, `uppercase`, `asciifolding`, `stop`, `trim`, `reverse`, `unique`, `length`), by
 * name or as an inline definition, and those an index's `analysis` settings build from them; `field`
 * takes the field's analyzer from the index mapping.
 * Answers OpenSearch's `{tokens: [{token, start_offset, end_offset, type, position}]}` (or
 * `detail` with `explain`), at most `index.analyze.max_token_count` (10,000) tokens.
 */
import { ANALYZERS, analyzerOf, FILTERS, indexAnalysis, TOKENIZERS, type Analyzer, type Token } from '../store/query/analyzers'
import { isObject } from '../store/query/doc'
import type { FieldMapping, Mappings } from '../store/port'
import { badRequest, type RequestContext } from './context'
import type { IndexRouter } from './router'

export const ANALYZE_ACTION = 'indices:admin/analyze'

function mappingOf(m: Mappings, field: string): FieldMapping | undefined {
  const parts = field.split('.')
  let props = m.properties
  for (let i = 0; i < parts.length; i++) {
    const def = props?.[parts[i]]
    if (!def) return undefined
    if (i === parts.length - 1) return def
    const sub = def.fields?.[parts.slice(i + 1).join('.')]
    if (sub) return sub
    props = def.properties
  }
  return undefined
}

const KEYS = new Set(['analyzer', 'tokenizer', 'filter', 'char_filter', 'field', 'text', 'explain', 'attributes', 'normalizer', 'index'])

async function analyze(ctx: RequestContext) {
  const index = ctx.part('index')
  const { body, texts } = await analyzeRequest(ctx, index)
  const { analyzer, maxTokens, positionGap } = await chooseAnalyzer(ctx, index, body)
  const tokens = tokenize(analyzer, texts, maxTokens, positionGap)
  if (body.explain === true || body.explain === 'true') return explained(analyzer, body, tokens)
  return { tokens }
}

/** The request body with the query parameters it lacks filled in, checked; and the texts to analyze. */
async function analyzeRequest(ctx: RequestContext, index: string | undefined): Promise<{ body: Record<string, unknown>; texts: string[] }> {
  const body: Record<string, unknown> = (await ctx.json()) ?? {}
  for (const k of Object.keys(body))
    if (!KEYS.has(k))
      throw badRequest(
        `Unknown parameter [${k}] in request body or parameter is of the wrong type[START_OBJECT] `,
        'illegal_argument_exception',
      )
  for (const k of ['analyzer', 'tokenizer', 'field', 'text', 'normalizer'] as const) {
    const v = ctx.str(k)
    if (v !== undefined && body[k] === undefined) body[k] = v
  }
  const filterParam = ctx.list('filter')
  if (filterParam && body.filter === undefined) body.filter = filterParam
  if (ctx.flag('explain') !== undefined && body.explain === undefined) body.explain = ctx.flag('explain')
  const texts = body.text === undefined ? [] : [body.text].flat()
  if (texts.length === 0 || !texts.every((t) => typeof t === 'string'))
    throw badRequest('Validation Failed: 1: text is missing;', 'action_request_validation_exception')
  if (body.char_filter !== undefined && [body.char_filter].flat().length > 0)
    throw badRequest('[char_filter] is not supported by this server', 'illegal_argument_exception')
  for (const k of ['analyzer', 'field', 'normalizer'] as const)
    if (body[k] !== undefined && typeof body[k] !== 'string') throw badRequest(`[${k}] must be a string`, 'illegal_argument_exception')
  if (body.analyzer !== undefined && (body.tokenizer !== undefined || body.filter !== undefined))
    throw badRequest('Validation Failed: 1: tokenizer/filters must not be set when analyzer is set;', 'action_request_validation_exception')
  if (body.field !== undefined && index === undefined && body.analyzer === undefined)
    throw badRequest('Validation Failed: 1: index is required when field is set;', 'action_request_validation_exception')
  return { body, texts: texts as string[] }
}

/** The analyzer the request names (or its field's, or one built of its tokenizer and filters), and the index's limits. */
async function chooseAnalyzer(
  ctx: RequestContext,
  index: string | undefined,
  body: Record<string, unknown>,
): Promise<{ analyzer: Analyzer; maxTokens: number; positionGap: number }> {
  let maxTokens = 10000
  let analyzer: Analyzer | undefined
  let positionGap = 0
  let local = indexAnalysis(undefined)
  if (index !== undefined) {
    const [concrete] = await ctx.authorized(ANALYZE_ACTION, index)
    if (concrete === undefined) throw badRequest(`no such index [${index}]`)
    const settings = await ctx.store.getSettings({ index: concrete })
    const s = settings[concrete]?.settings.index ?? {}
    const a = isObject(s.analyze) ? s.analyze.max_token_count : s['analyze.max_token_count']
    if (a !== undefined && Number.isFinite(Number(a))) maxTokens = Number(a)
    local = indexAnalysis(s.analysis)
    if (body.field !== undefined && body.analyzer === undefined && body.tokenizer === undefined) {
      const mappings = (await ctx.store.getMapping({ index: concrete }))[concrete]?.mappings ?? {}
      const def = mappingOf(mappings, String(body.field))
      const type = def?.type ?? 'text'
      if (type === 'text' || type === 'match_only_text') {
        const named = (def as Record<string, unknown> | undefined)?.analyzer
        analyzer =
          (typeof named === 'string' ? local.analyzer(named) : undefined) ??
          analyzerOf(typeof named === 'string' && ANALYZERS[named] ? named : 'standard')
        positionGap = 100
      } else analyzer = analyzerOf('keyword')
    }
  }
  analyzer ??=
    body.tokenizer !== undefined || body.filter !== undefined
      ? {
          name: '_custom',
          tokenizer: local.tokenizer(body.tokenizer ?? 'keyword'),
          filters: [body.filter ?? []].flat().map(local.filter),
        }
      : ((typeof body.analyzer === 'string' ? local.analyzer(body.analyzer) : undefined) ??
        analyzerOf(typeof body.analyzer === 'string' ? body.analyzer : 'standard'))
  if (body.normalizer !== undefined) {
    if (body.normalizer !== 'lowercase')
      throw badRequest(`failed to find normalizer under [${String(body.normalizer)}]`, 'illegal_argument_exception')
    analyzer = { name: 'lowercase', tokenizer: TOKENIZERS.keyword, filters: [FILTERS.lowercase] }
  }
  return { analyzer, maxTokens, positionGap }
}

function tokenize(analyzer: Analyzer, texts: string[], maxTokens: number, positionGap: number): Token[] {
  const tokens: Token[] = []
  let offset = 0
  let position = -1
  for (const text of texts) {
    const raw = analyzer.tokenizer(text)
    let ts: Token[] = raw.map((t, i) => ({
      token: t.token,
      start_offset: offset + t.start,
      end_offset: offset + t.end,
      type: t.type,
      position: position + 1 + i,
    }))
    for (const f of analyzer.filters) ts = f(ts)
    for (const t of ts) {
      tokens.push(t)
      if (tokens.length > maxTokens)
        throw badRequest(
          `The number of tokens produced by calling _analyze has exceeded the allowed maximum of [${maxTokens}]. This limit can be set by changing the [index.analyze.max_token_count] index level setting.`,
          'illegal_argument_exception',
        )
    }
    position += raw.length + positionGap
    offset += text.length + 1
  }
  return tokens
}

/** `explain`: the tokens with their bytes, under the analyzer (or the tokenizer and each filter) that made them. */
function explained(analyzer: Analyzer, body: Record<string, unknown>, tokens: Token[]) {
  const detailed = tokens.map((t) => ({
    ...t,
    bytes: `[${[...Buffer.from(t.token)].map((b) => b.toString(16).padStart(2, '0')).join(' ')}]`,
    positionLength: 1,
    termFrequency: 1,
  }))
  if (analyzer.name === '_custom')
    return {
      detail: {
        custom_analyzer: true,
        charfilters: [],
        tokenizer: { name: typeof body.tokenizer === 'string' ? body.tokenizer : '_anonymous_tokenizer', tokens: detailed },
        tokenfilters: [body.filter ?? []]
          .flat()
          .map((f, i) => ({ name: typeof f === 'string' ? f : `_anonymous_tokenfilter_[${i}]`, tokens: detailed })),
      },
    }
  return { detail: { custom_analyzer: false, analyzer: { name: analyzer.name, tokens: detailed } } }
}

export function analyzeRoutes(r: IndexRouter): void {
  r.on(['GET', 'POST'], ['/_analyze', '/:index/_analyze'], analyze)
}

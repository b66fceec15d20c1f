/**
 * The intervals source of parsed rules (parse.ts), as OpenSearch's IntervalsSourceProvider and
 * IntervalBuilder make it on a shard: `match` text analysed by the field's analyzer (the standard
 * one here) into terms combined by mode and max_gaps, the multi-term rules normalised (lower-cased)
 * and bounded by their expansion limit, each filter applied to its rule's source.
 */
import { IllegalArgument, QueryShardError, StoreError } from '../../errors'
import { analyze } from '../analysis'
import { type FieldSpec, kindOf } from '../field-spec'
import { editDistanceWithin, fuzzyEdits } from '../fuzzy'
import { luceneRegExp } from '../lucene-regexp'
import { wildcardMatcher } from '../wildcard'
import type { Filter, Mode, Rule } from './parse'
import { Builder, type Expansion, multiTerm, NO_INTERVALS, or, type Source, term } from './sources'

/** Lucene's Intervals.DEFAULT_MAX_EXPANSIONS, and the fixed limit of OpenSearch's fuzzy rule. */
const DEFAULT_MAX_EXPANSIONS = 128

/** Where a rule reads positions (`read`, a source path) and the field whose type it is checked against. */
interface Place {
  read: string
  name: string
  spec?: FieldSpec
}

interface BuildOptions {
  types?: ReadonlyMap<string, FieldSpec>
  /** indices.query.bool.max_clause_count: the bound of Lucene's disjunction pull-ups. */
  maxClauses: number
  /** Count each multi-term rule's terms over every document read (a search), not per document only. */
  perSearch: boolean
}

export class SourceBuilder {
  private readonly b: Builder

  constructor(private readonly o: BuildOptions) {
    this.b = new Builder(o.maxClauses)
  }

  /** The place of a mapped field, undefined when unmapped (OpenSearch then matches nothing). */
  place(name: string): Place | undefined {
    if (!this.o.types) return { read: name, name }
    const spec = this.o.types.get(name)
    return spec && { read: spec.path ?? name, name, spec }
  }

  /** Whether every `use_field` the rules name outside filters is mapped (IntervalQueryBuilder's masked fields). */
  useFieldsMapped(rule: Rule): boolean {
    if (rule.kind === 'any_of' || rule.kind === 'all_of') return rule.rules.every((r) => this.useFieldsMapped(r))
    return rule.useField === undefined || this.place(rule.useField) !== undefined
  }

  build(rule: Rule, at: Place): Source {
    switch (rule.kind) {
      case 'match': {
        const own = this.fixed(at, rule.useField)
        this.checkText(own, false)
        const terms = analyze(rule.query).map((t) => term(own.read, t))
        const source = this.combine(terms, rule.maxGaps, rule.mode)
        // The filter reads the query's field (only the rule's own source is fixed to use_field).
        return this.filtered(source, rule.filter, { ...at, name: own.name, spec: own.spec })
      }
      case 'any_of':
        return this.filtered(or(rule.rules.map((r) => this.build(r, at))), rule.filter, at)
      case 'all_of':
        return this.filtered(
          this.combine(
            rule.rules.map((r) => this.build(r, at)),
            rule.maxGaps,
            rule.mode,
          ),
          rule.filter,
          at,
        )
      default:
        return this.multiTerm(rule, at)
    }
  }

  /** IntervalBuilder.combineSources */
  private combine(sources: Source[], maxGaps: number, mode: Mode): Source {
    if (sources.length === 0) return NO_INTERVALS
    if (sources.length === 1) return sources[0]
    if (maxGaps === 0 && mode === 'ordered') return this.b.phrase(sources)
    let inner: Source
    if (mode === 'ordered') inner = this.b.ordered(sources)
    else if (mode === 'unordered') inner = this.b.unordered(sources)
    else {
      inner = this.b.unorderedNoOverlaps(sources[0], sources[1])
      for (const s of sources.slice(2)) inner = this.b.unorderedNoOverlaps(maxGaps === -1 ? inner : this.b.maxGaps(maxGaps, inner), s)
    }
    return maxGaps === -1 ? inner : this.b.maxGaps(maxGaps, inner)
  }

  private filtered(source: Source, filter: Filter | undefined, at: Place): Source {
    if (filter === undefined) return source
    return this.b.filter(filter.type, source, this.build(filter.rule, at))
  }

  /** `use_field`: the rule reads (and is checked against) that field instead. */
  private fixed(at: Place, useField: string | undefined): Place {
    if (useField === undefined) return at
    // An unmapped use_field makes the whole query match nothing (useFieldsMapped); one in a filter,
    // which OpenSearch does not check, reads no term here.
    return this.place(useField) ?? { read: useField, name: useField, spec: { type: 'text' } }
  }

  /** A field the rule cannot read positions of: `positions` for the rules that check positions first. */
  private checkText(p: Place, positions: boolean): void {
    const type = p.spec?.type ?? 'text'
    if (type === 'match_only_text' || (positions && kindOf(type) !== 'text'))
      throw new QueryShardError(`failed to create query: Cannot create intervals over field [${p.name}] with no positions indexed`)
    if (kindOf(type) !== 'text')
      throw new QueryShardError(
        `failed to create query: Can only use interval queries on text fields - not on [${p.name}] which is of type [${type}]`,
      )
  }

  private multiTerm(rule: Exclude<Rule, { kind: 'match' | 'any_of' | 'all_of' }>, at: Place): Source {
    const own = this.fixed(at, rule.useField)
    this.checkText(own, rule.kind !== 'prefix')
    const expansion = (name: string, accepts: (t: string) => boolean, given?: number): Expansion => ({
      name,
      accepts,
      max: this.maxExpansions(given),
      seen: this.o.perSearch ? new Set() : undefined,
    })
    switch (rule.kind) {
      case 'prefix': {
        const prefix = rule.prefix.toLowerCase()
        return multiTerm(
          own.read,
          expansion(`${prefix}*`, (t) => t.startsWith(prefix)),
        )
      }
      case 'wildcard': {
        const pattern = rule.pattern.toLowerCase()
        return multiTerm(own.read, expansion(pattern, wildcardMatcher(pattern), rule.maxExpansions))
      }
      case 'regexp':
        return multiTerm(
          own.read,
          expansion(rule.pattern, regexpMatcher(rule.pattern, rule.flags, rule.caseInsensitive), rule.maxExpansions),
        )
      case 'fuzzy':
        return multiTerm(own.read, expansion(rule.term, fuzzyMatcher(rule)))
    }
  }

  /** A rule's max_expansions (none, or not positive: Lucene's 128), at most the clause limit. */
  private maxExpansions(given: number | undefined): number {
    if (given === undefined || given <= 0) return DEFAULT_MAX_EXPANSIONS
    if (given > this.o.maxClauses)
      throw new QueryShardError(
        `failed to create query: maxExpansions [${given}] cannot be greater than BooleanQuery.getMaxClauseCount [${this.o.maxClauses}]`,
      )
    return given
  }
}

/** A regexp that does not parse is refused when the query is created (query_shard_exception). */
function regexpMatcher(pattern: string, flags: string, caseInsensitive: boolean): (t: string) => boolean {
  try {
    const re = luceneRegExp(pattern, flags, caseInsensitive)
    return (t) => re.test(t)
  } catch (e) {
    if (e instanceof IllegalArgument) throw new QueryShardError(`failed to create query: ${e.reason}`)
    throw e
  }
}

/** FuzzyQuery's automaton: the normalised term's first prefix_length characters, then within its edits. */
function fuzzyMatcher(rule: Extract<Rule, { kind: 'fuzzy' }>): (t: string) => boolean {
  if (rule.prefixLength < 0) throw new QueryShardError('failed to create query: prefixLength cannot be negative.')
  let edits: number
  try {
    edits = fuzzyEdits(rule.fuzziness, rule.term)
  } catch (e) {
    if (e instanceof StoreError) throw new QueryShardError(`failed to create query: ${e.reason}`)
    throw e
  }
  const value = rule.term.toLowerCase()
  const head = [...value].slice(0, rule.prefixLength).join('')
  return (t) => t.startsWith(head) && editDistanceWithin(t, value, edits, rule.transpositions)
}

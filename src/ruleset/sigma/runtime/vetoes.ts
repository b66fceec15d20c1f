/**
 * What proves a compiled rule (a query-DSL tree) CANNOT match an event: atoms about one field's
 * folded keyword values, any one of which, holding, makes a `not` of the rule fail. SigmaHQ's
 * exclusion-only rules (`not Image|endswith: .exe`, `not Image|contains: '\'`, `not 1 of
 * filter_main_*` over system paths) wait only for the field's presence, so without this they
 * were tested on nearly every process event and failed there.
 *
 * The contract is the converse of requirements.ts: an atom here must hold ONLY when the leaf it
 * came from matches, so every leaf is read exactly (a keyword field with one source path, its
 * ignore_above as the atom's `limit`, a case-insensitive literal or one that folding leaves
 * alone); anything else yields no veto, and the rule is then tested as before.
 */
import { soleEntry } from '../../../json'
import { fold, kindOf } from '../../../store/query'
import { VALUE_END, VALUE_START } from '../../../store/query/aho-corasick'
import { minimumShouldMatch } from '../../../store/query/compile'
import { FLAT_OBJECT } from '../../../store/query/flat-object'
import { anyOfClauses, literalLeaf } from '../../../store/query/literal-groups'
import type { Atom, Types } from './requirements'

/** A value atom that proves its leaf matches, for a keyword value at most `limit` long (any length when undefined). */
export type Veto = Extract<Atom, { kind: 'equals' | 'prefix' | 'suffix' | 'contains' }> & { limit?: number }

/** Vetoes kept per rule: any subset of them is still valid, and a long list is a rule's rare exclusions. */
export const MAX_VETOES = 64

const list = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v])
const NONE: Veto[] = []

/** Atoms any one of which, holding, proves `query` does not match; none when in doubt. */
export function vetoesOf(query: unknown, types: Types): Veto[] {
  try {
    return failing(query, types).slice(0, MAX_VETOES)
  } catch {
    return NONE
  }
}

/** What proves `q` fails: one of its required clauses fails, or one of its excluded ones matches. */
function failing(q: unknown, types: Types): Veto[] {
  const clause = soleEntry(q)
  if (!clause) return NONE
  const [type, body] = clause
  if (type === 'constant_score') return failing(body.filter, types)
  if (type !== 'bool') return NONE
  const should = list(body.should)
  const must = [...list(body.must), ...list(body.filter)]
  const out: Veto[] = []
  for (const x of must) out.push(...failing(x, types))
  for (const x of list(body.must_not)) out.push(...matching(x, types))
  // One should clause that must hold (the only one, as a must): it failing fails the bool.
  const msm =
    body.minimum_should_match === undefined ? (must.length === 0 ? 1 : 0) : minimumShouldMatch(body.minimum_should_match, should.length)
  if (should.length === 1 && msm === 1) out.push(...failing(should[0], types))
  return out
}

/** What proves `q` matches: one of an any-of's clauses matching, an exact literal leaf, or the sole exclusion of a bool failing. */
function matching(q: unknown, types: Types): Veto[] {
  const leaf = literalLeaf(q)
  if (leaf) {
    const field = exactField(leaf.field, types)
    if (!field) return NONE
    // The scan's value anchors inside a literal would match at a value's ends.
    if (ANCHORS.test(leaf.literal) || (!leaf.ci && !FOLDS_TO_ITSELF.test(leaf.literal))) return NONE
    const value = leaf.ci ? fold(leaf.literal) : leaf.literal
    return [{ kind: leaf.shape, path: field.path, value, ...(field.limit === undefined ? {} : { limit: field.limit }) }]
  }
  const any = anyOfClauses(q)
  if (any) return any.clauses.flatMap((c) => matching(c, types))
  const clause = soleEntry(q)
  if (!clause) return NONE
  const [type, body] = clause
  if (type === 'constant_score') return matching(body.filter, types)
  if (type !== 'bool' || list(body.should).length > 0) return NONE
  const must = [...list(body.must), ...list(body.filter)]
  const mustNot = list(body.must_not)
  if (must.length === 1 && mustNot.length === 0) return matching(must[0], types)
  if (must.length === 0 && mustNot.length === 1) return failing(mustNot[0], types)
  return NONE
}

/**
 * ASCII without letters: folding leaves such a literal, and every value character that folds
 * into one of its characters, as it is (only letters have case variants), so a folded value
 * holds it exactly where the value does and a case-sensitive leaf is read by the folding scan.
 */
const FOLDS_TO_ITSELF = /^[\x00-\x40\x5b-\x60\x7b-\x7f]*$/
const ANCHORS = new RegExp(`[${VALUE_START}${VALUE_END}]`)

/** The one source path a keyword leaf reads, and its ignore_above; undefined when the reading is not exactly that. */
function exactField(name: string, types: Types): { path: string; limit?: number } | undefined {
  if (name.startsWith('_')) return undefined // metadata fields
  if (!types) return name.endsWith('.keyword') ? undefined : { path: name } // `x.keyword` may read `x`
  const spec = types.get(name)
  if (spec === undefined || spec.type === FLAT_OBJECT || kindOf(spec.type) !== 'keyword') return undefined
  return { path: spec.path ?? name, limit: spec.ignore_above }
}

/**
 * The field types a rule set is evaluated with over one source index: the index mapping, plus —
 * for a field the rules read that no event has carried yet — the type the index's dynamic
 * templates would give it (the event streams type every schema field that way). Without this a
 * rule on a not-yet-seen schema field would be evaluated as unmapped, and after a first event as
 * whatever dynamic mapping guessed. A field neither mapped nor templated in a user's own index is
 * reported, so creating a detector over it is refused instead of never matching.
 */
import { dynamicTemplateFor, fieldSpecs } from '../../store/embedded'
import type { Mappings } from '../../store/port'
import type { FieldSpec } from '../../store/query'
import { FLAT_OBJECT, flatObjectRoot } from '../../store/query/flat-object'
import { Lru } from '../../lru'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Template answers by path, per set of dynamic templates (by content: every mapping read is a
 * copy). The event streams hold 2,289 templates, tried in order for each field: a thousand
 * SigmaHQ rules read a few hundred fields, mostly raw names no template takes, and each detector
 * run, warm-up and logtest call asked again for every field of every rule.
 */
const TEMPLATE_SETS_KEPT = 16
const templateAnswers = new Lru<string, Map<string, FieldSpec | null>>(TEMPLATE_SETS_KEPT)
const PATHS_KEPT = 20_000
const answersFor = new WeakMap<Mappings, Map<string, FieldSpec | null>>()

function answers(mappings: Mappings): Map<string, FieldSpec | null> {
  let mine = answersFor.get(mappings)
  if (mine) return mine
  const key = Bun.hash(JSON.stringify(mappings.dynamic_templates ?? [])).toString(36)
  mine = templateAnswers.get(key)
  if (!mine) templateAnswers.set(key, (mine = new Map()))
  answersFor.set(mappings, mine)
  return mine
}

/** The field spec the index's dynamic templates would give a string value at `path`; undefined when none matches. */
export function templateSpec(mappings: Mappings, path: string): FieldSpec | undefined {
  const known = answers(mappings)
  const hit = known.get(path)
  if (hit !== undefined) return hit ?? undefined
  const spec = templateSpecOf(mappings, path)
  if (known.size >= PATHS_KEPT) known.clear()
  known.set(path, spec ?? null)
  return spec
}

function templateSpecOf(mappings: Mappings, path: string): FieldSpec | undefined {
  const m = dynamicTemplateFor(mappings, path, path.slice(path.lastIndexOf('.') + 1), 'string')
  const type = m?.type ?? 'object'
  if (!m || type === 'object' || type === 'nested') return undefined
  return {
    type,
    ...(m.ignore_above !== undefined ? { ignore_above: m.ignore_above } : {}),
    ...(m.format !== undefined ? { format: m.format } : {}),
  }
}

/** The index mapping's field specs, completed by its templates for `fields`; undefined when the index has no mapping yet. */
export function sourceFieldSpecs(mappings: Mappings | undefined, fields: Iterable<string>): Map<string, FieldSpec> | undefined {
  if (!mappings?.properties && !mappings?.dynamic_templates) return undefined
  const specs = fieldSpecs(mappings)
  for (const f of new Set(fields)) {
    if (specs.has(f)) continue
    const spec = templateSpec(mappings, f)
    if (spec) specs.set(f, spec)
    else templateFlatObjectRoot(mappings, specs, f)
  }
  return specs
}

/**
 * A path below a flat_object (`process.pe.imports.name`) is no field of its own: it resolves
 * through its root, mapped already or given by a template (added to `specs` then).
 */
function templateFlatObjectRoot(mappings: Mappings, specs: Map<string, FieldSpec>, path: string): void {
  if (flatObjectRoot(specs, path) !== undefined) return
  for (let at = path.indexOf('.'); at > 0; at = path.indexOf('.', at + 1)) {
    const root = path.slice(0, at)
    if (specs.has(root)) return // mapped as something else: no template applies below it
    const spec = templateSpec(mappings, root)
    if (spec?.type === FLAT_OBJECT) {
      specs.set(root, spec)
      return
    }
  }
}

/**
 * Fields the rules read that the index neither maps nor templates. With dynamic mapping on, a
 * first event would map them as OpenSearch guesses (strings as `text`), which Sigma's exact and
 * wildcard matches do not see: the reference refuses such a detector, and so do we.
 */
export function unresolvedFields(mappings: Mappings, fields: Iterable<string>): string[] {
  const specs = sourceFieldSpecs(mappings, fields) ?? new Map()
  const out: string[] = []
  for (const f of fields) {
    // Mapped but not searchable (`index: false`) is the mapping's own choice, not a gap.
    if (specs.has(f) || flatObjectRoot(specs, f) !== undefined || declared(mappings, f)) continue
    if (!out.includes(f)) out.push(f)
  }
  return out
}

/** Whether the mapping declares `path` at all (properties, or a multi-field of one). */
function declared(m: Mappings, path: string): boolean {
  let props: Record<string, unknown> | undefined = m.properties
  const parts = path.split('.')
  for (let i = 0; i < parts.length; i++) {
    const def = props?.[parts[i]]
    if (!isObject(def)) return false
    if (i === parts.length - 1) return true
    if (isObject(def.fields) && i === parts.length - 2 && isObject(def.fields[parts[i + 1]])) return true
    props = isObject(def.properties) ? def.properties : undefined
  }
  return false
}

/** Mappings kept by content, so an unchanged mapping is the same object and its rule set is reused. */
const TYPES_CACHE_MAX_ENTRIES = 32
const typesByContent = new Lru<string, Map<string, FieldSpec>>(TYPES_CACHE_MAX_ENTRIES)
export function stableTypes(types: Map<string, FieldSpec>): Map<string, FieldSpec> {
  const key = JSON.stringify([...types])
  const hit = typesByContent.get(key)
  if (hit) return hit
  typesByContent.set(key, types)
  return types
}

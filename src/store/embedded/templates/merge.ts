/**
 * The two ways OpenSearch merges the mappings of templates. Composable templates (and the create
 * request after them) merge one after the other with MergeReason.INDEX_TEMPLATE: a field given
 * again replaces the earlier definition, objects merge field by field, dynamic templates by
 * name, `_meta` deeply. Legacy templates merge as XContentHelper.mergeDefaults does: every key
 * at every depth, the earlier (higher order) map winning.
 */
import { IllegalArgument } from '../../errors'
import { own, setOwn } from '../../own'
import type { FieldMapping, Mappings } from '../../port'
import { isObject } from '../../query/doc'

type Json = Record<string, unknown>

const isObjectField = (def: FieldMapping): boolean => def.type === undefined || def.type === 'object' || def.type === 'nested'

/** `content` filled from `defaults` wherever it has no value of its own (lists of one-key objects merge by key). */
export function mergeDefaults(content: Json, defaults: Json): Json {
  for (const [key, d] of Object.entries(defaults)) {
    const c = own(content, key)
    if (c === undefined) setOwn<unknown>(content, key, structuredClone(d))
    else if (isObject(c) && isObject(d)) mergeDefaults(c, d)
    else if (Array.isArray(c) && Array.isArray(d)) setOwn<unknown>(content, key, mergeLists(c, d))
  }
  return content
}

const oneKeyed = (list: unknown[]): list is Json[] => list.every((v) => isObject(v) && Object.keys(v).length === 1)

function mergeLists(content: unknown[], defaults: unknown[]): unknown[] {
  if (!oneKeyed(content) || !oneKeyed(defaults)) {
    const out = [...defaults]
    for (const v of content) if (!out.some((o) => Bun.deepEquals(o, v))) out.push(v)
    return out
  }
  const byKey = new Map<string, Json>(content.map((m) => [Object.keys(m)[0], m]))
  for (const m of defaults) {
    const key = Object.keys(m)[0]
    const mine = byKey.get(key)
    if (mine) mergeDefaults(mine, m)
    else byKey.set(key, structuredClone(m))
  }
  return [...byKey.values()]
}

/** `update` merged over `base` as a composable template's part (or the create request) is. */
export function mergeTemplateMappings(base: Mappings, update: Mappings): Mappings {
  const out = structuredClone(base) as Json
  for (const [k, v] of Object.entries(update)) {
    if (k === 'properties') continue
    const cur = own(out, k)
    if (k === 'dynamic_templates' && Array.isArray(v) && Array.isArray(cur)) setOwn<unknown>(out, k, byName(cur as Json[], v as Json[]))
    else if (k === '_meta' && isObject(v) && isObject(cur)) setOwn<unknown>(out, k, mergeDefaults(structuredClone(v), cur))
    else setOwn<unknown>(out, k, structuredClone(v))
  }
  if (isObject(update.properties)) setOwn<unknown>(out, 'properties', mergeFields((out.properties ?? {}) as Json, update.properties, ''))
  return out as Mappings
}

/** Dynamic templates by name: one given again replaces the earlier in its place. */
function byName(base: Json[], update: Json[]): Json[] {
  const out = new Map<string, Json>(base.map((t) => [Object.keys(t)[0], t]))
  for (const t of update) out.set(Object.keys(t)[0], structuredClone(t))
  return [...out.values()]
}

function mergeFields(base: Json, update: Record<string, FieldMapping>, prefix: string): Json {
  for (const [name, def] of Object.entries(update)) {
    const path = prefix + name
    const cur = own(base, name) as FieldMapping | undefined
    if (cur === undefined || !isObject(cur)) {
      setOwn<unknown>(base, name, structuredClone(def))
      continue
    }
    if (isObjectField(cur) !== isObjectField(def))
      throw new IllegalArgument(`can't merge a non object mapping [${path}] with an object mapping`)
    if (!isObjectField(def)) {
      setOwn<unknown>(base, name, structuredClone(def))
      continue
    }
    setOwn<unknown>(base, name, mergeObjectField(cur, def, path))
  }
  return base
}

/** An object or nested field given again: the parameters it gives replaced, its fields merged. */
function mergeObjectField(cur: FieldMapping, def: FieldMapping, path: string): FieldMapping {
  const wasNested = cur.type === 'nested'
  if (wasNested !== (def.type === 'nested'))
    throw new IllegalArgument(`cannot change object mapping from ${wasNested ? 'nested to non-nested' : 'non-nested to nested'}`)
  const merged: Json = { ...cur }
  for (const [k, v] of Object.entries(def)) if (k !== 'properties') setOwn<unknown>(merged, k, structuredClone(v))
  if (isObject(def.properties))
    setOwn<unknown>(merged, 'properties', mergeFields({ ...(cur.properties ?? {}) }, def.properties, `${path}.`))
  return merged as FieldMapping
}

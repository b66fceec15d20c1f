/**
 * OpenSearch's `flat_object`: the whole JSON object is one field and its leaves are keyword
 * values (numbers and booleans as their string form). A query on the root field matches any leaf;
 * a query on a dotted path below it (`attrs.a.b`) matches the leaves at exactly that path. The
 * paths below a flat_object create no mappings, so they are resolved here, against the mapped
 * root, by the evaluator, the SQL planner, the aggregations and the rule index alike.
 */
import { FieldPath, internedPaths, isObject } from './doc'

export const FLAT_OBJECT = 'flat_object'

/** The mapped flat_object field a dotted name lies below (`attrs` for `attrs.a.b`); undefined when none. */
export function flatObjectRoot(types: ReadonlyMap<string, { type: string }>, name: string): string | undefined {
  for (let at = name.indexOf('.'); at > 0; at = name.indexOf('.', at + 1)) {
    const prefix = name.slice(0, at)
    if (types.get(prefix)?.type === FLAT_OBJECT) return prefix
  }
  return undefined
}

/**
 * Every scalar leaf of a flat_object value with its path below the root (keys joined by `.`, so
 * `{"a": {"b": 1}}` and `{"a.b": 1}` both give `a.b`, as FieldPath reads them; arrays are
 * transparent). A scalar given as the whole value is a leaf with no path. Nulls are no values.
 */
export function flatLeaves(value: unknown, each: (path: string | undefined, leaf: string | number | boolean) => void): void {
  const walk = (v: unknown, path: string | undefined): void => {
    if (v === null || v === undefined) return
    if (Array.isArray(v)) {
      for (const el of v) walk(el, path)
      return
    }
    if (isObject(v)) {
      for (const k of Object.keys(v)) walk(v[k], path === undefined ? k : `${path}.${k}`)
      return
    }
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') each(path, v)
  }
  walk(value, undefined)
}

/**
 * Key of one leaf in the `<root>._valueAndPath` entry of the field-value index (OpenSearch's
 * sub-field of the same name): the path as a JSON string, then the keyword value. The quoted path
 * is prefix-free (its closing quote is its first unescaped one), so an equality, prefix or range
 * on the value under one path is a range of these keys, and two paths never mix.
 */
export const valueAndPathKey = (path: string, value: string): string => `${JSON.stringify(path)}${value}`

/** The field-value index entry holding a flat_object's `path=value` keys. */
export const valueAndPathField = (root: string): string => `${root}._valueAndPath`

/** Whether `field` is the `_valueAndPath` entry of a mapped flat_object. */
export function isValueAndPathField(types: ReadonlyMap<string, { type: string }>, field: string): boolean {
  const suffix = '._valueAndPath'
  return field.endsWith(suffix) && types.get(field.slice(0, -suffix.length))?.type === FLAT_OBJECT
}

/** Reads every leaf below a path: the values of a flat_object root field. */
class FlatLeavesPath extends FieldPath {
  override collect(source: unknown): unknown[] {
    const out: unknown[] = []
    for (const v of super.collect(source)) flatLeaves(v, (_, leaf) => out.push(leaf))
    return out
  }
}

/** Shared per name, as `fieldPath`. */
export const flatLeavesPath = internedPaths((path) => new FlatLeavesPath(path))

/**
 * Mappings as OpenSearch applies them on write: dynamic mapping of new fields (strings become
 * `text` with a `.keyword` sub-field, or `date` when they look like one), `dynamic: strict`
 * rejections, `dynamic: false` and `enabled: false` (stored, not indexed), type checks of values,
 * and the list of (field, value) pairs the embedded store indexes for SQL lookups.
 */
import { isGeoValue } from '../query/geo'
import { type ExceptionCause, IllegalArgument, MapperParsing, ParsingError, StoreError, StrictMappingViolation } from '../errors'
import type { FieldMapping, Mappings } from '../port'
import { isObject, keywordOf } from '../query/doc'
import { type FieldSpec, kindOf } from '../query/compile'
import { dynamicDate, looksLikeDate, parseDate } from '../query/dates'
import { FLAT_OBJECT, flatLeaves, valueAndPathField, valueAndPathKey } from '../query/flat-object'
import { isIntegerType, Malformed, MALFORMED_IGNORABLE, parseLeaf } from '../query/malformed'
import { numericSetting } from '../query/limits'
import { describeNested } from '../query/nested'
import { wildcardToRegExp } from '../names'
import { normalizerOf } from '../query/normalizer'
import { own, setOwn } from '../own'
import { FIELD_TYPES } from '../port'

export const KNOWN_TYPES: ReadonlySet<string> = new Set(FIELD_TYPES)

/** Field kinds stored in the `fv` side table (and so answerable from SQLite indexes). */
export type IndexedKind = 'keyword' | 'number' | 'date' | 'boolean'

const dynamicOf = (m: { dynamic?: unknown }, inherited: string): string => (m.dynamic === undefined ? inherited : String(m.dynamic))

/** Check a mapping the caller sent (types known, `dynamic` valid) and normalise it. */
export function validateMappings(m: Mappings, opts: { put?: boolean } = {}): Mappings {
  if (!isObject(m)) throw new MapperParsing('Failed to parse mapping: mapping must be an object')
  // `{"_doc": {...}}` is the pre-7 typed form, still accepted with the type name `_doc`.
  if (Object.keys(m).length === 1 && isObject((m as Record<string, unknown>)._doc)) m = (m as Record<string, unknown>)._doc as Mappings
  checkDynamic(m.dynamic)
  checkDynamicTemplates(m.dynamic_templates)
  if (isObject(m.properties)) m = { ...m, properties: expandDottedNames(m.properties) }
  const walk = (props: unknown, prefix: string) => {
    if (props === undefined) return
    if (!isObject(props)) throw new MapperParsing(`Failed to parse mapping: properties of [${prefix || '_doc'}] must be an object`)
    for (const [name, def] of Object.entries(props)) {
      const path = prefix ? `${prefix}.${name}` : name
      if (name === '') {
        // OpenSearch's messages: a new index's mapping wraps the cause; a put mapping answers it bare.
        const cause = new IllegalArgument('name cannot be empty string')
        if (opts.put) throw cause
        throw new MapperParsing(`Failed to parse mapping [_doc]: ${cause.reason}`, cause)
      }
      if (!isObject(def))
        throw new MapperParsing(
          `Failed to parse mapping: Expected map for property [fields] on field [${path}] but got a class java.lang.String`,
        )
      const type = def.type === undefined ? (def.properties !== undefined ? 'object' : 'object') : def.type
      if (typeof type !== 'string' || !KNOWN_TYPES.has(type))
        throw new MapperParsing(`Failed to parse mapping: No handler for type [${String(type)}] declared on field [${name}]`)
      if (type === 'alias' && typeof def.path !== 'string') {
        const cause = new MapperParsing(`The [path] property must be specified for field [${name}].`)
        throw new MapperParsing(`Failed to parse mapping [_doc]: ${cause.reason}`, cause)
      }
      checkDynamic(def.dynamic)
      walk(def.properties, path)
      if (def.fields !== undefined) walk(def.fields, path)
    }
  }
  walk(m.properties, '')
  return isObject(m.properties) ? { ...m, properties: withWildcardDefaults(m.properties) } : m
}

/**
 * A `wildcard` field as OpenSearch (3.4) keeps it: `doc_values` true unless it says false, and no
 * `index` (the field is always indexed), its multi-fields likewise.
 */
function withWildcardDefaults(props: Record<string, FieldMapping>): Record<string, FieldMapping> {
  const out: Record<string, FieldMapping> = {}
  for (const [name, def] of Object.entries(props)) {
    if (!isObject(def)) {
      setOwn(out, name, def)
      continue
    }
    let d: FieldMapping = def
    if (def.type === 'wildcard') {
      const { type, normalizer, doc_values, index: _index, fields, ...rest } = def as Record<string, unknown>
      d = { type, ...(normalizer === undefined ? {} : { normalizer }), doc_values: doc_values ?? true, ...rest } as FieldMapping
      if (fields !== undefined) d.fields = fields as FieldMapping['fields']
    }
    if (isObject(d.properties)) d = { ...d, properties: withWildcardDefaults(d.properties) }
    if (isObject(d.fields)) d = { ...d, fields: withWildcardDefaults(d.fields) }
    setOwn(out, name, d)
  }
  return out
}

/**
 * A property named `a.b` is the sub-property `b` of an object `a`, as OpenSearch's mapping parser
 * reads it (merged with an `a` given alongside). Multi-fields (`fields`) are left as they are.
 */
function expandDottedNames(props: Record<string, FieldMapping>): Record<string, FieldMapping> {
  const out: Record<string, FieldMapping> = {}
  for (const [name, def] of Object.entries(props)) {
    const expanded = isObject(def) && isObject(def.properties) ? { ...def, properties: expandDottedNames(def.properties) } : def
    const parts = name.split('.')
    if (name === '' || parts.some((p) => p === '')) {
      setOwn(out, name, expanded) // refused with the empty-name error below
      continue
    }
    let level = out
    for (const p of parts.slice(0, -1)) {
      const cur = own(level, p)
      const next: FieldMapping = !isObject(cur)
        ? { properties: {} }
        : !isObject(cur.properties)
          ? { ...cur, properties: {} }
          : { ...cur, properties: { ...cur.properties } }
      setOwn(level, p, next)
      level = next.properties!
    }
    const last = parts[parts.length - 1]
    const prev = own(level, last)
    setOwn(
      level,
      last,
      isObject(prev) && isObject(prev.properties) && isObject(expanded) && isObject(expanded.properties)
        ? { ...prev, ...expanded, properties: { ...prev.properties, ...expanded.properties } }
        : expanded,
    )
  }
  return out
}

function checkDynamicTemplates(list: unknown): void {
  if (list === undefined) return
  if (!Array.isArray(list))
    throw new MapperParsing('Failed to parse mapping: Dynamic template syntax error. An array of named objects is expected.')
  for (const t of list) {
    const keys = isObject(t) ? Object.keys(t) : []
    const def = keys.length === 1 ? (t as Record<string, unknown>)[keys[0]] : undefined
    if (!isObject(def) || !isObject(def.mapping))
      throw new MapperParsing('Failed to parse mapping: Dynamic template syntax error. An array of named objects is expected.')
    if (typeof def.mapping.type === 'string' && !KNOWN_TYPES.has(def.mapping.type) && !def.mapping.type.includes('{'))
      throw new MapperParsing(`Failed to parse mapping: No handler for type [${def.mapping.type}] declared on field [${keys[0]}]`)
  }
}

function checkDynamic(d: unknown): void {
  if (d === undefined) return
  if (![true, false, 'true', 'false', 'strict', 'strict_allow_templates', 'false_allow_templates'].includes(d as never))
    throw new MapperParsing(`Failed to parse mapping: Could not convert [dynamic] to boolean`)
}

/**
 * Merge `update` into `base` (put-mapping semantics): new fields are added, existing fields keep
 * their type (changing it is an error), objects merge recursively. Dynamic templates merge by
 * name when a template and a create request compose an index's mapping; a put mapping's
 * `dynamic_templates` replace the index's list (`put: true`), as in OpenSearch.
 */
export function mergeMappings(base: Mappings, update: Mappings, opts: { put?: boolean } = {}): Mappings {
  const out: Mappings = structuredClone(base)
  for (const [k, v] of Object.entries(update)) {
    if (k === 'properties') continue
    if (k === 'dynamic_templates' && Array.isArray(v) && out.dynamic_templates && !opts.put) {
      // By name, as OpenSearch composes them: a template of the same name is replaced in place.
      const merged = [...out.dynamic_templates]
      for (const t of v as Array<Record<string, Record<string, unknown>>>) {
        const [name] = Object.keys(t)
        const at = merged.findIndex((x) => Object.keys(x)[0] === name)
        if (at >= 0) merged[at] = t
        else merged.push(t)
      }
      out.dynamic_templates = merged
      continue
    }
    setOwn(out as Record<string, unknown>, k, v)
  }
  if (update.properties) out.properties = mergeProps(out.properties ?? {}, update.properties, '')
  return out
}

function mergeProps(base: Record<string, FieldMapping>, update: Record<string, FieldMapping>, prefix: string) {
  for (const [name, def] of Object.entries(update)) {
    const path = prefix ? `${prefix}.${name}` : name
    const cur = own(base, name)
    if (!cur) {
      setOwn(base, name, structuredClone(def))
      continue
    }
    const curType = cur.type ?? 'object'
    const newType = def.type ?? 'object'
    if (curType !== newType) throw new IllegalArgument(`mapper [${path}] cannot be changed from type [${curType}] to [${newType}]`)
    for (const [k, v] of Object.entries(def)) if (k !== 'properties' && k !== 'fields') setOwn(cur as Record<string, unknown>, k, v)
    if (def.properties) cur.properties = mergeProps(cur.properties ?? {}, def.properties, path)
    if (def.fields) cur.fields = mergeProps(cur.fields ?? {}, def.fields, path)
  }
  return base
}

/** Flat `path -> FieldSpec` of every searchable field, multi-fields included (`msg.keyword`). */
export function fieldSpecs(m: Mappings, ignoreMalformed = false): Map<string, FieldSpec> {
  const out = new Map<string, FieldSpec>()
  const aliases: Array<[alias: string, target: string]> = []
  const nested = { paths: new Map<string, { parent: string; inParent: boolean; inRoot: boolean }>(), objects: new Set<string>() }
  // `scope`: the nested path the fields are under ('' = the root document).
  const walk = (props: Record<string, FieldMapping> | undefined, prefix: string, scope: string) => {
    if (!props) return
    for (const [name, def] of Object.entries(props)) {
      const path = prefix ? `${prefix}.${name}` : name
      const type = def.type ?? 'object'
      if (type === 'object' || type === 'nested') {
        const flags = def as Record<string, unknown>
        if (type === 'nested')
          nested.paths.set(path, {
            parent: scope,
            inParent: String(flags.include_in_parent) === 'true',
            inRoot: String(flags.include_in_root) === 'true',
          })
        else nested.objects.add(path)
        if (def.enabled === false) continue
        walk(def.properties, path, type === 'nested' ? path : scope)
        continue
      }
      if (type === 'alias') {
        aliases.push([path, String((def as Record<string, unknown>).path)])
        continue
      }
      // A multi-field is a field of its own: OpenSearch indexes it whatever its parent's `index` says.
      const skips = MALFORMED_IGNORABLE.has(kindOf(type)) && ((def.ignore_malformed as boolean | undefined) ?? ignoreMalformed)
      out.set(path, { ...specOf(def), ...(skips ? { ignore_malformed: true } : {}) })
      if (def.fields) for (const [sub, sdef] of Object.entries(def.fields)) out.set(`${path}.${sub}`, { ...specOf(sdef), path })
    }
  }
  walk(m.properties, '', '')
  if (nested.paths.size > 0) describeNested(out, nested)
  // An alias reads its field: the field's spec under the alias's name (OpenSearch refuses an alias
  // of an alias, or of an object, when the mapping is put).
  for (const [alias, target] of aliases) {
    const spec = out.get(target)
    if (spec && spec.alias === undefined) out.set(alias, { ...spec, path: spec.path ?? target, alias: target })
  }
  return out
}

/** What a leaf's mapping tells its queries (a multi-field's type defaults to keyword). */
function specOf(def: FieldMapping): FieldSpec {
  const type = def.type ?? 'keyword'
  const flags = def as Record<string, unknown>
  const spec: FieldSpec = { type, ignore_above: def.ignore_above, format: def.format }
  if (typeof flags.normalizer === 'string') spec.normalizer = flags.normalizer
  // A wildcard field is always indexed (OpenSearch drops its `index`).
  if (String(def.index) === 'false' && type !== 'wildcard') spec.index = false
  if (String(flags.doc_values) === 'false') spec.doc_values = false
  if (isObject(flags.index_prefixes)) spec.index_prefixes = true
  if (String(flags.fielddata) === 'true') spec.fielddata = true
  return spec
}

/**
 * Whether a field's values go to the `fv` table: indexed, or kept as doc values (which OpenSearch
 * also searches, since 3.0).
 */
const keepsValues = (def: FieldMapping): boolean =>
  String(def.index) !== 'false' || String((def as Record<string, unknown>).doc_values) !== 'false'

/** A keyword as its field indexes it (its normalizer applied). */
const normalized = (def: FieldMapping, k: string): string => normalizerOf(def as FieldSpec)?.(k) ?? k

/** Leaf fields mapped with `store: true`, by path, with their types (what `stored_fields` can return). */
export function storedFields(m: Mappings): Map<string, string> {
  const out = new Map<string, string>()
  const walk = (props: Record<string, FieldMapping> | undefined, prefix: string) => {
    for (const [name, def] of Object.entries(props ?? {})) {
      const path = prefix ? `${prefix}.${name}` : name
      const type = def.type ?? 'object'
      if (type === 'object' || type === 'nested') walk(def.properties, path)
      else if (String(def.store) === 'true') out.set(path, type)
    }
  }
  walk(m.properties, '')
  return out
}

/** A source value as the stored field gives it back: numbers as numbers, dates formatted. */
export function storedValue(v: unknown, type: string, format?: string): unknown {
  switch (kindOf(type)) {
    case 'number': {
      const n = typeof v === 'number' ? v : Number(v)
      return Number.isFinite(n) ? (isIntegerType(type) ? Math.trunc(n) : n) : v
    }
    case 'date': {
      const ms = parseDate(v, format)
      return ms === undefined ? v : new Date(ms).toISOString()
    }
    case 'boolean':
      return v === true || v === 'true'
    default:
      return v
  }
}

/**
 * `{"a.b": 1}` maps like `{"a": {"b": 1}}`; names that cannot be split into object paths are
 * refused with OpenSearch's messages (its DocumentParser splits like Java's `String.split`,
 * which drops trailing empty parts: `"a."` is `a`).
 */
export function splitFieldName(name: string): string[] {
  if (name === '') throw new IllegalArgument('field name cannot be an empty string')
  if (!name.includes('.')) return [name]
  const parts = name.split('.')
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop()
  if (parts.length === 0) throw new IllegalArgument('field name cannot contain only the character [.]')
  for (const p of parts)
    if (p.trim() === '') {
      if (p !== '') throw new IllegalArgument(`object field cannot contain only whitespace: ['${name}']`)
      throw new IllegalArgument(`object field starting or ending with a [.] makes object resolution ambiguous: [${name}]`)
    }
  return parts
}

export function indexedKind(spec: FieldSpec): IndexedKind | undefined {
  const k = kindOf(spec.type)
  if (k === 'keyword' || k === 'number' || k === 'date' || k === 'boolean') return k
  return undefined
}

export type IndexedValue = [field: string, value: string | number]

/** OpenSearch's mapping limits (index settings), so that no document can explode a mapping. */
export interface MappingLimits {
  /** `index.mapping.total_fields.limit` */
  totalFields: number
  /** `index.mapping.depth.limit` */
  depth: number
  /** `index.mapping.nested_fields.limit` */
  nestedFields: number
}

export const DEFAULT_MAPPING_LIMITS: MappingLimits = { totalFields: 1000, depth: 20, nestedFields: 50 }

/** `index.mapping.ignore_malformed` (false by default). */
export const ignoresMalformed = (settings: Record<string, unknown> | undefined): boolean =>
  String(settings?.['index.mapping.ignore_malformed']) === 'true'

export function mappingLimits(settings: Record<string, unknown> | undefined): MappingLimits {
  const read = (key: string, dflt: number) => numericSetting(settings, key, dflt)
  return {
    totalFields: read('index.mapping.total_fields.limit', DEFAULT_MAPPING_LIMITS.totalFields),
    depth: read('index.mapping.depth.limit', DEFAULT_MAPPING_LIMITS.depth),
    nestedFields: read('index.mapping.nested_fields.limit', DEFAULT_MAPPING_LIMITS.nestedFields),
  }
}

const depthError = (limit: number, path: string) =>
  new IllegalArgument(`Limit of mapping depth [${limit}] has been exceeded due to object field [${path}]`)
const totalError = (limit: number) => new IllegalArgument(`Limit of total fields [${limit}] has been exceeded`)

/**
 * Every field alias of a whole mapping names a field of it (a leaf or a multi-field, not an object
 * and not another alias), as OpenSearch checks when a mapping is made or merged.
 */
export function checkFieldAliases(m: Mappings): void {
  const types = new Map<string, string>()
  const aliases: Array<[alias: string, target: string]> = []
  const walk = (props: Record<string, FieldMapping> | undefined, prefix: string) => {
    for (const [name, def] of Object.entries(props ?? {})) {
      const path = prefix ? `${prefix}.${name}` : name
      const type = def.type ?? 'object'
      types.set(path, type)
      if (type === 'alias') aliases.push([path, String((def as Record<string, unknown>).path)])
      walk(def.properties, path)
      for (const sub of Object.keys(def.fields ?? {})) types.set(`${path}.${sub}`, def.fields![sub].type ?? 'keyword')
    }
  }
  walk(m.properties, '')
  for (const [alias, target] of aliases) {
    const type = types.get(target)
    const why =
      type === undefined || type === 'object' || type === 'nested'
        ? 'an alias must refer to an existing field in the mappings.'
        : type === 'alias'
          ? 'an alias cannot refer to another alias.'
          : undefined
    if (why) throw new MapperParsing(`Invalid [path] value [${target}] for field alias [${alias}]: ${why}`)
  }
}

/** The three limits over a whole mapping, as OpenSearch checks every mapping update. */
export function checkMappingLimits(m: Mappings, limits: MappingLimits): void {
  let total = 0
  let nested = 0
  const walk = (props: Record<string, FieldMapping> | undefined, prefix: string, dots: number) => {
    for (const [name, def] of Object.entries(props ?? {})) {
      const path = prefix ? `${prefix}.${name}` : name
      total++
      const type = def.type ?? 'object'
      if (type === 'object' || type === 'nested') {
        if (type === 'nested' && ++nested > limits.nestedFields)
          throw new IllegalArgument(`Limit of nested fields [${limits.nestedFields}] has been exceeded`)
        if (dots + 2 > limits.depth) throw depthError(limits.depth, path)
        walk(def.properties, path, dots + 1)
      } else if (def.fields) total += Object.keys(def.fields).length
      if (total > limits.totalFields) throw totalError(limits.totalFields)
    }
  }
  walk(m.properties, '', 0)
}

/**
 * Apply the mapping to one document: returns the (possibly grown) mapping when dynamic mapping
 * added fields, and the indexable values. Throws the errors OpenSearch gives for bad values.
 */
export function applyMapping(
  mapping: Mappings,
  doc: Record<string, unknown>,
  id: string,
  collect: IndexedValue[] | undefined,
  limits: MappingLimits = DEFAULT_MAPPING_LIMITS,
  ignoreMalformed = false,
): Mappings | undefined {
  const ctx = new Walk(mapping, id, collect, limits, ignoreMalformed)
  ctx.object(doc, mapping as FieldMapping, '', dynamicOf(mapping, 'true'), true)
  return ctx.grown
}

class Walk {
  grown: Mappings | undefined
  private root: Mappings

  constructor(
    mapping: Mappings,
    private readonly id: string,
    private readonly out: IndexedValue[] | undefined,
    private readonly limits: MappingLimits,
    /** `index.mapping.ignore_malformed`: what a field without its own `ignore_malformed` does. */
    private readonly ignoreMalformed: boolean,
  ) {
    this.root = mapping
  }

  /** Fields this document added: it stops as soon as they alone pass the total limit. */
  private added = 0

  /** Copy-on-write: the first dynamic addition clones the mapping, later ones edit the clone. */
  private writable(path: string[]): FieldMapping {
    if (!this.grown) {
      this.grown = structuredClone(this.root)
      this.root = this.grown
    }
    let node = this.grown as FieldMapping
    for (const p of path) node = own(node.properties, p)!
    return node
  }

  object(obj: Record<string, unknown>, mapping: FieldMapping, prefix: string, dynamic: string, indexed: boolean): void {
    const known = mappedChildren(mapping.properties, prefix)
    for (const rawKey of Object.keys(obj)) {
      const value = obj[rawKey]
      const child = known?.get(rawKey)
      if (child !== undefined) {
        if (value !== null && value !== undefined) this.value(value, child.def, child.path, dynamic, indexed)
        continue
      }
      let parts: string[]
      try {
        parts = splitFieldName(rawKey)
      } catch (e) {
        // OpenSearch's DocumentParser wraps the name's problem: mapper_parsing_exception "failed to parse", caused by it.
        throw e instanceof IllegalArgument ? new MapperParsing('failed to parse', e) : e
      }
      if (value === null || value === undefined) continue
      let m = mapping
      let path = prefix
      let dyn = dynamic
      let ok = true
      for (let i = 0; i < parts.length; i++) {
        const name = parts[i]
        const parentPath = path
        path = path ? `${path}.${name}` : name
        const last = i === parts.length - 1
        let def = own(m.properties, name)
        if (!def) {
          const sample = last ? value : {}
          // The *_allow_templates modes let in exactly the fields a dynamic template maps.
          const template = dyn === 'strict' || dyn === 'false' ? undefined : this.template(path, name, sample)
          if (dyn === 'strict' || (dyn === 'strict_allow_templates' && !template))
            throw new StrictMappingViolation(name, parentPath || '_doc', dyn)
          if (dyn === 'false' || (dyn === 'false_allow_templates' && !template) || !indexed) {
            ok = false
            break
          }
          def = this.addField(parentPath, name, sample, template)
          if (!def) {
            ok = false
            break
          }
        }
        if (!last) {
          if (def.type !== undefined && def.type !== 'object' && def.type !== 'nested')
            throw new MapperParsing(
              `Could not dynamically add mapping for field [${path}]. Existing mapping for [${path}] must be of type object but found [${def.type}].`,
            )
          if (def.enabled === false) {
            ok = false
            break
          }
          dyn = dynamicOf(def, dyn)
        }
        m = def
      }
      if (!ok) continue
      // A plain name the mapping already had: the next document walks it from `known`.
      if (known && parts.length === 1 && m === own(mapping.properties, rawKey)) known.set(rawKey, { def: m, path })
      this.value(value, m, path, dyn, indexed)
    }
  }

  private value(value: unknown, def: FieldMapping, path: string, dynamic: string, indexed: boolean): void {
    const type = def.type ?? 'object'
    if (type === 'alias') throw new MapperParsing('failed to parse', new IllegalArgument(`Cannot write to a field alias [${path}].`))
    if (type === 'object' || type === 'nested') {
      if (def.enabled === false) return
      const dyn = dynamicOf(def, dynamic)
      // One object (the usual case) is walked without the closure arrays need.
      if (isObject(value)) return this.object(value, def, path, dyn, indexed)
      const each = (v: unknown) => {
        if (v === null) return
        if (Array.isArray(v)) return v.forEach(each)
        if (!isObject(v))
          throw new MapperParsing(
            `object mapping for [${path}] tried to parse field [${path.split('.').pop()}] as object, but found a concrete value`,
          )
        this.object(v, def, path, dyn, indexed)
      }
      each(value)
      return
    }
    if (type === FLAT_OBJECT) {
      this.checkFlatObject(value, path)
      if (this.out && def.index !== false) this.flatObject(value, path)
      return
    }
    if (type === 'geo_point') {
      // {lat, lon}, "lat,lon", [lon, lat], a geohash or WKT POINT, or an array of those (geo queries read them).
      if (!isGeoValue(value) && !((def.ignore_malformed as boolean | undefined) ?? this.ignoreMalformed))
        throw this.bad(path, type, value, 'not a geo_point: expected {lat, lon}, "lat,lon", [lon, lat], a geohash or POINT (lon lat)')
      return
    }
    if (type === 'binary' || type === 'knn_vector') return
    if (value !== null && typeof value !== 'object') return this.leaf(value, def, type, path)
    if (Array.isArray(value) && this.keywords(value, def, type, path)) return
    const each = (v: unknown) => {
      if (v === null) return
      if (Array.isArray(v)) return v.forEach(each)
      if (isObject(v)) throw this.bad(path, type, v)
      this.leaf(v, def, type, path)
    }
    each(value)
  }

  /**
   * A flat_object's leaves, as OpenSearch indexes them: each value under the root field, and
   * `path=value` under `<root>._valueAndPath` (see flat-object.ts). No mapping grows.
   */
  private flatObject(value: unknown, path: string): void {
    const byPath = valueAndPathField(path)
    flatLeaves(value, (sub, leaf) => {
      const k = String(leaf)
      this.out!.push([path, k])
      if (sub !== undefined) this.out!.push([byPath, valueAndPathKey(sub, k)])
    })
  }

  /** A flat_object value is an object (or an array of them), as OpenSearch's parser requires. */
  private checkFlatObject(value: unknown, path: string): void {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v === null || isObject(v)) continue
      const token = Array.isArray(v)
        ? 'START_ARRAY'
        : typeof v === 'string'
          ? 'VALUE_STRING'
          : typeof v === 'boolean'
            ? 'VALUE_BOOLEAN'
            : 'VALUE_NUMBER'
      const cause = new ParsingError(`[${path}] unexpected token [${token}] in flat_object field value`)
      throw new MapperParsing(this.bad(path, FLAT_OBJECT, v).reason, cause)
    }
  }

  /**
   * A list of strings in a plain keyword field (an integration's 10,000 rule ids), collected in one
   * loop, as leaf would one by one; false (nothing collected) for any other list.
   */
  private keywords(list: unknown[], def: FieldMapping, type: string, path: string): boolean {
    if (kindOf(type) !== 'keyword' || def.fields || def.ignore_above !== undefined || !list.every((v) => typeof v === 'string'))
      return false
    const out = keepsValues(def) ? this.out : undefined
    const norm = normalizerOf(def as FieldSpec)
    if (out) for (const v of list) out.push([path, norm ? norm(v as string) : (v as string)])
    return true
  }

  private leaf(v: unknown, def: FieldMapping, type: string, path: string): void {
    const idx = keepsValues(def) && this.out !== undefined
    const kind = kindOf(type)
    const key = parseLeaf(kind, type, v, def.format)
    if (key instanceof Malformed) {
      // `ignore_malformed` (the field's, else the index's): the value is skipped, the document kept.
      if (MALFORMED_IGNORABLE.has(kind) && ((def.ignore_malformed as boolean | undefined) ?? this.ignoreMalformed)) return
      throw this.bad(path, type, v, key.cause, key.causedBy)
    }
    if (kind === 'keyword') {
      const k = keywordOf(v)!
      if (idx && (def.ignore_above === undefined || k.length <= def.ignore_above)) this.out!.push([path, normalized(def, k)])
    } else if (key !== undefined && idx) this.out!.push([path, key]) // the raw number: the evaluator re-checks candidates against the source
    if (def.fields && this.out) {
      const k = keywordOf(v)!
      for (const [sub, sdef] of Object.entries(def.fields)) {
        const st = sdef.type ?? 'keyword'
        if (kindOf(st) === 'keyword' && keepsValues(sdef) && (sdef.ignore_above === undefined || k.length <= sdef.ignore_above))
          this.out.push([`${path}.${sub}`, normalized(sdef, k)])
      }
    }
  }

  private bad(path: string, type: string, v: unknown, cause?: string, causedBy?: ExceptionCause): MapperParsing {
    const preview = typeof v === 'string' ? v : JSON.stringify(v)
    // The why goes under caused_by (an illegal_argument_exception, and what caused it), as OpenSearch answers it.
    const why =
      cause === undefined
        ? undefined
        : causedBy === undefined
          ? new IllegalArgument(cause)
          : new StoreError('illegal_argument_exception', 400, cause, { caused_by: causedBy })
    return new MapperParsing(
      `failed to parse field [${path}] of type [${type}] in document with id '${this.id}'. Preview of field's value: '${preview}'`,
      why,
    )
  }

  /** The kind of a value dynamic mapping sees (for a template match). */
  private valueKind(value: unknown): ValueKind | undefined {
    const sample = Array.isArray(value) ? value.find((x) => x !== null) : value
    if (typeof sample === 'string') return this.root.date_detection !== false && looksLikeDate(sample) ? 'date' : 'string'
    if (typeof sample === 'number') return Number.isInteger(sample) ? 'long' : 'double'
    if (typeof sample === 'boolean') return 'boolean'
    if (isObject(sample)) return 'object'
    return undefined
  }

  /** The mapping of the first dynamic template that matches a new field, placeholders filled in. */
  private template(path: string, name: string, value: unknown): FieldMapping | undefined {
    const kind = this.valueKind(value)
    return kind && dynamicTemplateFor(this.root, path, name, kind)
  }

  /** Dynamic mapping of a new field: a matching dynamic template, else OpenSearch's defaults. */
  private addField(parentPath: string, name: string, value: unknown, template?: FieldMapping): FieldMapping | undefined {
    let sample = value
    if (Array.isArray(sample)) sample = sample.find((x) => x !== null)
    if (sample === undefined || sample === null) return undefined
    let def: FieldMapping
    if (template) def = template
    else if (typeof sample === 'string') {
      const date = this.root.date_detection !== false ? dynamicDate(sample) : undefined
      if (date) def = { type: 'date', ...date }
      else if (this.root.numeric_detection === true && sample.trim() !== '' && Number.isFinite(Number(sample)))
        def = { type: Number.isInteger(Number(sample)) ? 'long' : 'float' }
      else def = { type: 'text', fields: { keyword: { type: 'keyword', ignore_above: 256 } } }
    } else if (typeof sample === 'number') def = { type: Number.isInteger(sample) ? 'long' : 'float' }
    else if (typeof sample === 'boolean') def = { type: 'boolean' }
    else if (isObject(sample))
      def = { properties: {} } // dynamic objects carry no explicit type, as in OpenSearch
    else return undefined
    // Checked as each field is added, so a deep or wide document stops early (the whole mapping
    // is checked again once the document is through).
    const path = parentPath ? `${parentPath}.${name}` : name
    const isObj = def.type === undefined || def.type === 'object' || def.type === 'nested'
    if (isObj && dotsIn(path) + 2 > this.limits.depth) throw depthError(this.limits.depth, path)
    this.added += 1 + (def.fields ? Object.keys(def.fields).length : 0)
    if (this.added > this.limits.totalFields) throw totalError(this.limits.totalFields)
    const parent = this.writable(parentPath ? parentPath.split('.') : [])
    parent.properties ??= {}
    const existing = own(parent.properties, name)
    if (existing) return existing
    setOwn(parent.properties, name, def)
    return def
  }
}

/**
 * The fields of a mapping object already met under a plain (dot-free) name, with their paths: an
 * event stream's documents hold the same few dozen names, and each was split, looked up and its
 * path concatenated again for every document (a new path string is hashed again by every map it
 * keys). Keyed by the `properties` object, whose entries are only ever added, never replaced
 * (mergeProps edits a field's own object in place; a grown mapping is a clone with new objects);
 * the path is the one the object was walked under, and a walk under another prefix (a shared
 * subtree) does without.
 */
const childrenOf = new WeakMap<object, { prefix: string; kids: Map<string, { def: FieldMapping; path: string }> }>()

function mappedChildren(
  props: Record<string, FieldMapping> | undefined,
  prefix: string,
): Map<string, { def: FieldMapping; path: string }> | undefined {
  if (props === undefined || props === null) return undefined
  let entry = childrenOf.get(props)
  if (entry === undefined) childrenOf.set(props, (entry = { prefix, kids: new Map() }))
  return entry.prefix === prefix ? entry.kids : undefined
}

function dotsIn(s: string): number {
  let n = 0
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 46) n++
  return n
}

/** What dynamic mapping sees a value as: OpenSearch's XContentFieldType names. */
export type ValueKind = 'string' | 'date' | 'long' | 'double' | 'boolean' | 'object'

/**
 * The mapping the first of `root`'s dynamic templates that matches a new field gives it
 * (placeholders filled in); undefined when none matches.
 */
interface CompiledTemplate {
  order: number
  t: Record<string, unknown> & { mapping: Record<string, unknown> }
  pathMatch?: RegExp[]
  match?: RegExp[]
  pathUnmatch?: RegExp[]
  unmatch?: RegExp[]
}

/** A mapping's dynamic templates, ready to match: templates that name one exact path are found by it. */
interface CompiledTemplates {
  byPath: Map<string, CompiledTemplate[]>
  general: CompiledTemplate[]
}

// Keyed by the mapping's template list: a stored mapping is one object for every document written
// with it. Compiling the list for each lookup (one regular expression per template) made every
// document that brings a field outside the event schema (2,288 templates) cost ~0.5 ms to refuse.
const compiled = new WeakMap<object, CompiledTemplates>()

function compileTemplates(list: Array<Record<string, Record<string, unknown>>>): CompiledTemplates {
  let c = compiled.get(list)
  if (c) return c
  c = { byPath: new Map(), general: [] }
  list.forEach((entry, order) => {
    const t = Object.values(entry)[0]
    if (!isObject(t) || !isObject(t.mapping)) return
    const regex = t.match_pattern === 'regex'
    const patterns = (p: unknown) =>
      p === undefined ? undefined : [p].flat().flatMap((x) => (typeof x === 'string' ? [regex ? new RegExp(x) : wildcardToRegExp(x)] : []))
    const ct: CompiledTemplate = {
      order,
      t: t as CompiledTemplate['t'],
      pathMatch: patterns(t.path_match),
      match: patterns(t.match),
      pathUnmatch: patterns(t.path_unmatch),
      unmatch: patterns(t.unmatch),
    }
    const exact = !regex && typeof t.path_match === 'string' && !t.path_match.includes('*') ? t.path_match : undefined
    if (exact === undefined) c!.general.push(ct)
    else if (c!.byPath.has(exact)) c!.byPath.get(exact)!.push(ct)
    else c!.byPath.set(exact, [ct])
  })
  compiled.set(list, c)
  return c
}

/** The templates that may apply to `path`, in the mapping's order (the first that matches wins). */
function candidates(c: CompiledTemplates, path: string): CompiledTemplate[] {
  const exact = c.byPath.get(path)
  if (!exact) return c.general
  if (c.general.length === 0) return exact
  return [...exact, ...c.general].sort((a, b) => a.order - b.order)
}

export function dynamicTemplateFor(root: Mappings, path: string, name: string, kind: ValueKind): FieldMapping | undefined {
  const list = root.dynamic_templates as Array<Record<string, Record<string, unknown>>> | undefined
  if (!list || list.length === 0) return undefined
  const hit = (patterns: RegExp[], s: string) => patterns.some((re) => re.test(s))
  for (const { t, pathMatch, match, pathUnmatch, unmatch } of candidates(compileTemplates(list), path)) {
    if (pathMatch && !hit(pathMatch, path)) continue
    if (match && !hit(match, name)) continue
    if (pathUnmatch && hit(pathUnmatch, path)) continue
    if (unmatch && hit(unmatch, name)) continue
    const want = t.match_mapping_type
    if (want !== undefined && want !== '*' && ![want].flat().includes(kind)) continue
    // An object (also the parent of a dotted name) only takes a template that maps objects:
    // a leaf mapping for it could not hold its sub-fields. `flat_object` and `geo_point` take a
    // JSON object as one value.
    const mapsTo = t.mapping.type
    const wholeObject = mapsTo === 'flat_object' || mapsTo === 'geo_point'
    if (
      kind === 'object' &&
      mapsTo !== undefined &&
      !wholeObject &&
      mapsTo !== 'object' &&
      mapsTo !== 'nested' &&
      mapsTo !== '{dynamic_type}'
    )
      continue
    const dynamicType = { string: 'text', date: 'date', long: 'long', double: 'float', boolean: 'boolean', object: 'object' }[kind]
    const filled = JSON.parse(
      JSON.stringify(t.mapping).replaceAll('{name}', name).replaceAll('{dynamic_type}', dynamicType),
    ) as FieldMapping
    if (filled.type === undefined && kind !== 'object') filled.type = dynamicType
    if (filled.type === 'object') delete filled.type
    if (kind === 'object' && !wholeObject) filled.properties ??= {}
    return filled
  }
  return undefined
}

/**
 * The fields of a mapping as a flat list (dotted paths, multi-fields included): what
 * `_field_caps` and `_mapping/field/<f>` both read.
 */
import type { Mappings } from '../store/port'

export interface MappedField {
  /** Dotted path, `obj.leaf` or `title.keyword`. */
  path: string
  /** The last name, as `_mapping/field` keys the definition. */
  leaf: string
  /** `object` and `nested` for object fields. */
  type: string
  def: Record<string, unknown>
  /** Object fields (no value of their own). */
  object: boolean
}

export function mappedFields(mappings: Mappings | undefined): MappedField[] {
  const out: MappedField[] = []
  const walk = (props: Record<string, any> | undefined, prefix: string) => {
    for (const [name, def] of Object.entries(props ?? {})) {
      if (!def || typeof def !== 'object') continue
      const path = prefix + name
      const object = def.type === undefined || def.type === 'object' || def.type === 'nested'
      out.push({ path, leaf: name, type: def.type ?? 'object', def, object })
      for (const [sub, subDef] of Object.entries<any>(def.fields ?? {}))
        if (subDef && typeof subDef === 'object')
          out.push({ path: `${path}.${sub}`, leaf: sub, type: subDef.type ?? 'object', def: subDef, object: false })
      if (def.properties) walk(def.properties, `${path}.`)
    }
  }
  walk(mappings?.properties as Record<string, unknown> | undefined, '')
  return out
}

/** Searchable and aggregatable as OpenSearch's field capabilities report them. */
export function capabilities(f: MappedField): { searchable: boolean; aggregatable: boolean } {
  if (f.object) return { searchable: false, aggregatable: false }
  const searchable = f.def.index !== false
  if (f.type === 'text' || f.type === 'match_only_text') return { searchable, aggregatable: f.def.fielddata === true }
  return { searchable, aggregatable: f.def.doc_values !== false }
}

/** How a mapped field is read: its spec (from the mapping) and the kind of value its type holds. */

/** A mapped field: its type, and for multi-fields (`msg.keyword`) the source path it reads. */
export interface FieldSpec {
  type: string
  path?: string
  ignore_above?: number
  format?: string
  /** Malformed values are skipped (and the field listed in the document's `_ignored`) instead of refused. */
  ignore_malformed?: boolean
  /** The mapping's `normalizer` (only `lowercase` is known): values are compared as it leaves them. */
  normalizer?: string
  /** `index: false`: queries run on the doc values, if the field keeps them (see query-guards.ts). */
  index?: false
  /** `doc_values: false` */
  doc_values?: false
  /** A text field with `index_prefixes`: its prefix queries are cheap. */
  index_prefixes?: true
  /** A text field with `fielddata: true`: aggregations read its analysed tokens (significant_terms). */
  fielddata?: true
  /** A field alias (`type: alias`): the field it names, whose spec (and source path) this one copies. */
  alias?: string
}

/**
 * The field a name is stored under: an alias's target, else the name. The stores keep a field's
 * values (index rows, columns, postings) under its own name only; whatever looks them up by name
 * goes through this, so that an alias reads what its field holds.
 */
export const storedName = (specs: ReadonlyMap<string, FieldSpec> | undefined, name: string): string => specs?.get(name)?.alias ?? name
export type Kind = 'keyword' | 'text' | 'number' | 'date' | 'boolean' | 'ip' | 'object' | 'auto'

export function kindOf(type: string): Kind {
  switch (type) {
    case 'text':
    case 'match_only_text':
      return 'text'
    case 'long':
    case 'integer':
    case 'short':
    case 'byte':
    case 'double':
    case 'float':
    case 'half_float':
    case 'scaled_float':
    case 'unsigned_long':
      return 'number'
    case 'date':
    case 'date_nanos':
      return 'date'
    case 'boolean':
      return 'boolean'
    case 'ip':
      return 'ip'
    case 'object':
    case 'nested':
      return 'object'
    default:
      return 'keyword'
  }
}

/** How a mapped field is read: its spec (from the mapping) and the kind of value its type holds. */

/** A mapped field: its type, and for multi-fields (`msg.keyword`) the source path it reads. */
export interface FieldSpec {
  type: string
  path?: string
  ignore_above?: number
  format?: string
  /** Malformed values are skipped (and the field listed in the document's `_ignored`) instead of refused. */
  ignore_malformed?: boolean
}
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

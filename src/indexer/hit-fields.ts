/**
 * The `fields` a search adds to each hit (docvalue_fields and the fields option): the fields a
 * request names, wildcards expanded over each index's mapping, each read by the option's own
 * reader, merged into the hit's `fields` (field names set as own data properties: `__proto__` is a
 * field name like any other).
 */
import type { Mappings, SearchHit } from '../store/port'
import type { FieldSpec } from '../store/query/compile'
import { wildcardMatcher } from '../store/query/wildcard'
import { fieldSpecs } from '../store/embedded/mapping'

export interface NamedField {
  field: string
  format?: string
}

/** A field's values in a hit (empty: none); `wildcard` tells that a pattern named it. */
export type FieldReader<F> = (hit: SearchHit, name: string, spec: FieldSpec, asked: F, wildcard: boolean) => unknown[]

export function addHitFields<F extends NamedField>(
  hits: SearchHit[],
  fields: F[],
  mappingOf: (index: string) => Mappings | undefined,
  read: FieldReader<F>,
  /** Refuses an index whose mapping the option cannot read (a 400), once per index. */
  checkMapping?: (index: string, mapping: Mappings) => void,
): void {
  const specsByIndex = new Map<string, Map<string, FieldSpec>>()
  for (const hit of hits) {
    let specs = specsByIndex.get(hit._index)
    if (!specs) {
      const mapping = mappingOf(hit._index) ?? {}
      checkMapping?.(hit._index, mapping)
      specsByIndex.set(hit._index, (specs = fieldSpecs(mapping)))
    }
    const out: Record<string, unknown[]> = {}
    for (const f of fields) {
      const wildcard = f.field.includes('*')
      const names = wildcard ? [...specs.keys()].filter(wildcardMatcher(f.field)) : [f.field]
      for (const name of names) {
        const spec = specs.get(name)
        const values = spec ? read(hit, name, spec, f, wildcard) : []
        if (values.length > 0) Object.defineProperty(out, name, { value: values, enumerable: true, writable: true, configurable: true })
      }
    }
    if (Object.keys(out).length > 0) hit.fields = { ...(hit.fields ?? {}), ...out }
  }
}

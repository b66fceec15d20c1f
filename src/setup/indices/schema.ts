/**
 * The reference's common event schema (`schema/*.tsv`, one field a line: path, type, mapping
 * parameters as JSON, and whether the reference declares it as a fixed property or as a dynamic
 * template that maps it when a document first carries it). Mappings of the event, finding,
 * unclassified and raw streams are built from these tables, and detection compiles rules with
 * the schema's type for a field before any event has carried it.
 */
import type { FieldMapping } from '../../store/port'
import eventsTsv from './schema/events-fields.tsv' with { type: 'text' }
import findingsTsv from './schema/findings-fields.tsv' with { type: 'text' }
import rawTsv from './schema/raw-fields.tsv' with { type: 'text' }
import unclassifiedTsv from './schema/unclassified-fields.tsv' with { type: 'text' }
import { paths } from './common'

export interface SchemaField {
  path: string
  mapping: FieldMapping
  declared: 'property' | 'template'
}

function parse(tsv: string): SchemaField[] {
  const out: SchemaField[] = []
  for (const line of tsv.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue
    const [path, type, params, declared] = line.split('\t')
    const mapping = { type, ...(params ? JSON.parse(params) : {}) } as FieldMapping
    out.push({ path, mapping, declared: declared === 'template' ? 'template' : 'property' })
  }
  return out
}

export const SCHEMA = {
  events: parse(eventsTsv),
  findings: parse(findingsTsv),
  unclassified: parse(unclassifiedTsv),
  raw: parse(rawTsv),
}

/** Fields as nested `properties` (object and nested parents keep their own type). */
export function schemaProperties(fields: readonly SchemaField[]): Record<string, FieldMapping> {
  // Parents listed before their fields (`nested`) get their sub-fields merged in by `paths`.
  const containers = fields.filter((f) => f.mapping.type === 'object' || f.mapping.type === 'nested')
  const leaves = fields.filter((f) => f.mapping.type !== 'object' && f.mapping.type !== 'nested')
  const root = paths(Object.fromEntries(leaves.map((f) => [f.path, f.mapping])))
  for (const c of containers) {
    const parts = c.path.split('.')
    let level = root
    for (const p of parts.slice(0, -1)) level = (level[p] ??= { type: 'object', properties: {} }).properties ??= {}
    const last = parts[parts.length - 1]
    level[last] = { ...(level[last] ?? {}), ...c.mapping, properties: level[last]?.properties ?? {} }
    if (c.mapping.type === 'object') delete level[last].type
  }
  return root
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * One dynamic template per templated field (matched by its exact path), and one for the objects
 * that lead to them: under `strict_allow_templates` a new object needs a template as well, and
 * only the schema's own parents get one.
 */
export function schemaTemplates(fields: readonly SchemaField[]): Array<Record<string, Record<string, unknown>>> {
  const templated = fields.filter((f) => f.declared === 'template')
  const parents = new Set<string>()
  for (const f of templated) {
    const parts = f.path.split('.')
    for (let i = 1; i < parts.length; i++) parents.add(parts.slice(0, i).join('.'))
  }
  const leaves = templated.filter((f) => !parents.has(f.path) || f.mapping.type === 'nested')
  return [
    ...leaves.map((f) => ({ [f.path]: { path_match: f.path, mapping: f.mapping } })),
    {
      schema_objects: {
        match_mapping_type: 'object',
        match_pattern: 'regex',
        path_match: `^(${[...parents].sort().map(escapeRegex).join('|')})$`,
        mapping: { type: 'object' },
      },
    },
  ]
}

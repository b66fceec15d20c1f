import type { FieldMapping, Mappings } from '../../store/port'
import { bool, date, kw, obj, opaque, paths, text, unsignedLong } from './common'
import { CONTENT_ALIASES, contentIndex, type ContentKind } from './names'
import type { ContentIndexDef } from './types'

/**
 * Content indices (reference content-manager 5.1/5.2): each alias points at
 * its `-a` physical index as write index; `-b` is the staging slot of a
 * blue/green swap and matches the same template (pattern `<alias>*`).
 */

const METADATA = paths({
  'metadata.title': kw,
  'metadata.author': kw,
  'metadata.documentation': kw,
  'metadata.references': kw,
  'metadata.supports': kw,
  'metadata.date': date,
  'metadata.modified': date,
  'metadata.description': text,
})

/** The envelope shared by the six space-aware indices. */
function spaced(
  document: Record<string, FieldMapping>,
  extra: Record<string, FieldMapping> = {},
  metadataExtra: Record<string, FieldMapping> = {},
  offset = true,
): Record<string, FieldMapping> {
  const metadata = obj({ ...(METADATA.metadata.properties as Record<string, FieldMapping>), ...metadataExtra })
  return {
    document: obj({ id: kw, enabled: bool, ...document, metadata }),
    hash: obj({ sha256: kw }),
    space: obj({ name: kw, ...(extra.space?.properties ?? {}) }),
    ...(offset ? { offset: unsignedLong } : {}),
    ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'space')),
  }
}

const RULES: Mappings = {
  dynamic: false,
  date_detection: false,
  properties: spaced(
    {
      ...paths({
        name: kw,
        level: kw,
        status: kw,
        sigma_id: kw,
        tags: kw,
        scope: kw,
        license: kw,
        fields: kw,
        falsepositives: kw,
        taxonomy: kw,
        'logsource.category': kw,
        'logsource.product': kw,
        'logsource.service': kw,
        'logsource.definition': text,
      }),
      detection: opaque,
      related: { type: 'nested', properties: { id: kw, type: kw } },
      threat: obj(Object.fromEntries(['tactic', 'technique', 'subtechnique'].map((k) => [k, obj({ id: kw, name: kw })]))),
    },
    { type: { type: 'text', fields: { keyword: { type: 'keyword', ignore_above: 256 } } } },
  ),
}

// `dynamic_templates` is OpenSearch mapping syntax the port's schema leaves open.
const DECODERS = {
  dynamic: true,
  date_detection: false,
  dynamic_templates: [{ parse_fields: { match: 'parse|*', mapping: { type: 'keyword' } } }],
  properties: spaced(
    {
      name: kw,
      parents: kw,
      definitions: opaque,
      check: opaque,
      normalize: opaque,
    },
    { yaml: text },
    { module: kw, compatibility: kw, versions: kw },
  ),
} as Mappings

const INTEGRATIONS: Mappings = {
  dynamic: false,
  date_detection: false,
  properties: spaced({
    category: kw,
    default_parent: kw,
    decoders: kw,
    kvdbs: kw,
    rules: kw,
    detector: obj({ source: kw, interval: { type: 'integer' }, enabled: bool }),
  }),
}

const KVDBS: Mappings = {
  dynamic: true,
  date_detection: false,
  properties: spaced({ content: opaque }, { yaml: text }),
}

const POLICIES: Mappings = {
  dynamic: true,
  date_detection: false,
  properties: spaced(
    {
      root_decoder: kw,
      integrations: kw,
      filters: kw,
      enrichments: kw,
      index_unclassified_events: bool,
      index_discarded_events: bool,
    },
    { space: obj({ hash: obj({ sha256: kw }) }) },
    { compatibility: kw },
  ),
}

/** Strict as upstream, plus the `offset` field the reference recommends (CTI-synced filters carry one). */
const FILTERS: Mappings = {
  dynamic: 'strict',
  date_detection: false,
  properties: {
    '@timestamp': date,
    ...spaced({ name: kw, type: kw, check: opaque }, { yaml: text }),
  },
}

const IOCS: Mappings = {
  dynamic: 'strict',
  date_detection: false,
  properties: {
    document: obj(
      paths({
        id: kw,
        name: kw,
        type: kw,
        provider: kw,
        reference: kw,
        tags: kw,
        'feed.name': kw,
        'software.name': kw,
        'software.type': kw,
        'software.alias': kw,
        confidence: { type: 'short' },
        // Feed examples use `2025-09-17 16:40:05 UTC`; accept it next to ISO-8601.
        first_seen: { type: 'date', format: "strict_date_optional_time||yyyy-MM-dd HH:mm:ss 'UTC'||epoch_millis" },
        last_seen: { type: 'date', format: "strict_date_optional_time||yyyy-MM-dd HH:mm:ss 'UTC'||epoch_millis" },
      }),
    ),
    hash: obj({ sha256: kw }),
    offset: unsignedLong,
    // The per-IoC-type summary document adds one key per type; it is read by id only.
    type_hashes: opaque,
  },
}

const VULNERABILITIES: Mappings = {
  dynamic: 'strict',
  date_detection: false,
  properties: {
    document: opaque,
    offset: unsignedLong,
    type: kw,
    ...paths({
      '@timestamp': date,
      category: kw,
      classification: kw,
      description: text,
      enumeration: kw,
      id: kw,
      reference: kw,
      report_id: kw,
      'scanner.vendor': kw,
      'score.base': { type: 'float' },
      'score.environmental': { type: 'float' },
      'score.temporal': { type: 'float' },
      'score.version': kw,
      severity: kw,
    }),
  },
}

export const CONTENT_MAPPINGS: Record<ContentKind, Mappings> = {
  enrichments: IOCS,
  filters: FILTERS,
  decoders: DECODERS,
  rules: RULES,
  kvdbs: KVDBS,
  integrations: INTEGRATIONS,
  policies: POLICIES,
  vulnerabilities: VULNERABILITIES,
}

/** Settings of a content physical index; `hidden` for the vulnerabilities index (and for staging slots). */
export function contentSettings(kind: ContentKind, hidden = kind === 'vulnerabilities') {
  return {
    index: {
      codec: 'zstd',
      number_of_shards: 1,
      number_of_replicas: 0,
      auto_expand_replicas: '0-1',
      refresh_interval: kind === 'enrichments' ? '2s' : '5s',
      hidden,
    },
    'mapping.total_fields.limit': 500,
  }
}

/** The create body of a content physical index (used by Setup for `-a` and by the swap for `-b`). */
export const contentIndexBody = (kind: ContentKind, hidden?: boolean) => ({
  settings: contentSettings(kind, hidden),
  mappings: CONTENT_MAPPINGS[kind],
})

/** Registration order of reference 1.2 row 10. */
const ORDER: ContentKind[] = ['enrichments', 'filters', 'decoders', 'rules', 'kvdbs', 'integrations', 'policies', 'vulnerabilities']

export const CONTENT: ContentIndexDef[] = ORDER.map((kind) => {
  const alias = CONTENT_ALIASES[kind]
  const body = contentIndexBody(kind)
  return {
    kind: 'content',
    alias,
    index: contentIndex(alias, 'a'),
    template: { name: `${alias}-template`, body: { index_patterns: [`${alias}*`], priority: 1, template: body } },
    body,
    aliasDefinition: { is_write_index: true, ...(kind === 'vulnerabilities' ? { is_hidden: true } : {}) },
  }
})

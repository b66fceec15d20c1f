import type { FieldMapping, Mappings } from '../../store/port'
import { bool, date, integer, ip, keyword, kw, long, matchOnlyText, obj, opaque, paths } from './common'
import { SCHEMA, schemaProperties, schemaTemplates } from './schema'
import {
  ACTIVE_RESPONSES_STREAM,
  EVENT_CATEGORIES,
  eventsStream,
  findingsStream,
  METRICS_STREAMS,
  RAW_EVENTS_STREAM,
  SESSIONS_STREAM,
} from './names'
import type { DataStreamDef } from './types'

/**
 * Event fields of ours that the reference schema (./schema.ts) does not have: the agent's
 * address, and where a finding's event came from. Every other event field is the schema's.
 */
export const EVENT_FIELDS: Record<string, FieldMapping> = paths({
  'agent.host.ip': ip,
  'event.doc_id': kw,
  'event.index': kw,
})

/** The reference's event schema as properties (findings copy events, so they need every event field). */
const SCHEMA_EVENT_PROPERTIES = schemaProperties(SCHEMA.events)

/** `svc.rule` of an enriched finding (reference 4.6): strict, all keyword. */
const RULE_FIELDS = obj(
  {
    ...paths({
      author: kw,
      category: kw,
      description: kw,
      id: kw,
      level: kw,
      license: kw,
      name: kw,
      reference: kw,
      ruleset: kw,
      sigma_id: kw,
      status: kw,
      tags: kw,
      title: kw,
      uuid: kw,
      version: kw,
    }),
    compliance: obj(
      Object.fromEntries(
        ['cmmc', 'fedramp', 'gdpr', 'hipaa', 'iso_27001', 'nis2', 'nist_800_171', 'nist_800_53', 'pci_dss', 'tsc'].map((k) => [k, kw]),
      ),
    ),
    mitre: obj(Object.fromEntries(['tactic', 'technique', 'subtechnique'].map((k) => [k, obj({ id: kw, name: kw })]))),
  },
  { dynamic: 'strict' },
)

/** `svc.case` (spec "Case (on a finding)"): strict, so no unlisted key can be stored. */
export const CASE_FIELDS = obj(
  {
    title: matchOnlyText,
    description: matchOnlyText,
    tags: kw,
    user: obj({ name: kw }, { dynamic: 'strict' }),
    status: kw,
    severity: kw,
    priority: kw,
    tlp: kw,
    created_at: date,
    updated_at: date,
    comments: obj({ author: kw, comment: matchOnlyText, created_at: date, updated_at: date }, { dynamic: 'strict' }),
  },
  { dynamic: 'strict' },
)

/** Deep merge of property trees; later trees win on a leaf. */
function merge(...trees: Array<Record<string, FieldMapping>>): Record<string, FieldMapping> {
  const out: Record<string, FieldMapping> = {}
  for (const tree of trees)
    for (const [k, v] of Object.entries(tree)) {
      const cur = out[k]
      out[k] =
        cur?.properties && v.properties && (v.type ?? 'object') === (cur.type ?? 'object')
          ? { ...cur, ...v, properties: merge(cur.properties, v.properties) }
          : v
    }
  return out
}

/**
 * Event streams as the reference maps them: the schema's fixed properties, and every other schema
 * field as a dynamic template (`strict_allow_templates`), so a field is typed by the schema the
 * first time an event carries it and a field outside the schema is refused.
 */
export const EVENTS_MAPPINGS: Mappings = {
  dynamic: 'strict_allow_templates',
  date_detection: false,
  dynamic_templates: schemaTemplates(SCHEMA.events),
  properties: merge(schemaProperties(SCHEMA.events.filter((f) => f.declared === 'property')), EVENT_FIELDS),
}

/**
 * What a correlation finding adds (src/ruleset/correlation/detector.ts). Typed so that its linked
 * events (up to 100 a finding) are keywords, not dynamic text analysed word by word; the group's
 * values are keyed by the user's own field names, so they are one flat_object, not mapping fields.
 */
const CORRELATION_FIELDS = obj({
  rule: obj({ id: kw, name: kw, title: kw, type: kw }),
  group: { type: 'flat_object' },
  window: obj({ start: date, end: date, timespan_ms: long }),
  event_count: long,
  events: obj({ index: kw, id: kw, rule: kw, time: date }),
  findings: kw,
})

/**
 * Findings: the reference's findings table, every event field (a finding is a copy of its event),
 * and ours on top: `svc.rule` and `svc.case` as the spec defines them, `svc.detector` (the
 * findings read side filters on it). Fields outside these are still accepted (dynamic), so a
 * finding of an event from a user's own index lands.
 */
export const FINDINGS_MAPPINGS: Mappings = {
  dynamic: true,
  date_detection: false,
  properties: merge(SCHEMA_EVENT_PROPERTIES, schemaProperties(SCHEMA.findings), EVENT_FIELDS, {
    svc: obj({ rule: RULE_FIELDS, case: CASE_FIELDS, detector: obj({ id: kw, type: kw }), correlation: CORRELATION_FIELDS }),
  }),
}

/** The unclassified events stream: the reference's (smaller) table of what is known about them. */
export const UNCLASSIFIED_MAPPINGS: Mappings = {
  dynamic: true,
  date_detection: false,
  properties: merge(schemaProperties(SCHEMA.unclassified), EVENT_FIELDS),
}

/** Raw events: the reference's table (the original line, the agent that sent it); anything else is stored as sent. */
export const RAW_EVENTS_MAPPINGS: Mappings = {
  dynamic: true,
  date_detection: false,
  properties: schemaProperties(SCHEMA.raw),
}

/** Mapping limits the schema needs: the reference's for events; the full findings table is larger than OpenSearch's default. */
const EVENTS_LIMITS = { mapping: { total_fields: { limit: 1000 }, nested_fields: { limit: 50 } } }
const FINDINGS_LIMITS = { mapping: { total_fields: { limit: 4000 }, nested_fields: { limit: 50 } } }

export const SESSIONS_MAPPINGS: Mappings = {
  dynamic: 'strict',
  date_detection: false,
  properties: {
    '@timestamp': date,
    created_at: date,
    updated_at: date,
    title: keyword(),
    user: keyword(),
    messages: opaque,
  },
}

/** A stream of what agents report: timestamped, naming the agent, open to further fields. */
const agentStream = (fields: Record<string, FieldMapping>): Mappings => ({
  dynamic: true,
  date_detection: false,
  properties: paths({ '@timestamp': date, 'agent.id': kw, 'agent.name': kw, ...fields }),
})

const METRICS_MAPPINGS = agentStream({ 'metric.name': kw, 'metric.value': { type: 'double' }, 'metric.count': long })

const ACTIVE_RESPONSES_MAPPINGS = agentStream({
  'event.action': kw,
  'svc.command.name': kw,
  'svc.command.status': kw,
  'svc.command.timeout': integer,
  'svc.command.success': bool,
})

function stream(
  name: string,
  mappings: Mappings,
  policy: string,
  refresh: string,
  extraSettings: Record<string, unknown> = {},
): DataStreamDef {
  return {
    kind: 'stream',
    name,
    policy,
    template: {
      name: `${name}-template`,
      body: {
        index_patterns: [`${name}*`],
        priority: 1,
        data_stream: {},
        template: {
          settings: {
            index: { codec: 'zstd', number_of_shards: 1, number_of_replicas: 0, refresh_interval: refresh, ...extraSettings },
            'plugins.index_state_management.policy_id': policy,
            'plugins.index_state_management.rollover_alias': name,
          },
          mappings,
        },
      },
    },
  }
}

export const EVENT_STREAMS: DataStreamDef[] = EVENT_CATEGORIES.map((c) =>
  c === 'unclassified'
    ? stream(eventsStream(c), UNCLASSIFIED_MAPPINGS, 'stream-events-policy', '2s')
    : stream(eventsStream(c), EVENTS_MAPPINGS, 'stream-events-policy', '2s', EVENTS_LIMITS),
)
export const FINDING_STREAMS: DataStreamDef[] = EVENT_CATEGORIES.map((c) =>
  stream(findingsStream(c), FINDINGS_MAPPINGS, 'stream-findings-policy', '2s', FINDINGS_LIMITS),
)
export const RAW_EVENTS: DataStreamDef = stream(RAW_EVENTS_STREAM, RAW_EVENTS_MAPPINGS, 'stream-raw-events-policy', '5s')
export const ACTIVE_RESPONSES: DataStreamDef = stream(
  ACTIVE_RESPONSES_STREAM,
  ACTIVE_RESPONSES_MAPPINGS,
  'stream-active-responses-policy',
  '5s',
)
export const METRICS: DataStreamDef[] = METRICS_STREAMS.map((n) => stream(n, METRICS_MAPPINGS, 'stream-metrics-policy', '5s'))
export const SESSIONS: DataStreamDef = stream(SESSIONS_STREAM, SESSIONS_MAPPINGS, 'ai-assistant-sessions-policy', '1s', {
  'query.default_field': ['title', 'user'],
})
SESSIONS.template.body.template!.settings!['mapping.total_fields.limit'] = 1000

import type { FieldMapping, Mappings } from '../../store/port'
import { bool, date, integer, ip, keyword, kw, long, matchOnlyText, obj, opaque, paths, text } from './common'
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
 * The common event fields every stream declares with their real types (so
 * CIDR, range and date queries work from the first document). The full WCS
 * schema is not part of our references, so event streams accept further
 * fields dynamically instead of rejecting them (the reference uses a strict
 * mapping over the whole schema); date detection stays off.
 */
export const EVENT_FIELDS: Record<string, FieldMapping> = paths({
  '@timestamp': date,
  message: text,
  tags: kw,
  'agent.id': kw,
  'agent.name': kw,
  'agent.type': kw,
  'agent.version': kw,
  'agent.groups': kw,
  'agent.host.ip': ip,
  'event.action': kw,
  'event.category': kw,
  'event.type': kw,
  'event.kind': kw,
  'event.module': kw,
  'event.dataset': kw,
  'event.outcome': kw,
  'event.code': kw,
  'event.provider': kw,
  'event.severity': long,
  'event.created': date,
  'event.ingested': date,
  'event.start': date,
  'event.end': date,
  'event.original': { type: 'keyword', index: false, doc_values: false } as FieldMapping,
  'event.doc_id': kw,
  'event.index': kw,
  'host.name': kw,
  'host.hostname': kw,
  'host.id': kw,
  'host.ip': ip,
  'host.os.name': kw,
  'host.os.platform': kw,
  'host.os.type': kw,
  'host.os.family': kw,
  'host.os.version': kw,
  'source.ip': ip,
  'source.port': long,
  'source.address': kw,
  'source.domain': kw,
  'destination.ip': ip,
  'destination.port': long,
  'destination.address': kw,
  'destination.domain': kw,
  'network.protocol': kw,
  'network.transport': kw,
  'network.direction': kw,
  'user.name': kw,
  'user.id': kw,
  'user.domain': kw,
  'process.name': kw,
  'process.pid': long,
  'process.executable': kw,
  'process.command_line': kw,
  'process.parent.name': kw,
  'process.parent.pid': long,
  'file.path': kw,
  'file.name': kw,
  'file.hash.sha256': kw,
  'log.level': kw,
  'log.file.path': kw,
  'url.original': kw,
  'url.domain': kw,
  'svc.agent.id': kw,
  'svc.agent.name': kw,
  'svc.agent.groups': kw,
  'svc.cluster.name': kw,
  'svc.cluster.node': kw,
  'svc.integration.name': kw,
  'svc.integration.category': kw,
  'svc.integration.decoders': kw,
  'svc.space.name': kw,
  'svc.protocol.location': kw,
  'svc.protocol.queue': long,
})

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

function withSvc(extra: Record<string, FieldMapping>): Record<string, FieldMapping> {
  const svc = EVENT_FIELDS.svc as FieldMapping
  return { ...EVENT_FIELDS, svc: { ...svc, properties: { ...(svc.properties ?? {}), ...extra } } }
}

export const EVENTS_MAPPINGS: Mappings = { dynamic: true, date_detection: false, properties: EVENT_FIELDS }
export const FINDINGS_MAPPINGS: Mappings = {
  dynamic: true,
  date_detection: false,
  // `svc.detector` (the detector that produced the finding) is filtered on by the findings read side.
  properties: withSvc({ rule: RULE_FIELDS, case: CASE_FIELDS, detector: obj({ id: kw, type: kw }) }),
}

/** Raw events: the original line plus the agent that sent it; anything else is stored as sent. */
export const RAW_EVENTS_MAPPINGS: Mappings = {
  dynamic: true,
  date_detection: false,
  properties: paths({
    '@timestamp': date,
    'event.original': { type: 'keyword', index: false, doc_values: false } as FieldMapping,
    'agent.id': kw,
    'agent.name': kw,
    'svc.agent.id': kw,
  }),
}

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
  stream(eventsStream(c), EVENTS_MAPPINGS, 'stream-events-policy', '2s'),
)
export const FINDING_STREAMS: DataStreamDef[] = EVENT_CATEGORIES.map((c) =>
  stream(findingsStream(c), FINDINGS_MAPPINGS, 'stream-findings-policy', '2s'),
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

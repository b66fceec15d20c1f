import type { Mappings } from '../../store/port'
import { date, kw, long, paths } from './common'
import { STATE_INDICES } from './names'
import type { PlainIndexDef } from './types'

/**
 * Inventory state indices. Their per-module schemas are not part of our
 * references: the identity fields every state document carries are typed,
 * the rest is mapped dynamically (date detection off).
 */
const STATE_MAPPINGS: Mappings = {
  dynamic: 'true',
  date_detection: false,
  properties: paths({
    '@timestamp': date,
    'agent.id': kw,
    'agent.name': kw,
    'agent.version': kw,
    'agent.groups': kw,
    'agent.host.hostname': kw,
    'svc.cluster.name': kw,
    'state.document_version': long,
    'state.modified_at': date,
    checksum: kw,
  }),
}

/** `svc-states-sca` -> `states-sca`, `svc-agent-config` -> `agent-config` (template named after its path). */
const templateName = (index: string) => index.replace(/^svc-/, '')

export const STATES: PlainIndexDef[] = STATE_INDICES.map((name) => {
  const settings = {
    index: {
      codec: 'zstd',
      number_of_shards: 1,
      number_of_replicas: 0,
      auto_expand_replicas: '0-1',
      refresh_interval: name === 'svc-states-sca' ? '5s' : '2s',
    },
  }
  const body = { settings, mappings: STATE_MAPPINGS }
  return {
    kind: 'index',
    name,
    template: { name: templateName(name), body: { index_patterns: [`${name}*`], priority: 1, template: body } },
    body,
  }
})

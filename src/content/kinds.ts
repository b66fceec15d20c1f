// What differs between the five resource kinds: where they are stored, which limit applies, what
// the Engine validates, and how they are named in paths, messages and lock ids.
import type { SettingKeyOf } from '../config/registry'
import type { ContentResource } from '../security/actions'
import type { EngineResourceType } from './engine'
import { CONTENT_ALIASES } from './indices'

export type ResourceKind = ContentResource

export interface KindInfo {
  kind: ResourceKind
  /** Path segment under `/_plugins/_content_manager`. */
  plural: string
  /** Capitalised noun for messages ("Integration [<id>] not found."). */
  label: string
  alias: string
  limitSetting: SettingKeyOf<'integer'>
  /** Sent to the Engine for validation (rules are Ruleset Management's business). */
  engineType?: EngineResourceType
  /** Decoders, KVDBs and filters also store a YAML rendering (reference 2.5). */
  yaml: boolean
}

export const KINDS: Record<ResourceKind, KindInfo> = {
  integration: {
    kind: 'integration',
    plural: 'integrations',
    label: 'Integration',
    alias: CONTENT_ALIASES.integrations,
    limitSetting: 'plugins.content_manager.max_integrations',
    engineType: 'integration',
    yaml: false,
  },
  decoder: {
    kind: 'decoder',
    plural: 'decoders',
    label: 'Decoder',
    alias: CONTENT_ALIASES.decoders,
    limitSetting: 'plugins.content_manager.max_decoders',
    engineType: 'decoder',
    yaml: true,
  },
  rule: {
    kind: 'rule',
    plural: 'rules',
    label: 'Rule',
    alias: CONTENT_ALIASES.rules,
    limitSetting: 'plugins.content_manager.max_rules',
    yaml: false,
  },
  kvdb: {
    kind: 'kvdb',
    plural: 'kvdbs',
    label: 'KVDB',
    alias: CONTENT_ALIASES.kvdbs,
    limitSetting: 'plugins.content_manager.max_kvdbs',
    engineType: 'kvdb',
    yaml: true,
  },
  filter: {
    kind: 'filter',
    plural: 'filters',
    label: 'Filter',
    alias: CONTENT_ALIASES.filters,
    limitSetting: 'plugins.content_manager.max_filters',
    engineType: 'filter',
    yaml: true,
  },
}

/** Resources an integration lists, in the order reference 4.4 checks them before a delete. */
export const INTEGRATION_LISTS = ['decoders', 'rules', 'kvdbs'] as const
export type IntegrationList = (typeof INTEGRATION_LISTS)[number]
export const LIST_KIND: Record<IntegrationList, ResourceKind> = { decoders: 'decoder', rules: 'rule', kvdbs: 'kvdb' }

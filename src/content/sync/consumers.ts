// The three catalog consumers (spec background 1), in the order every pass runs them (reference
// 2.1): what each is called, which setting names its feed, which packaged snapshot is its, and
// which content indices it owns.
import type { SettingKeyOf } from '../../config/registry'
import { CONTENT_ALIASES, type ContentKind } from '../../setup/indices'

export const CONSUMER_KINDS = ['ruleset', 'iocs', 'vulnerabilities'] as const
export type ConsumerKind = (typeof CONSUMER_KINDS)[number]

export interface ConsumerDef {
  kind: ConsumerKind
  /** `_id` of its state document and the plan feature type. */
  type: string
  /** Node setting with an explicit consumer URL. */
  setting: SettingKeyOf<'string'>
  /** Packaged snapshot file name and manifest key. */
  snapshotFile: string
  /** Content indices it writes, by kind (alias = CONTENT_ALIASES[kind]). */
  indices: ContentKind[]
  /** IoC and CVE consumers have one index; their updates are applied in sub-batches (reference 7.4). */
  singleIndex: boolean
}

const def = (kind: ConsumerKind, indices: ContentKind[]): ConsumerDef => ({
  kind,
  type: `cti:catalog:consumer:${kind}`,
  setting: `plugins.content_manager.catalog.${kind}`,
  snapshotFile: `${kind}.zip`,
  indices,
  singleIndex: indices.length === 1,
})

export const CONSUMERS: Record<ConsumerKind, ConsumerDef> = {
  ruleset: def('ruleset', ['filters', 'decoders', 'rules', 'kvdbs', 'integrations', 'policies']),
  iocs: def('iocs', ['enrichments']),
  vulnerabilities: def('vulnerabilities', ['vulnerabilities']),
}

export const aliasOf = (kind: ContentKind): string => CONTENT_ALIASES[kind]

/**
 * The Sigma rule document (spec v2.1) as far as compilation needs it; other keys are kept.
 * The Wazuh flavour puts the title under `metadata.title`, so either place is accepted.
 */
import { type Static, Type } from '@sinclair/typebox'
import { checkSigmaDocument, readSigmaYaml, SIGMA_RULE_DESCRIPTION } from './document'
import { SigmaInvalid, SigmaUnsupported } from './errors'

export const SigmaRuleDocument = Type.Object(
  {
    title: Type.Optional(Type.String()),
    ...SIGMA_RULE_DESCRIPTION,
    logsource: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    detection: Type.Record(Type.String(), Type.Unknown()),
    metadata: Type.Optional(Type.Object({ title: Type.Optional(Type.String()) })),
    sigma_id: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
)
export type SigmaRuleDocument = Static<typeof SigmaRuleDocument>

/** YAML text (one document) or an already parsed object. YAML 1.2 typing, as `Bun.YAML` reads it. */
export function parseSigmaRule(source: string | object): SigmaRuleDocument {
  const raw = readSigmaYaml(source)
  // Correlation and filter documents are their own kinds (src/ruleset/correlation, src/ruleset/filters).
  if (raw && typeof raw === 'object' && 'correlation' in raw) throw new SigmaUnsupported('correlation rule')
  if (raw && typeof raw === 'object' && 'filter' in raw && !('detection' in raw)) throw new SigmaUnsupported('filter rule')
  const doc = checkSigmaDocument(SigmaRuleDocument, raw, 'rule')
  if (doc.title === undefined && doc.metadata?.title === undefined) throw new SigmaInvalid("field 'title'", 'required')
  if (!('condition' in doc.detection)) throw new SigmaInvalid("field 'detection.condition'", 'required')
  if ('timeframe' in doc.detection)
    throw new SigmaUnsupported("detection 'timeframe'", 'aggregations over time belong to correlation rules')
  return doc
}

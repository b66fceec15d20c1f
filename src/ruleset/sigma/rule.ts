/**
 * The Sigma rule document (spec v2.1) as far as compilation needs it; other keys are kept.
 * The Wazuh flavour puts the title under `metadata.title`, so either place is accepted.
 */
import { type Static, Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { parseYaml } from '../../http/body'
import { SigmaInvalid, SigmaUnsupported } from './errors'

export const SigmaRuleDocument = Type.Object(
  {
    title: Type.Optional(Type.String()),
    id: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    status: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    level: Type.Optional(Type.String()),
    tags: Type.Optional(Type.Array(Type.String())),
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
  let doc: unknown = source
  if (typeof source === 'string') {
    try {
      doc = parseYaml(source)
    } catch (e) {
      throw new SigmaInvalid('YAML', (e as Error).message)
    }
    // Bun returns several documents as an array; a rule document is never a list itself.
    if (Array.isArray(doc)) {
      if (doc.some((d) => d && typeof d === 'object' && 'correlation' in d)) throw new SigmaUnsupported('correlation rule')
      if (doc.length !== 1) throw new SigmaUnsupported('multi-document rule file', `${doc.length} documents`)
      doc = doc[0]
    }
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new SigmaInvalid('rule', 'not a YAML mapping')
  if ('correlation' in doc) throw new SigmaUnsupported('correlation rule')
  if ('filter' in doc && !('detection' in doc)) throw new SigmaUnsupported('filter rule')
  if (!Value.Check(SigmaRuleDocument, doc)) {
    const e = Value.Errors(SigmaRuleDocument, doc).First()!
    throw new SigmaInvalid(e.path === '' ? 'rule' : `field '${e.path.slice(1).replaceAll('/', '.')}'`, e.message)
  }
  if (doc.title === undefined && doc.metadata?.title === undefined) throw new SigmaInvalid("field 'title'", 'required')
  if (!('condition' in doc.detection)) throw new SigmaInvalid("field 'detection.condition'", 'required')
  if ('timeframe' in doc.detection)
    throw new SigmaUnsupported("detection 'timeframe'", 'aggregations over time belong to correlation rules')
  return doc
}

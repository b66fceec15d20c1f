// What a CTI record becomes in a content index (reference 2.5): routing by payload type (or by
// resource name for the vulnerability feed), the processing applied to a synced document before
// hashing (2.5 steps 1-5), and the three envelopes (space-aware content, IoC, CVE).
import type { ContentKind } from '../../setup/indices'
import { documentHash } from '../hash'
import { isObject, type Doc } from '../repository'
import { nestMetadata, renderYaml } from '../resources/normalize'
import type { ConsumerDef } from './consumers'

/** Payload `type` -> index, for the ruleset consumer. */
const RULESET_TYPES: Record<string, ContentKind> = {
  rule: 'rules',
  decoder: 'decoders',
  integration: 'integrations',
  kvdb: 'kvdbs',
  filter: 'filters',
  'pre-filter': 'filters',
  'post-filter': 'filters',
  policy: 'policies',
}
const YAML_KIND: Partial<Record<ContentKind, string>> = { decoders: 'decoder', kvdbs: 'kvdb', filters: 'filter' }

const CVE_NAMES = new Set(['CNA-MAPPING-GLOBAL', 'FEED-GLOBAL', 'OSCPE-GLOBAL', 'TCPE', 'TVENDORS'])

/** The vulnerability-feed type of a resource name (`CVE-2024-1` -> `CVE`), or undefined. */
export function cveType(resource: string): string | undefined {
  const upper = resource.toUpperCase()
  if (upper.startsWith('CVE-')) return 'CVE'
  if (upper.startsWith('TID-')) return 'TID'
  return CVE_NAMES.has(upper) ? upper : undefined
}

export type Routed = { kind: ContentKind; id: string; body: Doc } | { skip: 'no_payload' | 'unknown_type' | 'foreign_type' }

/** The document a payload carries: `document`, legacy `payload`, or (CVE feeds) the payload itself. */
function documentOf(payload: Doc): unknown {
  if ('document' in payload) return payload.document
  if ('payload' in payload) return payload.payload
  return 'type' in payload || 'offset' in payload ? undefined : payload
}

/** Reference 2.5 steps 1-4 (+5 for policies), on a copy. */
export function processDocument(document: Doc, kind: ContentKind): Doc {
  const doc: Doc = structuredClone(document)
  if (doc.type !== 'pre-filter' && doc.type !== 'post-filter') delete doc.type
  if (isObject(doc.metadata)) {
    delete doc.metadata.custom_fields
    delete doc.metadata.dataset
  }
  const renameSigma = (r: unknown) => {
    if (isObject(r) && 'sigma_id' in r) {
      r.id = r.sigma_id
      delete r.sigma_id
    }
  }
  if (Array.isArray(doc.related)) doc.related.forEach(renameSigma)
  else renameSigma(doc.related)
  const nested = nestMetadata(doc)
  // nestMetadata puts metadata first; keep `id` first as every other writer does.
  const out: Doc = 'id' in nested ? { id: nested.id, ...nested } : nested
  if (kind === 'policies') {
    const list = (v: unknown) => (Array.isArray(v) ? v.filter((x) => x !== null) : [])
    out.integrations = list(out.integrations)
    out.filters = list(out.filters)
    out.enrichments = list(out.enrichments)
    for (const k of ['enabled', 'index_unclassified_events', 'index_discarded_events']) out[k] = out[k] ?? false
    const meta = out.metadata as Doc
    meta.compatibility = meta.compatibility ?? []
    meta.references = meta.references ?? []
  }
  return out
}

/** The stored envelope of a space-aware document (hash over the processed document). */
export function contentEnvelope(kind: ContentKind, document: Doc, space: string, offset: number): Doc {
  const body: Doc = { document, hash: { sha256: documentHash(document) }, space: { name: space }, offset }
  const yamlKind = YAML_KIND[kind]
  if (yamlKind) body.yaml = renderYaml(document, yamlKind)
  return body
}

const IOC_FIELDS = ['id', 'name', 'type', 'confidence', 'first_seen', 'last_seen', 'provider', 'reference', 'tags'] as const
const FEED_DATE = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) UTC$/

/** Feed dates like `2025-09-17 16:40:05 UTC` (reference A.16) are stored as ISO-8601 so date fields accept them. */
const isoDate = (v: unknown) => (typeof v === 'string' && FEED_DATE.test(v) ? v.replace(FEED_DATE, '$1T$2Z') : v)

/** IoC envelope: the fixed field set, every key present (null when absent); hash over the incoming document. */
export function iocEnvelope(document: Doc, offset: number): Doc {
  const doc: Doc = {}
  for (const k of IOC_FIELDS) doc[k] = document[k] ?? null
  doc.first_seen = isoDate(doc.first_seen)
  doc.last_seen = isoDate(doc.last_seen)
  const feed = isObject(document.feed) ? document.feed : {}
  const software = isObject(document.software) ? document.software : {}
  doc.feed = { name: feed.name ?? null }
  doc.software = { alias: software.alias ?? null, name: software.name ?? null, type: software.type ?? null }
  return { document: doc, hash: { sha256: documentHash(document) }, offset }
}

/**
 * Routes one create/snapshot record to its index and builds what is stored. Records of a type
 * this consumer has no index for are skipped, as are records without a document.
 */
export function routeRecord(consumer: ConsumerDef, resource: string, payload: unknown, offset: number): Routed {
  if (!isObject(payload)) return { skip: 'no_payload' }
  if (consumer.kind === 'vulnerabilities') {
    const type = cveType(resource)
    const document = documentOf(payload)
    if (!type) return { skip: 'unknown_type' }
    if (document === undefined || document === null) return { skip: 'no_payload' }
    return { kind: 'vulnerabilities', id: resource, body: { document, offset, type } }
  }
  const type = typeof payload.type === 'string' ? payload.type : ''
  const document = documentOf(payload)
  if (!isObject(document) && !Array.isArray(document)) return { skip: 'no_payload' }
  if (consumer.kind === 'iocs') {
    if (type !== 'ioc') return { skip: type ? 'foreign_type' : 'unknown_type' }
    if (!isObject(document)) return { skip: 'no_payload' }
    return { kind: 'enrichments', id: resource, body: iocEnvelope(document, offset) }
  }
  const kind = RULESET_TYPES[type]
  if (!kind) return { skip: type === 'ioc' ? 'foreign_type' : 'unknown_type' }
  if (!isObject(document)) return { skip: 'no_payload' }
  const space = isObject(payload.space) && typeof payload.space.name === 'string' ? payload.space.name : 'standard'
  return { kind, id: resource, body: contentEnvelope(kind, processDocument(document, kind), space, offset) }
}

/** Re-processes a stored envelope after a patch: hash and YAML follow the document, offset moves. */
export function reprocess(kind: ContentKind, patched: Doc, offset: number): Doc {
  if (kind === 'vulnerabilities') return { ...patched, offset }
  const document = isObject(patched.document) ? patched.document : {}
  if (kind === 'enrichments') return iocEnvelope(document, offset)
  const processed = processDocument(document, kind)
  const space = isObject(patched.space) ? patched.space : {}
  const name = typeof space.name === 'string' ? space.name : 'standard'
  const out = { ...patched, ...contentEnvelope(kind, processed, name, offset) }
  // The aggregate hash of a policy stays until the post-sync recompute replaces it.
  if (isObject(space.hash)) out.space = { name, hash: space.hash }
  return out
}

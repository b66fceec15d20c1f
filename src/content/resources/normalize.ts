// The server-managed parts of a resource document (reference 2.5 step 4 and 4.2.1): metadata
// nesting, id, timestamps, the `enabled` default; plus the "missing field" rule of reference 4.1.
import { ApiError } from '../../http/errors'
import { isObject, type Doc } from '../repository'

/** ISO-8601 UTC at second precision, e.g. `2026-05-04T10:11:12Z`. */
export const isoSeconds = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z')

const ROOT_METADATA = ['title', 'author', 'description', 'references', 'documentation', 'supports', 'compatibility', 'date', 'modified']

/** Moves root-level metadata keys into `metadata` (overwriting) and defaults `supports`. */
export function nestMetadata(resource: Doc): Doc {
  const out: Doc = {}
  const metadata: Doc = isObject(resource.metadata) ? { ...resource.metadata } : {}
  for (const [k, v] of Object.entries(resource)) {
    if (k === 'metadata') continue
    if (ROOT_METADATA.includes(k)) metadata[k] = v
    else out[k] = v
  }
  if (!('supports' in metadata) && !('compatibility' in metadata)) metadata.supports = []
  return { metadata, ...out }
}

/** A field is missing when absent, null or a blank string; arrays and objects only need to exist. */
export function isMissing(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '')
}

export function valueAt(doc: Doc, path: string): unknown {
  let cur: unknown = doc
  for (const part of path.split('.')) {
    if (!isObject(cur)) return undefined
    cur = cur[part]
  }
  return cur
}

/** 400 `Missing [<field>] field.` for the first missing path (a missing `metadata` is named as such). */
export function requireFields(doc: Doc, paths: readonly string[]): void {
  for (const path of paths) {
    if (path.startsWith('metadata.') && !isObject(doc.metadata)) throw new ApiError(400, 'Missing [metadata] field.')
    if (isMissing(valueAt(doc, path))) throw new ApiError(400, `Missing [${path}] field.`)
  }
}

/** The stored form of a new resource: id first, metadata nested and stamped, enabled by default. */
export function forCreate(resource: Doc, id: string, now: number): Doc {
  const { id: _ignored, ...rest } = resource
  const nested = nestMetadata(rest)
  const stamp = isoSeconds(now)
  const metadata = { ...(nested.metadata as Doc), date: stamp, modified: stamp }
  return { id, ...nested, metadata, enabled: nested.enabled ?? true }
}

/**
 * The stored form of an update: the path id forced in, `date` kept, `enabled` kept when absent.
 * `modified` is re-stamped only when the content actually changes, so an identical PUT leaves the
 * hash (and the space hash, and the Engine) alone.
 */
export function forUpdate(resource: Doc, id: string, stored: Doc, now: number): Doc {
  const { id: _ignored, ...rest } = resource
  const nested = nestMetadata(rest)
  const storedMeta = isObject(stored.metadata) ? stored.metadata : {}
  const candidate = (modified: unknown): Doc => ({
    id,
    ...nested,
    metadata: { ...(nested.metadata as Doc), date: storedMeta.date, modified },
    enabled: nested.enabled ?? stored.enabled ?? true,
  })
  const same = candidate(storedMeta.modified)
  return JSON.stringify(same) === JSON.stringify(stored) ? stored : candidate(isoSeconds(now))
}

const DECODER_ORDER = ['name', 'metadata', 'parents', 'definitions', 'check', 'parse|event.original', 'parse|message', 'normalize']

/** YAML rendering stored next to decoders, KVDBs and filters (decoders in the Engine's key order). */
export function renderYaml(document: Doc, kind: string): string {
  let ordered = document
  if (kind === 'decoder') {
    ordered = {}
    for (const k of DECODER_ORDER) if (k in document) ordered[k] = document[k]
    for (const [k, v] of Object.entries(document)) if (!(k in ordered)) ordered[k] = v
  }
  return Bun.YAML.stringify(ordered, null, 2)
}

/**
 * Reading any Sigma document (rule, filter, correlation): YAML text or an already parsed object,
 * one document, checked against its TypeBox schema with the failing field named, so every kind
 * reports bad input the same way.
 */
import { type Static, type TSchema, Type as T } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { parseYaml } from '../../http/body'
import { SigmaInvalid, SigmaUnsupported } from './errors'

/** What a Sigma rule and a correlation rule both say of themselves beside their title (Sigma v2.1), in the order checked. */
export const SIGMA_RULE_DESCRIPTION = {
  id: T.Optional(T.String()),
  name: T.Optional(T.String()),
  status: T.Optional(T.String()),
  description: T.Optional(T.String()),
  level: T.Optional(T.String()),
  tags: T.Optional(T.Array(T.String())),
}

/** The parsed YAML (Bun returns several documents as an array; a Sigma document is never a list). */
export function readSigmaYaml(source: string | object): unknown {
  if (typeof source !== 'string') return source
  let doc: unknown
  try {
    doc = parseYaml(source)
  } catch (e) {
    throw new SigmaInvalid('YAML', (e as Error).message)
  }
  if (Array.isArray(doc) && doc.length !== 1)
    throw new SigmaUnsupported('multi-document rule file', `${doc.length} documents: send each rule of a bundle on its own`)
  return Array.isArray(doc) ? doc[0] : doc
}

/** `doc` as `schema`, or SigmaInvalid naming the first failing field (`what` when it is the whole). */
export function checkSigmaDocument<S extends TSchema>(schema: S, doc: unknown, what: string): Static<S> {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new SigmaInvalid(what, 'not a YAML mapping')
  if (!Value.Check(schema, doc)) {
    const e = Value.Errors(schema, doc).First()!
    throw new SigmaInvalid(e.path === '' ? what : `field '${e.path.slice(1).replaceAll('/', '.')}'`, e.message)
  }
  return doc
}

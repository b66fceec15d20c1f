/**
 * The body a plugin route declares is the body it gets: `runPluginRoute` reads it with the declared
 * limit and content kind, parses it and checks it against the declared TypeBox schema (or the
 * declared parser) before the handler runs, so no handler reads or validates a body itself.
 */
import type { Static, TSchema } from '@sinclair/typebox'
import { isObject } from '../json'
import { BodySyntaxError, decodeUtf8, parseJson, parseYaml, readBody, sentAsYaml, type BodyLimit } from './body'
import { ApiError } from './errors'
import { checkBody, wordOf } from './validate'

/** A JSON object (or, for a `yaml` limit, a YAML mapping when sent as YAML). */
export interface ObjectBody<S extends TSchema = TSchema, T = Static<S>> {
  limit: BodyLimit
  /** Where the limit is a dynamic setting (logtest): the limit of this request; `limit` is then its default. */
  limitNow?: () => Promise<BodyLimit>
  /** The body's type and its validation; the robustness walk also builds its samples from it. */
  schema: S
  /**
   * Where the reference's messages come in an order a schema cannot express (promotion, findings),
   * the parser that replaces the schema check: it gets the parsed object (any value when the schema is worded at its
   * root) and answers the handler's input.
   */
  parse?: (value: unknown) => T
  /** What the 400s call the body: `Invalid <name>.`, `Invalid <name>: field [f] ...` (default `request body`). */
  name?: string
  /** The 400 of an empty body where the reference words it apart (sessions). */
  empty?: string
  /** Whether a malformed body's 400 adds the parser's complaint (resource creation). */
  detail?: boolean
  /** The 400 of a malformed body where the reference words it otherwise, given the parser's complaint. */
  malformed?: (why: string) => string
  /** An empty body is the empty object (a search without a body matches everything). */
  optional?: boolean
}

/** UTF-8 text handed over as it is (Sigma rules): the handler's parser judges it. */
export interface TextBody {
  limit: BodyLimit
  schema?: undefined
  /** The 400s of an empty body and of one that is not UTF-8. */
  text: { empty: string; invalid: string }
}

/** What a route reads; routes without one read no body. */
export type RouteBody = ObjectBody<TSchema, any> | TextBody

/** The handler's `body` for a declaration. */
export type BodyOf<B> = B extends ObjectBody<any, infer T> ? T : B extends TextBody ? string : undefined

/** Declares a JSON-object body checked against `schema`; the handler's body is `Static<S>` (or what `parse` answers). */
export function objectBody<S extends TSchema, T = Static<S>>(
  limit: BodyLimit,
  schema: S,
  words: Omit<ObjectBody<S, T>, 'limit' | 'schema'> = {},
) {
  return { limit, schema, ...words } satisfies ObjectBody<S, T>
}

/** Declares a text body (the handler gets the string). */
export function textBody(limit: BodyLimit, text: TextBody['text']): TextBody {
  return { limit, text }
}

/** Reads, parses and checks a request's body as its route declares it. */
export async function readRouteBody(request: Request, body: RouteBody): Promise<unknown> {
  const bytes = await readBody(request, 'limitNow' in body && body.limitNow ? await body.limitNow() : body.limit)
  if ('text' in body) {
    let text: string
    try {
      text = decodeUtf8(bytes)
    } catch {
      throw new ApiError(400, body.text.invalid)
    }
    if (text.trim() === '') throw new ApiError(400, body.text.empty)
    return text
  }
  const yaml = body.limit.kind === 'yaml' && sentAsYaml(request)
  let text: string
  try {
    text = decodeUtf8(bytes)
  } catch (e) {
    throw invalidBody(body, (e as Error).message)
  }
  return parseObjectText(text, body, yaml)
}

/** Parses a body's text as `body` declares it and checks it: the same steps `readRouteBody` takes once the bytes are read. */
export function parseObjectText<S extends TSchema, T>(text: string, body: ObjectBody<S, T>, yaml = false): T {
  if (text.trim() === '') {
    if (body.optional) return check(body, {})
    throw new ApiError(400, body.empty ?? invalidBody(body).message)
  }
  let value: unknown
  try {
    value = yaml ? parseYaml(text) : parseJson(text)
  } catch (e) {
    if (e instanceof BodySyntaxError) throw invalidBody(body, e.message)
    throw e
  }
  // A schema worded at its root (the Settings record's missing field) answers a non-object itself.
  if (!isObject(value) && !wordOf(body.schema)) throw invalidBody(body, 'The body must be an object.')
  return check(body, value)
}

function check<S extends TSchema, T>(body: ObjectBody<S, T>, value: unknown): T {
  if (body.parse) return body.parse(value)
  return checkBody(body.schema, value, body.name) as T
}

function invalidBody(body: ObjectBody<TSchema, unknown>, why?: string): ApiError {
  if (body.malformed) return new ApiError(400, body.malformed(why ?? 'The body is empty.'))
  const name = body.name ?? 'request body'
  return new ApiError(400, body.detail && why ? `Invalid ${name}. ${why}` : `Invalid ${name}.`)
}

/**
 * Action templates as the peer renders them: mustache (the `mustache` package) over `{ctx}`, with
 * every literal `{{ctx.detector` rewritten to `{{ctx.monitor` first (SA's `DetectorTrigger`; section
 * tags such as `{{#ctx.detector` are left as they are, as there). OpenSearch's mustache engine
 * escapes values for JSON by default, so `{{x}}` here escapes the same way and `{{{x}}}` is raw.
 */
import Mustache from 'mustache'
import { type Static, Type as T } from '@sinclair/typebox'
import { ApiError } from '../http/errors'

export const Template = T.Union([
  T.String(),
  T.Object({ source: T.String(), lang: T.Optional(T.String()) }, { additionalProperties: false }),
])
export type Template = Static<typeof Template>

const jsonEscape = (value: unknown) => JSON.stringify(String(value)).slice(1, -1)

export function templateSource(t: Template | undefined): string {
  const source = t === undefined ? '' : typeof t === 'string' ? t : t.source
  return source.replaceAll('{{ctx.detector', '{{ctx.monitor')
}

/** 400 for a template the action could never render (another language, unbalanced tags). */
export function checkTemplate(t: Template | undefined, what: string): void {
  if (t !== undefined && typeof t !== 'string' && t.lang !== undefined && t.lang !== 'mustache')
    throw new ApiError(400, `Invalid ${what}: lang must be mustache, not [${t.lang}]`)
  try {
    Mustache.parse(templateSource(t))
  } catch (e) {
    throw new ApiError(400, `Invalid ${what}: ${(e as Error).message}`)
  }
}

export function render(t: Template | undefined, ctx: Record<string, unknown>): string {
  return Mustache.render(templateSource(t), { ctx }, undefined, { escape: jsonEscape })
}

/**
 * Legacy (v1) index templates (`_template`): every one that matches a new index applies, by
 * ascending `order`, when no composable template matches it (match.ts, compose.ts).
 */
import { IllegalArgument, StoreError, TemplateMissing } from '../../errors'
import { wildcardToRegExp } from '../../names'
import { setOwn } from '../../own'
import type { Acknowledged, LegacyTemplateBody } from '../../port'
import type { StoreCore } from '../core'
import { checkTemplate, normalizedPart, normalizedSettings, patternList } from './checks'
import { dropTemplates, saveTemplate } from './persist'

export async function putTemplate(
  core: StoreCore,
  params: { name: string; body: LegacyTemplateBody; create?: boolean; order?: number },
): Promise<Acknowledged> {
  const { name, body } = params
  const patterns = body.index_patterns === undefined ? [] : patternList(body.index_patterns)
  if (patterns.length === 0)
    throw new StoreError('action_request_validation_exception', 400, 'Validation Failed: 1: index patterns are missing;')
  if (params.create && core.cat.legacyTemplates.has(name)) throw new IllegalArgument(`index_template [${name}] already exists`)
  const part = normalizedPart({ settings: body.settings, mappings: body.mappings, aliases: body.aliases }, patterns, true)
  checkTemplate(name, patterns, body.settings)
  const stored: LegacyTemplateBody = {
    order: body.order ?? params.order ?? 0,
    ...(body.version === undefined ? {} : { version: body.version }),
    index_patterns: patterns,
    settings: part.settings ?? {},
    mappings: part.mappings ?? {},
    aliases: part.aliases ?? {},
  }
  saveTemplate(core, 'legacy_templates', name, stored)
  return { acknowledged: true }
}

/** Name -> template for each comma-separated name or pattern; names that match none are left out. */
export async function getTemplate(core: StoreCore, params: { name?: string } = {}): Promise<Record<string, LegacyTemplateBody>> {
  const out: Record<string, LegacyTemplateBody> = {}
  const found = [...core.cat.legacyTemplates].sort(([a], [b]) => (a < b ? -1 : 1))
  for (const n of (params.name ?? '*').split(',')) {
    const re = wildcardToRegExp(n)
    for (const [name, body] of found) {
      if (!re.test(name)) continue
      const shown = structuredClone(body)
      shown.settings = normalizedSettings(shown.settings ?? {})
      setOwn(out, name, shown)
    }
  }
  return out
}

/** `name` is one name or pattern (a comma is part of the name, as in OpenSearch). */
export async function deleteTemplate(core: StoreCore, params: { name: string }): Promise<Acknowledged> {
  const re = wildcardToRegExp(params.name)
  const matched = [...core.cat.legacyTemplates.keys()].filter((k) => re.test(k))
  if (matched.length === 0 && params.name !== '*') throw new TemplateMissing(params.name)
  dropTemplates(core, 'legacy_templates', matched)
  return { acknowledged: true }
}

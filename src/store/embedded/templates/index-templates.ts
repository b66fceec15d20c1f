/** Composable index templates: put (checked as OpenSearch checks them, composed_of included), get and delete. */
import { IllegalArgument, InvalidIndexTemplate, MapperParsing, ResourceNotFound, StoreError, TemplateMissing } from '../../errors'
import { hasWildcard, wildcardToRegExp } from '../../names'
import type { Acknowledged, IndexTemplateBody, IndexTemplateEntry } from '../../port'
import { isObject } from '../../query/doc'
import type { StoreCore } from '../core'
import { flattenSettings } from '../../settings'
import { checkTemplate, isGlobal, normalizedPart, normalizedSettings, patternList } from './checks'
import { checkComposite, compositeError } from './compose'
import { dropTemplates, saveTemplate } from './persist'

/**
 * The template's own part in its kept form. As OpenSearch words them, a settings problem is the
 * template's (invalid_index_template_exception), a mapping problem one of its composition.
 */
function keptTemplate(name: string, body: IndexTemplateBody, patterns: string[], wrap: string): IndexTemplateBody['template'] {
  if (body.template === undefined) return undefined
  try {
    if (body.template.settings !== undefined) normalizedSettings(body.template.settings)
  } catch (e) {
    if (e instanceof IllegalArgument) throw new InvalidIndexTemplate(name, `Validation Failed: 1: ${e.reason};`)
    throw e
  }
  try {
    return normalizedPart(body.template, patterns)
  } catch (e) {
    throw e instanceof MapperParsing ? compositeError(name, wrap, e) : e
  }
}

function checkGlobal(patterns: string[], body: IndexTemplateBody): void {
  if (isGlobal(patterns) && 'index.hidden' in flattenSettings(body.template?.settings))
    throw new StoreError(
      'action_request_validation_exception',
      400,
      'Validation Failed: 1: global composable templates may not specify the setting index.hidden;',
    )
}

function checkComposedOf(core: StoreCore, name: string, body: IndexTemplateBody): void {
  const missing = (body.composed_of ?? []).filter((c) => !core.cat.componentTemplates.has(c))
  if (missing.length > 0)
    throw new InvalidIndexTemplate(name, `index template [${name}] specifies component templates [${missing.join(', ')}] that do not exist`)
}

function checkOverlaps(core: StoreCore, name: string, patterns: string[], priority: number): void {
  for (const [other, ob] of core.cat.templates) {
    if (other === name || (ob.priority ?? 0) !== priority) continue
    const op = patternList(ob.index_patterns)
    const overlap = patterns.some((p) => op.some((q) => wildcardToRegExp(p).test(q) || wildcardToRegExp(q).test(p)))
    if (overlap)
      throw new IllegalArgument(
        `index template [${name}] has index patterns [${patterns.join(', ')}] matching patterns from existing templates [${other}] with patterns (${other} => [${op.join(', ')}]) that have the same priority [${priority}], multiple index templates may not match during index creation, please use a different priority`,
      )
  }
}

export async function putIndexTemplate(
  core: StoreCore,
  params: { name: string; body: IndexTemplateBody; create?: boolean },
): Promise<Acknowledged> {
  const { name, body } = params
  if (!isObject(body) || body.index_patterns === undefined)
    throw new StoreError('action_request_validation_exception', 400, 'Validation Failed: 1: index patterns are missing;')
  const patterns = patternList(body.index_patterns)
  checkGlobal(patterns, body)
  checkComposedOf(core, name, body)
  if (params.create && core.cat.templates.has(name)) throw new IllegalArgument(`index template [${name}] already exists`)
  checkOverlaps(core, name, patterns, body.priority ?? 0)
  checkTemplate(name, patterns)
  const composedOf = body.composed_of ?? []
  const wrap = `composable template [${name}] template after composition ${composedOf.length > 0 ? `with component templates [${composedOf.join(', ')}] ` : ''}is invalid`
  const template = keptTemplate(name, body, patterns, wrap)
  const stored: IndexTemplateBody = { ...body, index_patterns: patterns, ...(template === undefined ? {} : { template }) }
  checkComposite(name, stored, core.cat.componentTemplates, wrap)
  saveTemplate(core, 'templates', name, stored)
  return { acknowledged: true }
}

/** A template as GET answers it: `composed_of` always present, settings in their kept form. */
function shown(body: IndexTemplateBody): IndexTemplateBody {
  const out = structuredClone(body)
  out.composed_of ??= []
  if (out.template?.settings !== undefined) out.template.settings = normalizedSettings(out.template.settings)
  return out
}

export async function getIndexTemplate(
  core: StoreCore,
  params: { name?: string } = {},
): Promise<{ index_templates: IndexTemplateEntry[] }> {
  const names = (params.name ?? '*').split(',')
  const out: IndexTemplateEntry[] = []
  for (const n of names) {
    const re = wildcardToRegExp(n)
    const found = [...core.cat.templates].filter(([k]) => re.test(k))
    if (found.length === 0 && !hasWildcard(n)) throw new ResourceNotFound(`index template matching [${n}] not found`)
    for (const [k, v] of found) if (!out.some((e) => e.name === k)) out.push({ name: k, index_template: shown(v) })
  }
  return { index_templates: out.sort((a, b) => (a.name < b.name ? -1 : 1)) }
}

export async function deleteIndexTemplate(core: StoreCore, params: { name: string }): Promise<Acknowledged> {
  const names = params.name.split(',').flatMap((n) => {
    const found = [...core.cat.templates.keys()].filter((k) => wildcardToRegExp(n).test(k))
    if (found.length === 0 && n !== '*') throw new TemplateMissing(n)
    return found
  })
  for (const n of names) {
    const user = [...core.cat.streams.values()].find((ds) => ds.template === n)
    if (user) throw new IllegalArgument(`unable to remove composable templates [${n}] as they are in use by a data streams [${user.name}]`)
  }
  dropTemplates(core, 'templates', names)
  return { acknowledged: true }
}

/**
 * Component templates: settings, mappings and aliases an index template names in `composed_of`.
 * A put is refused when it would leave an index template using it unable to compose; a delete
 * while an index template uses it.
 */
import { IllegalArgument, ResourceNotFound, TemplateMissing } from '../../errors'
import { hasWildcard, wildcardToRegExp } from '../../names'
import type { Acknowledged, ComponentTemplateBody, ComponentTemplateEntry } from '../../port'
import { flattenSettings } from '../../settings'
import type { StoreCore } from '../core'
import { checkTemplate, isGlobal, normalizedPart, normalizedSettings, patternList } from './checks'
import { checkComposite } from './compose'
import { dropTemplates, saveTemplate } from './persist'

/** The index templates composed of `name`, with what composing them with `stored` in its place gives. */
function checkUsers(core: StoreCore, name: string, stored: ComponentTemplateBody): void {
  const users = [...core.cat.templates].filter(([, t]) => (t.composed_of ?? []).includes(name))
  if ('index.hidden' in flattenSettings(stored.template.settings)) {
    const globals = users.filter(([, t]) => isGlobal(patternList(t.index_patterns))).map(([n]) => n)
    if (globals.length > 0)
      throw new IllegalArgument(
        `cannot update component template [${name}] because the following global templates would resolve to specifying the [index.hidden] setting: [${globals.join(',')}]`,
      )
  }
  const components = new Map(core.cat.componentTemplates).set(name, stored)
  for (const [user, template] of users)
    checkComposite(
      user,
      template,
      components,
      `updating component template [${name}] results in invalid composable template [${user}] after templates are merged`,
    )
}

export async function putComponentTemplate(
  core: StoreCore,
  params: { name: string; body: ComponentTemplateBody; create?: boolean },
): Promise<Acknowledged> {
  const { name, body } = params
  if (params.create && core.cat.componentTemplates.has(name)) throw new IllegalArgument(`component template [${name}] already exists`)
  const template = normalizedPart(body.template ?? {})
  checkTemplate(name, [], undefined)
  const stored: ComponentTemplateBody = {
    template,
    ...(body.version === undefined ? {} : { version: body.version }),
    ...(body._meta === undefined ? {} : { _meta: body._meta }),
  }
  checkUsers(core, name, stored)
  saveTemplate(core, 'component_templates', name, stored)
  return { acknowledged: true }
}

export async function getComponentTemplate(
  core: StoreCore,
  params: { name?: string } = {},
): Promise<{ component_templates: ComponentTemplateEntry[] }> {
  const pattern = params.name ?? '*'
  const re = wildcardToRegExp(pattern)
  const found = [...core.cat.componentTemplates].filter(([k]) => re.test(k)).sort(([a], [b]) => (a < b ? -1 : 1))
  if (found.length === 0 && !hasWildcard(pattern)) throw new ResourceNotFound(`component template matching [${pattern}] not found`)
  return {
    component_templates: found.map(([name, body]) => {
      const shown = structuredClone(body)
      if (shown.template.settings !== undefined) shown.template.settings = normalizedSettings(shown.template.settings)
      return { name, component_template: shown }
    }),
  }
}

export async function deleteComponentTemplate(core: StoreCore, params: { name: string }): Promise<Acknowledged> {
  const re = wildcardToRegExp(params.name)
  const matched = [...core.cat.componentTemplates.keys()].filter((k) => re.test(k))
  const users = [...core.cat.templates].filter(([, t]) => (t.composed_of ?? []).some((c) => matched.includes(c)))
  if (users.length > 0) {
    const used = [...new Set(users.flatMap(([, t]) => (t.composed_of ?? []).filter((c) => matched.includes(c))))]
    throw new IllegalArgument(
      `component templates [${used.join(', ')}] cannot be removed as they are still in use by index templates [${users.map(([n]) => n).join(', ')}]`,
    )
  }
  if (matched.length === 0 && params.name !== '*') throw new TemplateMissing(params.name)
  dropTemplates(core, 'component_templates', matched)
  return { acknowledged: true }
}

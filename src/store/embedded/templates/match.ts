/**
 * Which templates a new index takes: the composable template of highest priority that matches
 * it, or, when none does, every legacy template that matches (OpenSearch's findV2Template and
 * findV1Templates). A hidden index skips global (`*`) templates.
 */
import { wildcardToRegExp } from '../../names'
import type { IndexTemplateBody, LegacyTemplateBody } from '../../port'
import { flattenSettings } from '../../settings'
import type { StoreCore } from '../core'
import { isGlobal, patternList } from './checks'

const matches = (patterns: string[], index: string) => patterns.some((p) => wildcardToRegExp(p).test(index))

export function matchTemplate(core: StoreCore, index: string, hidden = false): { name: string; body: IndexTemplateBody } | undefined {
  return matchAmong(core.cat.templates, index, hidden)
}

/** The composable template among `templates` that index `index` takes. */
export function matchAmong(
  templates: ReadonlyMap<string, IndexTemplateBody>,
  index: string,
  hidden = false,
): { name: string; body: IndexTemplateBody } | undefined {
  let best: { name: string; body: IndexTemplateBody } | undefined
  for (const [name, body] of templates) {
    const patterns = patternList(body.index_patterns)
    if (!matches(patterns, index) || (hidden && isGlobal(patterns))) continue
    if (!best || (body.priority ?? 0) > (best.body.priority ?? 0)) best = { name, body }
  }
  return best
}

/**
 * The legacy templates for `index`, lowest order first (so later ones win). `hidden` is the
 * request's `index.hidden`; when the request leaves it out and the template that decides it
 * makes the index hidden, the global templates are dropped.
 */
export function matchLegacy(core: StoreCore, index: string, hidden?: boolean): Array<{ name: string; body: LegacyTemplateBody }> {
  let found = [...core.cat.legacyTemplates]
    .filter(([, t]) => matches(patternList(t.index_patterns), index) && !(hidden === true && isGlobal(patternList(t.index_patterns))))
    .map(([name, body]) => ({ name, body }))
    .sort((a, b) => (b.body.order ?? 0) - (a.body.order ?? 0) || (a.name < b.name ? -1 : 1))
  if (hidden === undefined) {
    const decides = found.find((t) => flattenSettings(t.body.settings)['index.hidden'] !== undefined)
    if (decides && flattenSettings(decides.body.settings)['index.hidden'] === 'true')
      found = found.filter((t) => !isGlobal(patternList(t.body.index_patterns)))
  }
  return found.reverse()
}

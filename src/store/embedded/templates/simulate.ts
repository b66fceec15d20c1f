/**
 * `_index_template/_simulate_index/<index>` and `_index_template/_simulate[/<name>]`: what a
 * composable template gives a new index (its component templates composed in), and the other
 * templates whose patterns overlap its own.
 */
import { IllegalArgument, StoreError } from '../../errors'
import { nestKeys } from '../../flat-keys'
import { wildcardToRegExp } from '../../names'
import type { IndexTemplateBody, SimulatedTemplate } from '../../port'
import type { StoreCore } from '../core'
import { patternList } from './checks'
import { composableParts, composeParts } from './compose'
import { matchAmong } from './match'

/** The name a template sent in the request body goes by while it is simulated. */
const SIMULATED = 'simulate_template'

const overlaps = (a: string[], b: string[]) => a.some((p) => b.some((q) => wildcardToRegExp(p).test(q) || wildcardToRegExp(q).test(p)))

function simulated(core: StoreCore, index: string, name: string, template: IndexTemplateBody): SimulatedTemplate {
  const composed = composeParts(index, composableParts(template, core.cat.componentTemplates), {}, false)
  const patterns = patternList(template.index_patterns)
  const others = [
    ...[...core.cat.templates].map(([n, t]) => ({ name: n, index_patterns: patternList(t.index_patterns) })),
    ...[...core.cat.legacyTemplates].map(([n, t]) => ({ name: n, index_patterns: patternList(t.index_patterns) })),
  ]
  return {
    template: {
      settings: nestKeys(composed.settings),
      ...(Object.keys(composed.mappings).length > 0 ? { mappings: composed.mappings } : {}),
      aliases: composed.aliases,
    },
    overlapping: others.filter((o) => o.name !== name && overlaps(patterns, o.index_patterns)).sort((a, b) => (a.name < b.name ? -1 : 1)),
  }
}

export async function simulateIndexTemplate(
  core: StoreCore,
  params: { index: string; body?: IndexTemplateBody },
): Promise<SimulatedTemplate | Record<string, never>> {
  const templates = new Map(core.cat.templates)
  if (params.body) templates.set(SIMULATED, params.body)
  const winner = matchAmong(templates, params.index)
  return winner ? simulated(core, params.index, winner.name, winner.body) : {}
}

export async function simulateTemplate(core: StoreCore, params: { name?: string; body?: IndexTemplateBody }): Promise<SimulatedTemplate> {
  if (params.name === undefined && params.body === undefined)
    throw new StoreError(
      'action_request_validation_exception',
      400,
      'Validation Failed: 1: either index name or index template body must be specified for simulation;',
    )
  const template = params.body ?? (params.name === undefined ? undefined : core.cat.templates.get(params.name))
  if (template === undefined) throw new IllegalArgument(`unable to simulate template [${params.name}] that does not exist`)
  return simulated(core, SIMULATED, params.name ?? SIMULATED, template)
}

/**
 * What a new index is created with, as OpenSearch's MetadataCreateIndexService composes it: the
 * matching composable template's component templates in `composed_of` order, then its own
 * `template`, then the create request; or, when no composable template matches, the matching
 * legacy templates by ascending `order`, then the request. Later parts win: settings key by key,
 * mappings merged (see merge.ts), aliases by name (`{index}` in a template's alias names is the
 * index's name).
 */
import { StoreError } from '../../errors'
import type { AliasDefinition, ComponentTemplateBody, CreateIndexBody, IndexTemplateBody, Mappings } from '../../port'
import { setOwn } from '../../own'
import { flattenSettings, type FlatSettings } from '../../settings'
import type { StoreCore } from '../core'
import { validateMappings } from '../mapping'
import { matchLegacy, matchTemplate } from './match'
import { mergeDefaults, mergeTemplateMappings } from './merge'

interface Composed {
  settings: FlatSettings
  mappings: Mappings
  aliases: Record<string, AliasDefinition>
}

/** The parts a composable template brings, lowest precedence first. */
export function composableParts(template: IndexTemplateBody, components: ReadonlyMap<string, ComponentTemplateBody>): CreateIndexBody[] {
  const parts = (template.composed_of ?? []).flatMap((c) => {
    const found = components.get(c)
    return found ? [found.template] : []
  })
  return template.template ? [...parts, template.template] : parts
}

/** Mappings of composable parts merged in order (a field given again replaces the earlier one). */
function composedMappings(parts: Array<Mappings | undefined>): Mappings {
  let out: Mappings = {}
  for (const m of parts) if (m) out = mergeTemplateMappings(out, validateMappings(m))
  return out
}

/** Mappings of legacy templates (lowest order first) under the request's: higher order wins, key by key at every depth. */
function legacyMappings(parts: Array<Mappings | undefined>, request: Mappings | undefined): Mappings {
  const out = structuredClone(request ? validateMappings(request) : {}) as Record<string, unknown>
  for (const m of [...parts].reverse()) if (m) mergeDefaults(out, validateMappings(m) as Record<string, unknown>)
  return out as Mappings
}

/** Aliases by precedence: the request's, then the parts' from the last; the first definition of a name wins. */
function composedAliases(index: string, parts: CreateIndexBody[], request: CreateIndexBody): Record<string, AliasDefinition> {
  const out: Record<string, AliasDefinition> = {}
  const add = (name: string, def: AliasDefinition | undefined) => {
    if (!Object.hasOwn(out, name)) setOwn(out, name, def ?? {})
  }
  for (const [name, def] of Object.entries(request.aliases ?? {})) add(name, def)
  for (const part of [...parts].reverse())
    for (const [name, def] of Object.entries(part.aliases ?? {})) add(name.replaceAll('{index}', index), def)
  return out
}

/** What index `index` (a data stream's backing index when `dataStream` is set) is created with. */
export function composeIndex(core: StoreCore, index: string, request: CreateIndexBody, dataStream?: string): Composed {
  const requested = flattenSettings(request.settings)
  const hidden = requested['index.hidden'] === undefined ? undefined : requested['index.hidden'] === 'true'
  // A backing index takes its data stream's template (its own `.ds-` name matches none).
  const v2 = matchTemplate(core, dataStream ?? index, hidden === true)
  if (v2) return composeParts(index, composableParts(v2.body, core.cat.componentTemplates), request, false)
  const legacy = dataStream ? [] : matchLegacy(core, index, hidden).map((t) => t.body)
  return composeParts(index, legacy, request, true)
}

/** `parts` (lowest precedence first) and then the request, composed the composable or the legacy way. */
export function composeParts(index: string, parts: CreateIndexBody[], request: CreateIndexBody, legacy: boolean): Composed {
  const settings: FlatSettings = {}
  for (const part of [...parts, request]) Object.assign(settings, flattenSettings(part.settings))
  const mappings = legacy
    ? legacyMappings(
        parts.map((p) => p.mappings),
        request.mappings,
      )
    : composedMappings([...parts.map((p) => p.mappings), request.mappings])
  return { settings, mappings, aliases: composedAliases(index, parts, request) }
}

/** A template whose parts cannot be composed, as OpenSearch words it: `wrap` around "invalid composite mappings" around the cause. */
export function compositeError(name: string, wrap: string, cause: StoreError): StoreError {
  return new StoreError('illegal_argument_exception', 400, wrap, {
    caused_by: {
      type: 'illegal_argument_exception',
      reason: `invalid composite mappings for [${name}]`,
      caused_by: { type: cause.type, reason: cause.reason, ...cause.metadata },
    },
  })
}

/**
 * The mappings of `template` composed with its component templates (`components`, which may
 * hold a component template being replaced), refused as OpenSearch refuses a template whose
 * parts cannot merge. `wrap` words the outer error.
 */
export function checkComposite(
  name: string,
  template: IndexTemplateBody,
  components: ReadonlyMap<string, ComponentTemplateBody>,
  wrap: string,
): void {
  // One part alone cannot disagree with itself: its own mapping was checked when it was put.
  if ((template.composed_of ?? []).length === 0) return
  try {
    composedMappings(composableParts(template, components).map((p) => p.mappings))
  } catch (e) {
    throw e instanceof StoreError ? compositeError(name, wrap, e) : e
  }
}

// `PUT /policy/{space}` (reference 4.5) and `DELETE /space/{space}` (reference 4.8). The policy
// write and the reset's deletions run with the caller's rights (`writerFor`); the default draft
// policy a reset leaves behind and the space hash are the service's: every resource endpoint
// depends on them, whatever the caller may write.
import { ApiError } from '../../http/errors'
import { INDEX_ACTIONS } from '../../security/actions'
import type { Caller } from '../../http/caller'
import { VersionConflict } from '../../store/errors'
import { afterChange, requireDraftPolicy, writerFor, type ContentContext } from '../context'
import { documentHash } from '../hash'
import { CONTENT_ALIASES } from '../indices'
import { isObject, type Doc, type Envelope } from '../repository'
import type { PolicyBody } from '../resources/bodies'
import { isMissing, isoSeconds } from '../resources/normalize'
import { isSpace, type Space } from '../spaces'
import { ensureSpacePolicy } from './defaults'

const POLICY_SPACES: Space[] = ['draft', 'standard']
const BOOLEAN_SETTINGS = ['enabled', 'index_unclassified_events', 'index_discarded_events'] as const
/** The IoC type summary document of the enrichments index (reference 2.11). */
const IOC_TYPE_HASHES_ID = '__ioc_type_hashes__'
const RESETTABLE: Space[] = ['draft']
const RESOURCE_ALIASES = [
  CONTENT_ALIASES.integrations,
  CONTENT_ALIASES.decoders,
  CONTENT_ALIASES.kvdbs,
  CONTENT_ALIASES.rules,
  CONTENT_ALIASES.filters,
  CONTENT_ALIASES.policies,
]

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])
const withoutNulls = (v: unknown): unknown[] => (Array.isArray(v) ? v.filter((x) => x !== null && x !== undefined) : [])
const sameSet = (a: string[], b: string[]) => a.length === b.length && new Set(a).size === new Set(b).size && a.every((x) => b.includes(x))

export class PolicyService {
  constructor(private readonly ctx: ContentContext) {}

  /** `catalog.policy_update.enabled: false` closes the route for everyone, `all_access` included. */
  async assertUpdatesEnabled(): Promise<void> {
    const settings = await this.ctx.settings.snapshot()
    if (!settings.bool('plugins.content_manager.catalog.policy_update.enabled')) {
      throw new ApiError(403, 'Policy updates are disabled on this deployment.')
    }
  }

  /** `body` is the route's, checked against `PolicyBody`. */
  async update(spaceParam: string, body: PolicyBody, caller: Caller): Promise<string> {
    const { ctx } = this
    await this.assertUpdatesEnabled()
    if (!POLICY_SPACES.includes(spaceParam as Space)) throw new ApiError(400, 'Invalid space value. Must be one of: draft, standard.')
    const space = spaceParam as Space
    const resource = body.resource
    const metadata = isObject(resource.metadata) ? resource.metadata : {}

    const missing: string[] = BOOLEAN_SETTINGS.filter((k) => typeof resource[k] !== 'boolean')
    if (space === 'draft') {
      for (const k of ['author', 'description']) if (isMissing(metadata[k])) missing.push(k)
      for (const k of ['documentation', 'references']) if (metadata[k] === undefined || metadata[k] === null) missing.push(k)
    }
    if (missing.length > 0) throw new ApiError(400, `Missing [${missing.join(', ')}] field.`)
    const enrichments = await this.checkEnrichments(resource.enrichments)

    const stored = space === 'draft' ? await requireDraftPolicy(ctx) : await ctx.repo.policy(space)
    if (!stored) throw new ApiError(404, `The ${space} space has no policy.`)
    const current = stored.document
    for (const list of space === 'draft' ? ['integrations', 'filters'] : ['filters']) {
      const given = list in resource ? strings(withoutNulls(resource[list])) : strings(current[list])
      if (!sameSet(given, strings(current[list]))) {
        throw new ApiError(400, `Content of '${list}' cannot be added or removed via update. Please use the specific resource endpoints.`)
      }
    }

    const next = space === 'draft' ? this.draftDocument(resource, current, enrichments) : standardDocument(resource, current, enrichments)
    const document = unchangedOr(next, current, ctx.now())
    if (document === current) return stored._id
    const writer = await writerFor(ctx, caller, { [INDEX_ACTIONS.index]: [CONTENT_ALIASES.policies] })
    try {
      await writer.replace(CONTENT_ALIASES.policies, stored, {
        ...(stored.source as Envelope),
        document,
        hash: { sha256: documentHash(document) },
      })
    } catch (e) {
      if (e instanceof VersionConflict) throw new ApiError(409, `The ${space} policy was modified concurrently. Please retry.`)
      throw e
    }
    await afterChange(ctx, [space])
    return stored._id
  }

  /** Reference 4.8: empties the draft space (policy included) and recreates its default policy. */
  async reset(spaceParam: string, caller: Caller): Promise<void> {
    const { ctx } = this
    if (!isSpace(spaceParam)) throw new ApiError(400, `Invalid space: [${spaceParam}].`)
    if (!RESETTABLE.includes(spaceParam)) throw new ApiError(400, `Cannot reset the '${spaceParam}' space.`)
    const space = spaceParam
    const writer = await writerFor(ctx, caller, {
      [INDEX_ACTIONS.delete]: RESOURCE_ALIASES,
      [INDEX_ACTIONS.index]: [CONTENT_ALIASES.policies],
    })

    const rules = await ctx.repo.list(CONTENT_ALIASES.rules, space, { source: ['document.id', 'space.name'] })
    const integrations = await ctx.repo.list(CONTENT_ALIASES.integrations, space, { source: ['document.id', 'space.name'] })
    // The caller's deletions go first: a platform that refuses them stops the reset before the
    // Ruleset Management copies are touched (the first alias refused leaves everything as it was).
    let refused: unknown
    try {
      for (const alias of RESOURCE_ALIASES) {
        const docs = await ctx.repo.list(alias, space, { source: ['space.name'] })
        await writer.removeMany(
          alias,
          docs.map((d) => d._id),
        )
      }
    } catch (e) {
      refused = e
    }
    // Whatever was deleted, the space keeps a policy and a hash that matches its content.
    await ensureSpacePolicy(ctx.repo, space, ctx.now())
    if (refused !== undefined) {
      await afterChange(ctx, [space])
      throw refused
    }
    // A failure in Ruleset Management must not keep the content from being reset.
    for (const r of rules) await ctx.ruleset.deleteRule(space, String(r.document.id)).catch((e) => this.warn('rule', r._id, e))
    for (const i of integrations) {
      await ctx.ruleset.deleteIntegration(space, String(i.document.id)).catch((e) => this.warn('integration', i._id, e))
    }
    await afterChange(ctx, [space])
  }

  private warn(kind: string, id: string, e: unknown) {
    this.ctx.log.warn('Ruleset Management copy could not be removed during a space reset', {
      kind,
      id,
      error: e instanceof Error ? e.message : String(e),
    })
  }

  private draftDocument(resource: Doc, current: Doc, enrichments: string[]): Doc {
    const metadata = isObject(resource.metadata) ? resource.metadata : {}
    const storedMeta = isObject(current.metadata) ? current.metadata : {}
    const rootDecoder = resource.root_decoder === '' || resource.root_decoder === undefined ? null : resource.root_decoder
    return {
      ...resource,
      id: current.id,
      metadata: {
        ...metadata,
        references: metadata.references ?? [],
        compatibility: storedMeta.compatibility ?? [],
        date: storedMeta.date,
        modified: storedMeta.modified,
      },
      root_decoder: rootDecoder,
      integrations: strings(withoutNulls(resource.integrations ?? current.integrations)),
      filters: strings(withoutNulls(resource.filters ?? current.filters)),
      enrichments,
    }
  }

  /** Known enrichment types: the IoC types the summary document lists, plus `geo`; no duplicates. */
  private async checkEnrichments(value: unknown): Promise<string[]> {
    const given = withoutNulls(value)
    if (given.length === 0) return []
    const known = new Set(['geo', ...(await this.iocTypes())])
    const seen = new Set<string>()
    for (const type of given) {
      const name = String(type)
      if (seen.has(name)) throw new ApiError(400, `Duplicate enrichment type '${name}'.`)
      seen.add(name)
      if (!known.has(name))
        throw new ApiError(400, `Invalid enrichment type '${name}'. Allowed values are: [${[...known].sort().join(', ')}]`)
    }
    return [...seen]
  }

  private async iocTypes(): Promise<string[]> {
    const summary = await this.ctx.repo.getById(CONTENT_ALIASES.enrichments, IOC_TYPE_HASHES_ID)
    const hashes = summary?.source.type_hashes
    return isObject(hashes) ? Object.keys(hashes) : []
  }
}

/** Standard: only the settings subset comes from the request; everything else stays as CTI made it. */
function standardDocument(resource: Doc, current: Doc, enrichments: string[]): Doc {
  const next: Doc = { ...current }
  for (const k of BOOLEAN_SETTINGS) next[k] = resource[k]
  next.enrichments = enrichments
  if ('filters' in resource) next.filters = strings(withoutNulls(resource.filters))
  return next
}

/**
 * `metadata.modified` moves only when something else did, so re-sending the stored policy changes
 * no hash (the spec lists what alters the space hash; an identical write is not among them).
 */
function unchangedOr(next: Doc, current: Doc, now: number): Doc {
  if (JSON.stringify(next) === JSON.stringify(current)) return current
  if (!isObject(next.metadata) || !isObject(current.metadata) || !('modified' in current.metadata)) return next
  // Standard keeps its CTI metadata untouched (reference 4.5); draft stamps the change.
  if (next.metadata === current.metadata) return next
  return { ...next, metadata: { ...next.metadata, modified: isoSeconds(now) } }
}

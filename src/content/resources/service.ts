// Create, update and delete of integrations, decoders, rules, KVDBs and filters (reference 4.3
// and 4.4). Creation runs under the (type, space) lock so the limit check and the write are one
// step; updates and deletes rely on optimistic concurrency of the documents they change.
// The resource writes and the parent links they change run with the caller's rights (`writerFor`);
// the lock, the space hash and the undo of a half-done change run as the service: they keep the
// content consistent, whoever the caller.
import { ApiError, shown } from '../../http/errors'
import { resourceLockWait } from '../../locks/wait'
import { INDEX_ACTIONS } from '../../security/actions'
import type { Caller } from '../../http/caller'
import { VersionConflict } from '../../store/errors'
import { afterChange, requireDraftPolicy, writerFor, type ContentContext } from '../context'
import { appendedHash } from '../appended-hash'
import { EngineError, engineFailure } from '../engine'
import { CONTENT_ALIASES } from '../indices'
import { INTEGRATION_LISTS, KINDS, LIST_KIND, type IntegrationList, type ResourceKind } from '../kinds'
import { envelope, isObject, type ContentRepository, type Doc, type Stored } from '../repository'
import type { Space } from '../spaces'
import { FILTER_SPACES, resourceBody, type ResourceBody } from './bodies'
import { forCreate, forUpdate, nestMetadata, renderYaml, requireFields } from './normalize'

/** Reference 4.4, "Create requires" / "Update requires" (paths inside `resource`). */
const CREATE_REQUIRED: Record<ResourceKind, string[]> = {
  integration: ['category', 'metadata.title', 'metadata.author'],
  decoder: [],
  kvdb: ['content', 'metadata.title', 'metadata.author'],
  rule: ['metadata.title'],
  filter: ['name', 'metadata.title', 'metadata.author'],
}
const UPDATE_REQUIRED: Record<ResourceKind, string[]> = {
  integration: ['category', 'enabled', 'metadata.title', 'metadata.author'],
  decoder: [],
  kvdb: ['enabled', 'content', 'metadata.title', 'metadata.author'],
  rule: ['enabled', 'metadata.title', 'metadata.author'],
  filter: ['name', 'enabled', 'metadata.title', 'metadata.author'],
}

/** Kinds that belong to an integration and are listed in one of its lists. */
const CHILD_LIST: Partial<Record<ResourceKind, IntegrationList>> = { decoder: 'decoders', kvdb: 'kvdbs', rule: 'rules' }
const article = (label: string) => (/^[AEIOU]/i.test(label) ? 'An' : 'A')
const isString = (x: unknown): x is string => typeof x === 'string'
/** Lists this service made of ids only (never changed after: a stored list is replaced, not edited). */
const idLists = new WeakSet<readonly unknown[]>()
/** The ids a list holds (the list itself when it holds only ids: an integration's 10,000 rules are not copied, nor checked again, per link). */
const ids = (v: unknown): readonly string[] => (!Array.isArray(v) ? [] : idLists.has(v) || v.every(isString) ? v : v.filter(isString))

export class ResourceService {
  constructor(private readonly ctx: ContentContext) {}

  /** `checked` is the route's body, checked against `resourceBody(kind, 'create')`. */
  async create(kind: ResourceKind, checked: ResourceBody, caller: Caller): Promise<string> {
    const { ctx } = this
    const info = KINDS[kind]
    await requireDraftPolicy(ctx)
    const resource = nestMetadata(checked.resource)
    const space: Space = checked.space ?? 'draft'
    const listName = CHILD_LIST[kind]
    const parentId = listName ? checked.integration : undefined
    if (kind === 'filter') {
      if ('id' in resource) throw new ApiError(400, 'ID should not be provided in the payload.')
    }
    requireFields(resource, CREATE_REQUIRED[kind])
    const settings = await ctx.settings.snapshot()
    const parentAlias = listName ? CONTENT_ALIASES.integrations : CONTENT_ALIASES.policies
    const writer = await writerFor(ctx, caller, { [INDEX_ACTIONS.index]: [info.alias, parentAlias] })

    const wait = resourceLockWait(settings)
    const id = crypto.randomUUID()
    const document = forCreate(resource, id, ctx.now())
    if (kind === 'integration') for (const list of INTEGRATION_LISTS) document[list] = []
    if (parentId !== undefined && kind === 'rule') checkProduct(resource, await this.draftIntegration(parentId))
    // The spec never renews the creation lock: the slow Engine call runs before it, bounded below its stale age.
    await this.validateWithEngine(kind, document, wait.staleMillis / 2)

    return ctx.creationLock(ctx, wait, { type: kind, space }, async (assertMine) => {
      const parent = parentId === undefined ? undefined : await this.draftIntegration(parentId)
      if (kind === 'rule') checkProduct(resource, parent!)
      if (kind === 'integration' || kind === 'rule') await this.uniqueTitle(kind, resource)
      if (!listName && !(await ctx.repo.policy(space))) throw new ApiError(400, `The ${space} space has no policy.`)
      await this.checkLimit(kind, space, settings.num(info.limitSetting))

      if (kind === 'rule') await ctx.ruleset.upsertRule(space, document, parentId!, false)
      if (kind === 'integration') await ctx.ruleset.upsertIntegration(space, document, false)

      const forgetRuleset = async () => {
        if (kind === 'rule') await ctx.ruleset.deleteRule(space, id).catch(() => {})
        if (kind === 'integration') await ctx.ruleset.deleteIntegration(space, id).catch(() => {})
      }
      try {
        // A holder that outlived the stale age may have been robbed: no write beside the thief.
        await assertMine()
        await writer.create(info.alias, id, this.envelopeOf(kind, document, space))
      } catch (e) {
        // Refused (the platform's word on the caller's rights) or failed: nothing of it may remain.
        await forgetRuleset()
        throw e
      }
      try {
        if (listName) {
          // The parent read under the lock is the first attempt's version (a long list is not read
          // twice per creation); a concurrent change of it makes the write conflict and re-read.
          let known = parent
          const read = async () => known ?? ctx.repo.getById(CONTENT_ALIASES.integrations, parentId!)
          await this.link(writer, CONTENT_ALIASES.integrations, () => read().finally(() => (known = undefined)), listName, id, 'add')
        } else
          await this.link(
            writer,
            CONTENT_ALIASES.policies,
            () => ctx.repo.policy(space),
            kind === 'filter' ? 'filters' : 'integrations',
            id,
            'add',
          )
      } catch (e) {
        // Without its link the resource is unreachable: take it back out, here and in Ruleset Management.
        await ctx.repo.remove(info.alias, id).catch(() => {})
        await forgetRuleset()
        throw e
      }
      await afterChange(ctx, [space])
      return id
    })
  }

  /** `checked` is the route's body, checked against `resourceBody(kind, 'update')`. */
  async update(kind: ResourceKind, id: string, checked: ResourceBody, caller: Caller): Promise<string> {
    const { ctx } = this
    const info = KINDS[kind]
    await requireDraftPolicy(ctx)
    const stored = await this.existing(kind, id)
    if (kind !== 'filter' && stored.space !== 'draft') throw new ApiError(400, `${info.label} with ID '${id}' is not in draft space.`)
    const resource = nestMetadata(checked.resource)
    const space = checked.space ?? (stored.space as Space)
    if (kind === 'filter') {
      if (stored.space !== space) throw new ApiError(400, `${info.label} with ID '${id}' is not in ${space} space.`)
    }
    requireFields(resource, UPDATE_REQUIRED[kind])
    const document = forUpdate(resource, id, stored.document, ctx.now())
    if (kind === 'integration') {
      for (const list of INTEGRATION_LISTS) {
        if (!(list in resource)) document[list] = stored.document[list] ?? []
        else if (!sameSet(ids(resource[list]), ids(stored.document[list])) || !Array.isArray(resource[list])) {
          throw new ApiError(400, `Content of '${list}' cannot be added or removed via update. Please use the specific resource endpoints.`)
        }
      }
    }
    if (kind === 'integration' || kind === 'rule') await this.uniqueTitle(kind, resource, id)
    const parent = kind === 'rule' ? (await this.parentsOf('rule', id))[0] : undefined
    if (parent) checkProduct(resource, parent)
    if (document === stored.document) return id // nothing changed: no write, no hash change
    const writer = await writerFor(ctx, caller, { [INDEX_ACTIONS.index]: [info.alias] })
    await this.validateWithEngine(kind, document)
    const parentId = String(parent?.document.id ?? '')
    if (kind === 'rule') await ctx.ruleset.upsertRule(space, document, parentId, true)
    if (kind === 'integration') await ctx.ruleset.upsertIntegration(space, document, true)
    try {
      await writer.replace(info.alias, stored, this.envelopeOf(kind, document, space, stored.source))
    } catch (e) {
      // The stored version stays: so does its Ruleset Management copy.
      if (kind === 'rule') await ctx.ruleset.upsertRule(space, stored.document, parentId, true).catch(() => {})
      if (kind === 'integration') await ctx.ruleset.upsertIntegration(space, stored.document, true).catch(() => {})
      if (e instanceof VersionConflict) throw new ApiError(409, `${info.label} [${id}] was modified concurrently. Please retry.`)
      throw e
    }
    await afterChange(ctx, [space])
    return id
  }

  async remove(kind: ResourceKind, id: string, caller: Caller): Promise<string> {
    const { ctx } = this
    const info = KINDS[kind]
    const draft = await requireDraftPolicy(ctx)
    const stored = await this.existing(kind, id)
    const allowed: readonly string[] = kind === 'filter' ? FILTER_SPACES : ['draft']
    if (!allowed.includes(stored.space)) throw new ApiError(400, `${info.label} with ID '${id}' is not in draft space.`)
    const space = stored.space as Space
    if (kind === 'integration') {
      for (const list of INTEGRATION_LISTS) {
        if (ids(stored.document[list]).length > 0) throw new ApiError(400, `Cannot delete integration because it has ${list} attached.`)
      }
    }
    if (kind === 'decoder' && draft.document.root_decoder === id) {
      throw new ApiError(400, `Cannot remove decoder [${id}] as it is set as root decoder.`)
    }
    const listName = CHILD_LIST[kind]
    const parentAlias = listName ? CONTENT_ALIASES.integrations : CONTENT_ALIASES.policies
    const writer = await writerFor(ctx, caller, { [INDEX_ACTIONS.delete]: [info.alias], [INDEX_ACTIONS.index]: [parentAlias] })
    const listKey = listName ?? (kind === 'filter' ? 'filters' : 'integrations')
    const integrations = listName ? await this.parentsOf(kind, id) : []
    const parents: Array<() => Promise<Stored | undefined>> = listName
      ? integrations.map((p) => () => ctx.repo.getById(CONTENT_ALIASES.integrations, p._id))
      : [() => ctx.repo.policy(space)]

    if (kind === 'rule') await ctx.ruleset.deleteRule(space, id)
    if (kind === 'integration') await ctx.ruleset.deleteIntegration(space, id)
    const unlinked: Array<{ read: () => Promise<Stored | undefined>; at: number }> = []
    try {
      for (const read of parents) unlinked.push({ read, at: await this.link(writer, parentAlias, read, listKey, id, 'remove') })
      await writer.remove(info.alias, stored._id)
    } catch (e) {
      // Refused half-way (the platform decides each write): the resource stays whole, links and copy included.
      for (const { read, at } of unlinked.reverse()) {
        if (at >= 0) await this.link(ctx.repo, parentAlias, read, listKey, id, 'add', at).catch(() => {})
      }
      if (kind === 'rule')
        await ctx.ruleset.upsertRule(space, stored.document, String(integrations[0]?.document.id ?? ''), false).catch(() => {})
      if (kind === 'integration') await ctx.ruleset.upsertIntegration(space, stored.document, false).catch(() => {})
      throw e
    }
    await afterChange(ctx, [space])
    return id
  }

  /** The stored document behind a path id, or 404 (reference 4.1: unknown ids are 404). */
  private async existing(kind: ResourceKind, id: string): Promise<Stored> {
    const stored = await this.ctx.repo.getById(KINDS[kind].alias, id)
    if (!stored) throw new ApiError(404, 'Resource not found.')
    return stored
  }

  private async draftIntegration(id: string): Promise<Stored> {
    const parent = await this.ctx.repo.getByIdShared(CONTENT_ALIASES.integrations, id)
    if (!parent) throw new ApiError(400, `Integration [${id}] not found.`)
    if (parent.space !== 'draft') throw new ApiError(400, `Integration with ID '${id}' is not in draft space.`)
    return parent
  }

  /** Draft integrations that list `id` in the list of its kind. */
  private parentsOf(kind: ResourceKind, id: string): Promise<Stored[]> {
    const list = CHILD_LIST[kind]
    if (!list) return Promise.resolve([])
    return this.ctx.repo.list(CONTENT_ALIASES.integrations, 'draft', { filter: [{ term: { [`document.${list}`]: id } }] })
  }

  private async uniqueTitle(kind: ResourceKind, resource: Doc, self?: string): Promise<void> {
    const title = String((resource.metadata as Doc).title ?? '')
    const clash = (await this.ctx.repo.findByTitle(KINDS[kind].alias, 'draft', title)).some((d) => d._id !== self)
    if (clash) throw new ApiError(400, `${article(kind)} ${kind} with the name '${title}' already exists in the draft space.`)
  }

  private async checkLimit(kind: ResourceKind, space: Space, limit: number): Promise<void> {
    const info = KINDS[kind]
    const count = limit === 0 ? 0 : await this.ctx.repo.count(info.alias, space)
    if (count !== undefined && count >= limit) {
      const where = kind === 'filter' ? ` in the ${space} space` : ''
      throw new ApiError(
        400,
        `Maximum number of ${info.plural} reached${where} (${limit}): no new ${kind} can be created. Raise [${info.limitSetting}] to allow more.`,
      )
    }
  }

  private async validateWithEngine(kind: ResourceKind, document: Doc, timeoutCapMillis?: number): Promise<void> {
    const type = KINDS[kind].engineType
    if (!type) return
    try {
      await this.ctx.engine.validateResource(type, document, timeoutCapMillis)
    } catch (e) {
      if (e instanceof EngineError) throw engineFailure(e, kind)
      throw e
    }
  }

  /**
   * Adds or removes `id` in a parent's list, retried on concurrent changes of the parent. Returns
   * the position it was removed from (-1 when it was not there), so an undo can put it back there.
   */
  private async link(
    writer: ContentRepository,
    alias: string,
    read: () => Promise<Stored | undefined>,
    list: string,
    id: string,
    op: 'add' | 'remove',
    at?: number,
  ): Promise<number> {
    const settings = await this.ctx.settings.snapshot()
    const attempts = settings.num('plugins.content_manager.integration.max_update_attempts')
    let position = -1
    let present: readonly string[] = []
    const done = await writer.modify(
      alias,
      read,
      (current) => {
        present = ids(current.document[list])
        position = present.indexOf(id)
        if (op === 'add' ? position >= 0 : position < 0) return undefined
        const next = op === 'add' ? present.toSpliced(at ?? present.length, 0, id) : present.filter((x) => x !== id)
        idLists.add(next)
        return { ...current.document, [list]: next }
      },
      attempts,
      // The usual change, an id appended: hashed from the state kept after the list's last id.
      (current) =>
        op === 'add' && at === undefined
          ? appendedHash(`${alias}/${current._id}`, current.document, current.hash, list, present, id)
          : undefined,
    )
    if (!done && op === 'add') throw new ApiError(400, `The parent of [${id}] no longer exists.`)
    return position
  }

  private envelopeOf(kind: ResourceKind, document: Doc, space: Space, previous?: Doc) {
    const extra: Doc = {}
    if (kind === 'filter') extra['@timestamp'] = new Date(this.ctx.now()).toISOString()
    if (previous?.offset !== undefined) extra.offset = previous.offset
    if (KINDS[kind].yaml) extra.yaml = renderYaml(document, kind)
    return envelope(document, space, extra)
  }
}

/** A rule's `logsource.product` must be its integration's title (reference 4.4). */
function checkProduct(resource: Doc, parent: Stored): void {
  const logsource = isObject(resource.logsource) ? resource.logsource : {}
  const product = logsource.product
  const title = isObject(parent.document.metadata) ? parent.document.metadata.title : undefined
  if (product !== title) {
    throw new ApiError(
      400,
      `Rule logsource.product '${shown(product ?? '')}' must match the title '${shown(title ?? '')}' of integration [${shown(parent.document.id)}].`,
    )
  }
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && new Set(a).size === new Set(b).size && a.every((x) => b.includes(x))

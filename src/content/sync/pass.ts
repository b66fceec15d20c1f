// One consumer pass (reference 2.3): resolve the catalog URL, detect a plan change, read the local
// and remote consumer, check the indices exist, then swap, initialise from a snapshot (remote, then
// last stable, then packaged) or apply the change feed, and finish with the consumer's post-sync.
import type { ContentKind } from '../../setup/indices'
import { CONTENT, contentIndexBody } from '../../setup/indices'
import { IndexNotFound } from '../../store/errors'
import { isCtiError } from '../cti/errors'
import type { ConsumerInfo } from '../cti/schemas'
import { consumerIdentity, loggable, normalizeConsumerUrl, sameResource } from '../cti/urls'
import { blueGreenSwap } from './blue-green'
import { applyChanges } from './changes'
import { aliasOf, type ConsumerDef } from './consumers'
import { loadArchive, type PassContext } from './context'
import { iocPostSync } from './ioc-post-sync'
import { rulesetPostSync, type StaleStandard } from './ruleset-post-sync'
import { placeholder, type ConsumerState } from './state'

const cm = 'plugins.content_manager.'

export interface ConsumerOutcome {
  kind: ConsumerDef['kind']
  /** Content changed in this pass. */
  updated: boolean
  /** The pass asks for its one immediate retry (unreachable feed, missing indices, pending phases). */
  retry: boolean
  status: ConsumerState['status']
  localOffset: number
  remoteOffset: number
  /** Where the content came from, when a snapshot was loaded. */
  loadedFrom?: 'remote' | 'stable' | 'packaged' | 'swap'
  reason?: string
}

/** Physical index behind each alias of the consumer; undefined when one is missing (Setup owns them). */
async function targetsOf(ctx: PassContext, def: ConsumerDef): Promise<Partial<Record<ContentKind, string>> | undefined> {
  const out: Partial<Record<ContentKind, string>> = {}
  for (const kind of def.indices) {
    try {
      out[kind] = await ctx.repo.concrete(aliasOf(kind))
    } catch {
      return undefined
    }
  }
  return out
}

/**
 * Empties what a snapshot load replaces: the standard space of the ruleset indices (user spaces
 * stay) and of Ruleset Management; the whole index of the single-index consumers.
 */
async function clearForLoad(
  ctx: PassContext,
  def: ConsumerDef,
  targets: Partial<Record<ContentKind, string>>,
): Promise<Partial<Record<ContentKind, string>>> {
  if (def.kind !== 'ruleset') {
    const kind = def.indices[0]
    const index = targets[kind]!
    const alias = aliasOf(kind)
    const definition = CONTENT.find((c) => c.alias === alias)?.aliasDefinition ?? { is_write_index: true }
    try {
      await ctx.store.deleteIndex({ index, expand_wildcards: 'all' })
    } catch (e) {
      if (!(e instanceof IndexNotFound)) throw e
    }
    await ctx.store.createIndex({ index, body: { ...contentIndexBody(kind), aliases: { [alias]: definition } } })
    return targets
  }
  for (const kind of def.indices) {
    const index = targets[kind]!
    for (;;) {
      const r = await ctx.store.search({
        index,
        expand_wildcards: 'all',
        body: { query: { term: { 'space.name': 'standard' } }, size: 5000, _source: false },
      })
      if (r.hits.hits.length === 0) break
      await ctx.store.bulk({ body: r.hits.hits.map((h) => ({ delete: { _index: index, _id: h._id } })), refresh: true })
    }
  }
  if (ctx.ruleset.deleteSpace) {
    const r = await ctx.ruleset.deleteSpace('standard')
    if (r.failures.length > 0)
      ctx.log.warn('standard content could not all be removed from Ruleset Management', { failures: r.failures.slice(0, 3) })
  }
  return targets
}

async function indexEmpty(ctx: PassContext, index: string): Promise<boolean> {
  const r = await ctx.store.count({ index, expand_wildcards: 'all', body: { query: { exists: { field: 'document' } } } })
  return r.count === 0
}

async function downloadRemote(ctx: PassContext, def: ConsumerDef, remote: ConsumerInfo): Promise<string> {
  const file = ctx.local.download(def)
  try {
    await ctx.cti.download(remote.last_snapshot_link!, file, ctx.signal)
    return file
  } catch (e) {
    ctx.local.discard(file)
    throw e
  }
}

/** Reference 2.3 step 7: remote snapshot first, then the last stable one, then the packaged one. */
async function initialise(
  ctx: PassContext,
  def: ConsumerDef,
  url: string | undefined,
  remote: ConsumerInfo | undefined,
  targets: Partial<Record<ContentKind, string>>,
): Promise<{ offset: number; from: ConsumerOutcome['loadedFrom'] } | undefined> {
  if (url && remote?.last_snapshot_link) {
    await clearForLoad(ctx, def, targets)
    let file: string | undefined
    try {
      file = await downloadRemote(ctx, def, remote)
      await loadArchive(ctx, def, file, targets)
      ctx.local.promote(def, file)
      ctx.local.deletePackaged(def)
      return { offset: remote.last_snapshot_offset ?? 0, from: 'remote' }
    } catch (e) {
      if (file) ctx.local.discard(file)
      if (ctx.signal.aborted) throw e
      ctx.log.warn('remote snapshot could not be loaded; trying local snapshots', { consumer: def.kind, error: (e as Error).message })
    }
    const fallback = ctx.local.stable(def) ? ('stable' as const) : ctx.local.packaged(def) ? ('packaged' as const) : undefined
    if (!fallback) {
      ctx.log.error('no local snapshot to fall back to', { consumer: def.kind })
      return undefined
    }
    return loadLocal(ctx, def, fallback, targets)
  }
  if (url && !remote) ctx.log.warn('configured CTI feed is unusable; loading a local snapshot', { consumer: def.kind })
  if (ctx.local.packaged(def)) return loadLocal(ctx, def, 'packaged', targets)
  if (ctx.local.stable(def)) return loadLocal(ctx, def, 'stable', targets)
  ctx.log.error('no snapshot available: nothing loaded', { consumer: def.kind })
  return undefined
}

async function loadLocal(
  ctx: PassContext,
  def: ConsumerDef,
  which: 'stable' | 'packaged',
  targets: Partial<Record<ContentKind, string>>,
): Promise<{ offset: number; from: ConsumerOutcome['loadedFrom'] } | undefined> {
  const file = which === 'stable' ? ctx.local.stable(def)! : ctx.local.packaged(def)!
  // A partial remote load may have written some documents: start again from empty.
  await clearForLoad(ctx, def, targets)
  try {
    const r = await loadArchive(ctx, def, file, targets)
    if (which === 'packaged') ctx.local.promote(def, file)
    return { offset: r.maxOffset, from: which }
  } catch (e) {
    if (ctx.signal.aborted) throw e
    ctx.log.error('local snapshot could not be loaded', { consumer: def.kind, snapshot: which, error: (e as Error).message })
    return undefined
  }
}

export async function runConsumer(ctx: PassContext, def: ConsumerDef): Promise<ConsumerOutcome> {
  const api = ctx.settings.str(`${cm}cti.api`)
  const norm = (u: string | undefined) => normalizeConsumerUrl(u, api)

  // 1-2: catalog URL and plan change.
  const registered = await ctx.credentials.isRegistered()
  let planResource: string | undefined
  if (registered) {
    const answer = await ctx.cti.environmentPlan(ctx.signal)
    if ('rejected' in answer) {
      ctx.log.warn('CTI console rejected the access token; credentials removed', {})
      await ctx.credentials.remove()
    } else if ('plan' in answer) {
      planResource = norm(answer.plan.features?.find((f) => f.type === def.type)?.resource)
    }
  }
  const existing = await ctx.states.read(def)
  const manifest = ctx.local.manifest(def)
  const manifestResource = norm(manifest?.resource)
  const settingUrl = norm(ctx.settings.str(def.setting))
  if (ctx.settings.str(def.setting).trim() && !settingUrl)
    ctx.log.warn('consumer URL setting is not usable (must be HTTPS on the CTI API host)', { setting: def.setting })
  const storedResource = norm(existing?.resource)
  let url = settingUrl ?? planResource ?? storedResource ?? manifestResource
  let swapTo: string | undefined
  if (!settingUrl && existing?.resource) {
    if (planResource && !sameResource(planResource, existing.resource)) swapTo = planResource
    else if (
      !planResource &&
      !(await ctx.credentials.isRegistered()) &&
      manifestResource &&
      !sameResource(manifestResource, existing.resource)
    )
      swapTo = manifestResource
  }
  if (swapTo && existing && existing.local_offset === 0) {
    // Nothing loaded yet from the old feed: no swap, just start on the new one.
    url = swapTo
    swapTo = undefined
  }

  // 3: local and remote consumer.
  let state: ConsumerState = existing
    ? await ctx.states.write({ ...existing, status: 'running', ...(url && url !== existing.resource && !swapTo ? { resource: url } : {}) })
    : await ctx.states.write(placeholder(def, url ?? ''))
  const remoteUrl = swapTo ?? url
  let remote: ConsumerInfo | undefined
  if (remoteUrl) {
    try {
      remote = await ctx.cti.consumer(remoteUrl, ctx.signal)
    } catch (e) {
      if (isCtiError(e, 'rate_limited') || isCtiError(e, 'aborted')) throw e
      ctx.log.warn('CTI consumer unreachable', { consumer: def.kind, url: loggable(remoteUrl), error: (e as Error).message })
    }
  }
  const feedUnreachable = !!remoteUrl && !remote
  const outcome = (o: Partial<ConsumerOutcome>): ConsumerOutcome => ({
    kind: def.kind,
    updated: false,
    retry: false,
    status: state.status,
    localOffset: state.local_offset,
    remoteOffset: state.remote_offset,
    ...o,
  })

  // 4: the indices must exist (Setup provisions them; the sync never creates one by writing to an alias).
  let targets = await targetsOf(ctx, def)
  if (!targets) {
    ctx.log.error('content indices of the consumer are missing; will retry', { consumer: def.kind })
    return outcome({ retry: true, reason: 'indices_missing' })
  }

  let updated = false
  let loadedFrom: ConsumerOutcome['loadedFrom']
  let stale: StaleStandard | undefined

  if (swapTo && remote) {
    // 5: plan change.
    const swapped = await blueGreenSwap(ctx, def, state, swapTo, remote, () => downloadRemote(ctx, def, remote!))
    state = swapped.state
    stale = swapped.stale
    targets = swapped.targets
    updated = true
    loadedFrom = 'swap'
    if (state.local_offset < remote.last_offset) {
      const r = await applyChanges(changesDeps(ctx, targets), def, swapTo, state, remote.last_offset)
      if (r.applied > 0) updated = true
    }
  } else {
    // 6-8: initialise or catch up.
    let current = state.local_offset
    if (remote && current > remote.last_offset) {
      ctx.log.warn('local offset is ahead of the CTI feed; re-initialising', {
        consumer: def.kind,
        local: current,
        remote: remote.last_offset,
      })
      current = 0
    }
    if (def.singleIndex && current > 0 && (await indexEmpty(ctx, targets[def.indices[0]]!))) {
      ctx.log.warn('consumer index is empty although the offset is not; re-initialising', { consumer: def.kind, local: current })
      current = 0
    }
    let loaded = false
    if (current === 0) {
      const { context, name } = consumerIdentity(url)
      state = await ctx.states.write({
        ...state,
        name: remote?.name ?? manifest?.name ?? (name || state.name),
        context: remote?.context ?? manifest?.context ?? (context || state.context),
        resource: url ?? manifestResource ?? state.resource,
        is_public: remote ? (remote.is_public ?? false) : (manifest?.is_public ?? state.is_public),
        status: 'running',
        local_offset: 0,
        remote_offset: remote?.last_offset ?? manifest?.remote_offset ?? 0,
      })
      const init = await initialise(ctx, def, url, remote, targets)
      if (init) {
        loaded = true
        updated = true
        loadedFrom = init.from
        current = init.offset
        state = await ctx.states.write({ ...state, local_offset: current })
      }
    }
    if (remote && current < remote.last_offset) {
      if (current === 0 && !loaded) {
        ctx.log.warn('nothing loaded and no snapshot: the full feed is not fetched change by change', { consumer: def.kind })
      } else {
        const r = await applyChanges(changesDeps(ctx, targets), def, url!, state, remote.last_offset)
        if (r.applied > 0) updated = true
      }
    }
  }
  if (remote) state = { ...state, remote_offset: remote.last_offset }

  // 9: post-sync, then ready.
  let pending: string[] = []
  if (def.kind === 'ruleset') {
    const r = await rulesetPostSync(
      {
        store: ctx.store,
        repo: ctx.repo,
        ruleset: ctx.ruleset,
        log: ctx.log,
        now: ctx.now,
        settings: ctx.settings,
        recomputeSpaces: ctx.recomputeSpaces,
      },
      { updated, pending: state.pending_sync_phases, stale },
    )
    pending = r.pending
  } else if (updated && def.kind === 'iocs') {
    await iocPostSync({
      store: ctx.store,
      engine: ctx.engine,
      log: ctx.log,
      index: targets.enrichments!,
      exportPath: ctx.iocExportPath,
      pageSize: ctx.settings.num(`${cm}search_page_size`),
      keepAliveSeconds: ctx.settings.num(`${cm}pit_keepalive`),
    })
  } else if (updated) {
    await ctx.store.refresh({ index: Object.values(targets).filter((x): x is string => !!x), expand_wildcards: 'all' })
  }
  state = await ctx.states.write({ ...state, status: 'ready', pending_sync_phases: pending })
  return outcome({
    updated,
    retry: feedUnreachable || pending.length > 0,
    status: 'ready',
    loadedFrom,
    reason: feedUnreachable ? 'feed_unreachable' : pending.length ? 'pending_phases' : undefined,
  })
}

function changesDeps(ctx: PassContext, targets: Partial<Record<ContentKind, string>>) {
  return {
    store: ctx.store,
    cti: ctx.cti,
    states: ctx.states,
    log: ctx.log,
    limits: ctx.limits,
    subBatch: ctx.settings.num(`${cm}update_sub_batch_size`),
    flushEvery: ctx.settings.num(`${cm}offset_flush_interval`),
    targets,
    signal: ctx.signal,
    now: ctx.now,
  }
}

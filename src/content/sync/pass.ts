// One consumer pass (reference 2.3): resolve the catalog URL, detect a plan change, read the local
// and remote consumer, check the indices exist, then swap, initialise from a snapshot (remote, then
// last stable, then packaged) or apply the change feed, and finish with the consumer's post-sync.
import type { ContentKind } from '../../setup/indices'
import { isCtiError } from '../cti/errors'
import type { ConsumerInfo } from '../cti/schemas'
import { consumerIdentity, loggable, normalizeConsumerUrl, sameResource } from '../cti/urls'
import { blueGreenSwap, stageAndSwap } from './blue-green'
import { applyChanges } from './changes'
import type { Doc } from '../repository'
import { aliasOf, type ConsumerDef } from './consumers'
import { loadArchive, type PassContext } from './context'
import { IOC_SUMMARY_ID, iocPostSync, iocStored, sameScan } from './ioc-post-sync'
import { rulesetPostSync, type StaleStandard } from './ruleset-post-sync'
import { placeholder, type ConsumerState, type PassProgress, type StagingLoad } from './state'

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
 * True when the consumer's index holds no content document. Counts documents by id, never by a
 * content field: the CVE index maps `document` with `enabled: false`, so an `exists` query on it
 * always counted 0 and sent a loaded consumer back to its snapshot on every pass.
 */
async function indexEmpty(ctx: PassContext, index: string): Promise<boolean> {
  const r = await ctx.store.count({
    index,
    expand_wildcards: 'all',
    body: { query: { bool: { must_not: [{ ids: { values: [IOC_SUMMARY_ID] } }] } } },
  })
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

export class SnapshotUnavailable extends Error {
  override name = 'SnapshotUnavailable'
}

type Source = 'remote' | 'stable' | 'packaged'
interface Initialised {
  offset: number
  from: Source
  stale?: StaleStandard
  targets: Partial<Record<ContentKind, string>>
}

/**
 * Loads one archive into staging and swaps it in. The downloaded archive is removed on failure
 * and kept as the stable one on success; a packaged one becomes the stable one once loaded.
 */
/** Where a staged load's progress is kept: the consumer document (see `StagingLoad`). */
interface StagingRecord {
  /** The load an interrupted attempt left, if any. */
  previous?: StagingLoad
  save(load: StagingLoad | undefined): Promise<void>
}

/**
 * Loads one archive into staging and swaps it in. The downloaded archive is kept under a durable
 * name while it loads (so an interrupted load can go on with it), removed on failure and kept as
 * the stable one on success; a packaged one becomes the stable one once loaded.
 */
async function loadSource(
  ctx: PassContext,
  def: ConsumerDef,
  source: Source,
  remote: ConsumerInfo | undefined,
  record: StagingRecord,
): Promise<Initialised> {
  const snapshotOffset = source === 'remote' ? (remote!.last_snapshot_offset ?? 0) : 0
  const prev = record.previous
  const resumable =
    prev && prev.source === source && prev.snapshot_offset === snapshotOffset && (source !== 'remote' || ctx.local.loading(def))
      ? prev
      : undefined
  let file: string | undefined
  try {
    const swapped = await stageAndSwap(
      ctx,
      def,
      async (staging, resumed) => {
        const from = resumed ? resumable : undefined
        if (source === 'remote') {
          file = from ? ctx.local.loading(def)! : ctx.local.keepLoading(def, await downloadRemote(ctx, def, remote!))
        } else file = source === 'stable' ? ctx.local.stable(def)! : ctx.local.packaged(def)!
        const indices = Object.fromEntries(Object.entries(staging).filter((e): e is [string, string] => !!e[1]))
        const save = (position: number, maxOffset: number) =>
          record.save({ source, snapshot_offset: snapshotOffset, position, max_offset: maxOffset, indices })
        if (from) ctx.log.info('going on with an interrupted snapshot load', { consumer: def.kind, position: from.position })
        return loadArchive(ctx, def, file, staging, { skip: from?.position ?? 0, maxOffset: from?.max_offset ?? 0, save })
      },
      { resume: resumable?.indices },
    )
    await record.save(undefined)
    if (source !== 'stable') ctx.local.promote(def, file!)
    if (source === 'remote') ctx.local.deletePackaged(def)
    const offset = source === 'remote' ? snapshotOffset : swapped.loaded.maxOffset
    return { offset, from: source, stale: swapped.stale, targets: swapped.targets }
  } catch (e) {
    if (!ctx.signal.aborted) {
      if (source === 'remote' && file) ctx.local.discard(file)
      await record.save(undefined).catch(() => undefined)
    }
    throw e
  }
}

/**
 * Reference 2.3 step 7: remote snapshot first, then the last stable one, then the packaged one.
 * Every load goes into staging and is swapped in only when complete, so readers keep the old
 * content meanwhile. Undefined when no snapshot exists at all; `SnapshotUnavailable` when every
 * one that exists failed (the consumer then ends `failed`, never `ready` over partial content).
 */
async function initialise(
  ctx: PassContext,
  def: ConsumerDef,
  url: string | undefined,
  remote: ConsumerInfo | undefined,
  record: StagingRecord,
): Promise<Initialised | undefined> {
  const sources: Source[] = []
  if (url && remote?.last_snapshot_link) sources.push('remote', 'stable', 'packaged')
  else {
    if (url && !remote) ctx.log.warn('configured CTI feed is unusable; loading a local snapshot', { consumer: def.kind })
    sources.push('packaged', 'stable')
  }
  const errors: string[] = []
  for (const source of sources) {
    if (source === 'stable' && !ctx.local.stable(def)) continue
    if (source === 'packaged' && !ctx.local.packaged(def)) continue
    try {
      return await loadSource(ctx, def, source, remote, record)
    } catch (e) {
      if (ctx.signal.aborted) throw e
      errors.push(`${source}: ${(e as Error).message}`)
      ctx.log.warn('snapshot could not be loaded; trying the next source', {
        consumer: def.kind,
        snapshot: source,
        error: (e as Error).message,
      })
    }
  }
  if (errors.length > 0) throw new SnapshotUnavailable(`no snapshot could be loaded (${errors.join('; ')})`)
  ctx.log.error('no snapshot available: nothing loaded', { consumer: def.kind })
  return undefined
}

/** Whether a packaged snapshot's manifest names the consumer's feed (the sample names none). */
function fromFeed(manifestResource: string | undefined, url: string | undefined): boolean {
  return !!manifestResource && !!url && sameResource(manifestResource, url)
}

export async function runConsumer(ctx: PassContext, def: ConsumerDef): Promise<ConsumerOutcome> {
  const api = ctx.settings.str('plugins.content_manager.cti.api')
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
  /** The consumer holds content of another source and the feed's snapshot could not be loaded yet. */
  let foreignHeld = false
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
      const r = await applyChanges(changesDeps(ctx, def, targets), def, swapTo, state, remote.last_offset)
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
    if (current > 0 && url && state.foreign_content && remote?.last_snapshot_link) {
      ctx.log.info("content is not this feed's; loading the feed's snapshot", { consumer: def.kind, url: loggable(url) })
      current = 0
    } else if (current > 0 && url && !(existing?.resource && sameResource(existing.resource, url))) {
      // Loaded from another source (the packaged sample, an import without an identity, another
      // feed set by hand): its offsets mean nothing on this feed, so load this feed's snapshot.
      ctx.log.warn('content came from another source than this feed; re-initialising', { consumer: def.kind, url: loggable(url) })
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
      const previous = state.staging
      const init = await initialise(ctx, def, url, remote, {
        previous,
        save: async (load) => {
          const { staging: _old, ...rest } = state
          state = await ctx.states.write(load ? { ...rest, staging: load } : rest)
        },
      })
      if (init) {
        loaded = true
        updated = true
        loadedFrom = init.from
        current = init.offset
        targets = init.targets
        stale = init.stale
        const { foreign_content: _before, ...rest } = state
        const foreign = init.from === 'packaged' ? !fromFeed(manifestResource, url) : init.from === 'stable' && _before === true
        state = await ctx.states.write({
          ...rest,
          local_offset: current,
          post_sync_pending: true,
          ...(foreign ? { foreign_content: true } : {}),
        })
      }
    }
    if (remote && current < remote.last_offset) {
      if (state.foreign_content) {
        // Not this feed's content: continuing it with the feed's changes would mix two sets.
        ctx.log.warn('content is not from this feed; its snapshot is loaded once it can be downloaded', { consumer: def.kind })
        foreignHeld = true
      } else if (current === 0 && !loaded) {
        ctx.log.warn('nothing loaded and no snapshot: the full feed is not fetched change by change', { consumer: def.kind })
      } else {
        // Recorded before the first change is written: a crash from here on redoes the post-sync.
        if (!state.post_sync_pending) state = await ctx.states.write({ ...state, post_sync_pending: true })
        const r = await applyChanges(changesDeps(ctx, def, targets), def, url!, state, remote.last_offset)
        if (r.applied > 0) updated = true
      }
    }
  }
  if (remote) state = { ...state, remote_offset: remote.last_offset }

  // 9: post-sync, then ready. Content written by an earlier pass whose post-sync never finished
  // (killed, failed) counts as updated here, so that work is redone before `ready`.
  let postSync = updated || state.post_sync_pending === true
  if (postSync && !updated) ctx.log.info('post-sync of an earlier pass did not finish; running it again', { consumer: def.kind })
  if (!postSync && def.kind === 'iocs' && !sameScan(state.post_sync_over, await iocStored(ctx.store, targets.enrichments!))) {
    // No record at all: written by a version before the record (once, after an upgrade).
    if (state.post_sync_over)
      ctx.log.warn('the IoC summary does not describe the stored IoCs; running the post-sync again', { consumer: def.kind })
    else ctx.log.info('no record of what the last IoC post-sync read; running it again', { consumer: def.kind })
    postSync = true
  }
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
      { updated: postSync, pending: state.pending_sync_phases, stale },
    )
    pending = r.pending
  } else if (postSync && def.kind === 'iocs') {
    const { scanned } = await iocPostSync({
      store: ctx.store,
      engine: ctx.engine,
      log: ctx.log,
      index: targets.enrichments!,
      exportPath: ctx.iocExportPath,
      pageSize: ctx.settings.num('plugins.content_manager.search_page_size'),
    })
    state = { ...state, post_sync_over: scanned }
    if (loadedFrom) ctx.iocs?.replaced()
  } else if (postSync) {
    await ctx.store.refresh({ index: Object.values(targets).filter((x): x is string => !!x), expand_wildcards: 'all' })
  }
  const { post_sync_pending: _done, ...finished } = state
  ctx.states.endProgress(def)
  state = await ctx.states.write({ ...finished, status: 'ready', pending_sync_phases: pending })
  return outcome({
    updated,
    retry: feedUnreachable || foreignHeld || pending.length > 0,
    status: 'ready',
    loadedFrom,
    reason: feedUnreachable ? 'feed_unreachable' : foreignHeld ? 'feed_snapshot_pending' : pending.length ? 'pending_phases' : undefined,
  })
}

function changesDeps(ctx: PassContext, def: ConsumerDef, targets: Partial<Record<ContentKind, string>>) {
  return {
    store: ctx.store,
    cti: ctx.cti,
    states: ctx.states,
    log: ctx.log,
    limits: ctx.limits,
    subBatch: ctx.settings.num('plugins.content_manager.update_sub_batch_size'),
    flushEvery: ctx.settings.num('plugins.content_manager.offset_flush_interval'),
    targets,
    signal: ctx.signal,
    sleep: ctx.sleep,
    now: ctx.now,
    report: (p: PassProgress) => ctx.states.reportProgress(def, p),
    onWritten: def.kind === 'iocs' && ctx.iocs ? (w: ReadonlyMap<string, Doc | null>) => ctx.iocs!.applied(w) : undefined,
  }
}

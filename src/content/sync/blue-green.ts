// Plan change (spec background 6, reference 2.10): new content is loaded into hidden staging
// indices (the other slot, `-a` <-> `-b`), user spaces are copied over, and every alias of the
// consumer moves in one atomic alias request. Until that request users see the old content; if
// anything fails before it, the staging indices are dropped and the next pass tries again.
import { CONTENT, contentIndexBody, type ContentKind } from '../../setup/indices'
import { IndexNotFound } from '../../store/errors'
import type { AliasAction, BulkLine } from '../../store/port'
import type { ConsumerInfo } from '../cti/schemas'
import { consumerIdentity } from '../cti/urls'
import { isObject } from '../repository'
import { BulkWriter } from './bulk-writer'
import type { ConsumerDef } from './consumers'
import { aliasOf } from './consumers'
import { loadArchive, type PassContext } from './context'
import type { StaleStandard } from './ruleset-post-sync'
import type { ConsumerState } from './state'

export class SwapError extends Error {
  override name = 'SwapError'
}

const other = (index: string) => (index.endsWith('-a') ? `${index.slice(0, -2)}-b` : `${index.slice(0, -2)}-a`)

/** The live physical index behind each alias: exactly one, named `<alias>-a` or `<alias>-b`. */
export async function liveIndices(ctx: PassContext, def: ConsumerDef): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const kind of def.indices) {
    const alias = aliasOf(kind)
    const names = await ctx.store.resolve(alias, { expand_wildcards: 'all', ignore_unavailable: true, allow_no_indices: true })
    if (names.length !== 1 || (names[0] !== `${alias}-a` && names[0] !== `${alias}-b`)) {
      throw new SwapError(`alias [${alias}] must point at exactly one of ${alias}-a / ${alias}-b, found [${names.join(', ')}]`)
    }
    out[kind] = names[0]
  }
  return out
}

async function dropIndex(ctx: PassContext, index: string): Promise<void> {
  try {
    await ctx.store.deleteIndex({ index, expand_wildcards: 'all' })
  } catch (e) {
    if (!(e instanceof IndexNotFound)) throw e
  }
}

/** Copies every document that is not standard content (user spaces, the user-overrides registry). */
async function copyUserContent(ctx: PassContext, from: string, to: string): Promise<number> {
  const writer = new BulkWriter(ctx.store, ctx.limits, { signal: ctx.signal, sleep: ctx.sleep })
  let after: unknown[] | undefined
  const page = 1000
  for (;;) {
    const r = await ctx.store.search({
      index: from,
      expand_wildcards: 'all',
      body: {
        query: { bool: { must_not: [{ term: { 'space.name': 'standard' } }] } },
        sort: [{ _id: { order: 'asc' } }],
        size: page,
        ...(after ? { search_after: after } : {}),
      },
    })
    for (const h of r.hits.hits) await writer.add({ op: 'index', index: to, id: h._id, body: (h._source ?? {}) as BulkLine })
    if (r.hits.hits.length < page) break
    after = r.hits.hits[r.hits.hits.length - 1].sort
  }
  const result = await writer.finish()
  if (result.dropped > 0) throw new SwapError(`${result.dropped} user documents could not be copied to [${to}]`)
  return result.written
}

async function standardIds(ctx: PassContext, index: string): Promise<string[]> {
  const out: string[] = []
  let after: unknown[] | undefined
  for (;;) {
    const r = await ctx.store.search({
      index,
      expand_wildcards: 'all',
      body: {
        query: { term: { 'space.name': 'standard' } },
        sort: [{ _id: { order: 'asc' } }],
        size: 5000,
        _source: ['document.id'],
        ...(after ? { search_after: after } : {}),
      },
    })
    for (const h of r.hits.hits) {
      const doc = h._source?.document
      out.push(isObject(doc) && typeof doc.id === 'string' ? doc.id : h._id)
    }
    if (r.hits.hits.length < 5000) return out
    after = r.hits.hits[r.hits.hits.length - 1].sort
  }
}

export interface StagedSwap<T> {
  /** What `load` returned. */
  loaded: T
  /** Standard integration and rule ids of the content that was replaced (ruleset only). */
  stale?: StaleStandard
  /** The physical indices the aliases point at now. */
  targets: Partial<Record<ContentKind, string>>
}

/**
 * Loads new content into hidden staging indices (the other slot of every alias of the consumer),
 * copies user content over (ruleset), and moves every alias in one atomic request; the old
 * indices are dropped afterwards. Until that request readers see the old content, so a failed or
 * interrupted load (a crash included: the next attempt drops the leftover staging index first)
 * never shows an empty or half-loaded set. Used by plan changes and by every re-initialisation.
 */
export async function stageAndSwap<T>(
  ctx: PassContext,
  def: ConsumerDef,
  load: (staging: Partial<Record<ContentKind, string>>, resumed: boolean) => Promise<T>,
  opts: { resume?: Record<string, string> } = {},
): Promise<StagedSwap<T>> {
  const live = await liveIndices(ctx, def)
  const shadow: Partial<Record<ContentKind, string>> = {}
  for (const kind of def.indices) shadow[kind] = other(live[kind])
  // An interrupted load into these very staging indices goes on where it was recorded.
  let resumed = !!opts.resume && def.indices.every((k) => opts.resume![k] === shadow[k])
  if (resumed) {
    for (const kind of def.indices) if (!(await ctx.store.existsIndex({ index: shadow[kind]!, expand_wildcards: 'all' }))) resumed = false
  }
  ctx.log.info(resumed ? 'resuming a load into staging indices' : 'loading content into staging indices', {
    consumer: def.kind,
    staging: Object.values(shadow),
  })
  let stale: StaleStandard | undefined
  let loaded: T
  try {
    if (!resumed) {
      for (const kind of def.indices) {
        const index = shadow[kind]!
        await dropIndex(ctx, index) // a leftover of an earlier failed or killed attempt
        await ctx.store.createIndex({ index, body: contentIndexBody(kind, true) })
      }
    }
    loaded = await load(shadow, resumed)
    if (def.kind === 'ruleset') {
      for (const kind of def.indices) await copyUserContent(ctx, live[kind], shadow[kind]!)
      stale = {
        integrations: await standardIds(ctx, live.integrations),
        rules: await standardIds(ctx, live.rules),
      }
    }
    for (const kind of def.indices) {
      if (kind !== 'vulnerabilities')
        await ctx.store.putSettings({ index: shadow[kind]!, body: { index: { hidden: false } }, expand_wildcards: 'all' })
    }
    const actions: AliasAction[] = []
    for (const kind of def.indices) {
      const alias = aliasOf(kind)
      const definition = CONTENT.find((c) => c.alias === alias)?.aliasDefinition ?? { is_write_index: true }
      actions.push({ remove: { index: live[kind], alias } })
      actions.push({ add: { index: shadow[kind]!, alias, ...definition, is_write_index: true } })
    }
    // The one moment users switch from old to new content: all aliases at once.
    await ctx.store.updateAliases({ body: { actions } })
  } catch (e) {
    // A shutdown keeps what was loaded for the next start to go on with; a failure starts over.
    if (!ctx.signal.aborted) for (const kind of def.indices) await dropIndex(ctx, shadow[kind]!).catch(() => {})
    throw e
  }
  for (const kind of def.indices) {
    try {
      await dropIndex(ctx, live[kind])
    } catch (e) {
      ctx.log.warn('old content index could not be deleted after the swap', { index: live[kind], error: e })
    }
  }
  ctx.log.info('content swapped in: aliases switched', { consumer: def.kind, indices: Object.values(shadow) })
  return { loaded, stale, targets: shadow }
}

export interface SwapResult {
  state: ConsumerState
  stale?: StaleStandard
  targets: Partial<Record<ContentKind, string>>
}

/**
 * Runs the swap to `url`, whose remote consumer is `remote`. The snapshot archive is downloaded by
 * the caller-supplied `download` so the resolver (signed URLs) applies.
 */
export async function blueGreenSwap(
  ctx: PassContext,
  def: ConsumerDef,
  state: ConsumerState,
  url: string,
  remote: ConsumerInfo,
  download: () => Promise<string>,
): Promise<SwapResult> {
  if (!remote.last_snapshot_link) throw new SwapError('the new plan has no snapshot to build from')
  ctx.log.info('plan change: building staging indices', { consumer: def.kind, url: url.replace(/[?#].*$/, '') })
  let file: string | undefined
  let swapped: StagedSwap<void>
  try {
    swapped = await stageAndSwap(ctx, def, async (staging) => {
      file = await download()
      await loadArchive(ctx, def, file, staging)
    })
  } catch (e) {
    if (file) ctx.local.discard(file)
    throw e
  }
  if (file) ctx.local.promote(def, file)
  const { context, name } = consumerIdentity(url)
  const { foreign_content: _replaced, ...kept } = state
  const next: ConsumerState = {
    ...kept,
    name: remote.name || name,
    context: remote.context || context,
    resource: url,
    is_public: remote.is_public ?? false,
    local_offset: remote.last_snapshot_offset ?? 0,
    remote_offset: remote.last_offset,
    status: 'running',
    post_sync_pending: true,
  }
  await ctx.states.write(next)
  return { state: next, stale: swapped.stale, targets: swapped.targets }
}

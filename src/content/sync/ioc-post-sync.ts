// IoC consumer post-sync (reference 2.11, 7.7), only after content changed: one paged scan of the
// IoC index (point in time, `search_page_size` pages) computes the per-type hashes stored in the
// summary document and writes the NDJSON export the Engine loads; then the Engine is told, unless
// it reports that it is still loading a previous export (fail-closed).
import { mkdirSync, renameSync, createWriteStream } from 'node:fs'
import { dirname } from 'node:path'
import type { Logger } from '../../http/log'
import type { Store } from '../../store/port'
import type { EngineClient } from '../engine'
import { sha256Hex } from '../hash'
import { isObject } from '../repository'

export const IOC_SUMMARY_ID = '__ioc_type_hashes__'

export interface IocPostSyncDeps {
  store: Store
  engine: EngineClient
  log: Logger
  /** Physical IoC index. */
  index: string
  exportPath: string
  pageSize: number
  keepAliveSeconds: number
}

export async function iocPostSync(deps: IocPostSyncDeps): Promise<{ types: Record<string, string>; combined: string; exported: number }> {
  await deps.store.refresh({ index: deps.index, expand_wildcards: 'all' })
  const tmp = `${deps.exportPath}.tmp-${process.pid}`
  // The export is for the Engine; when its directory is not writable the hashes are still kept
  // and the Engine is simply not told (logged), like any other failed notification.
  let out: ReturnType<typeof createWriteStream> | undefined
  try {
    mkdirSync(dirname(deps.exportPath), { recursive: true })
    out = createWriteStream(tmp)
    await new Promise<void>((res, rej) => out!.once('open', () => res()).once('error', rej))
  } catch (e) {
    out = undefined
    deps.log.error('IoC export cannot be written; the Engine will not be notified', { path: deps.exportPath, error: (e as Error).message })
  }
  const perType = new Map<string, Bun.CryptoHasher>()
  let exported = 0
  const pit = await deps.store.createPit({ index: deps.index, keep_alive: `${deps.keepAliveSeconds}s`, expand_wildcards: 'all' })
  try {
    let after: unknown[] | undefined
    for (;;) {
      const r = await deps.store.search({
        body: {
          pit: { id: pit.pit_id, keep_alive: `${deps.keepAliveSeconds}s` },
          query: { exists: { field: 'document.id' } },
          sort: [{ 'document.type': { order: 'asc', missing: '_first' } }, { 'document.id': { order: 'asc' } }],
          size: deps.pageSize,
          _source: ['document', 'hash.sha256'],
          ...(after ? { search_after: after } : {}),
        },
      })
      const hits = r.hits.hits
      for (const h of hits) {
        const src = h._source ?? {}
        const doc = isObject(src.document) ? src.document : {}
        const type = String(doc.type ?? '')
        const hash = isObject(src.hash) ? String(src.hash.sha256 ?? '') : ''
        let hasher = perType.get(type)
        if (!hasher) perType.set(type, (hasher = new Bun.CryptoHasher('sha256')))
        hasher.update(hash)
        if (out && !out.write(JSON.stringify(doc) + '\n')) await new Promise((res) => out!.once('drain', res))
        exported++
      }
      if (hits.length < deps.pageSize) break
      after = hits[hits.length - 1].sort
    }
  } finally {
    if (out) await new Promise((res) => out!.end(res))
    await deps.store.deletePit({ body: { pit_id: pit.pit_id } }).catch(() => {})
  }
  if (out) renameSync(tmp, deps.exportPath)
  const types: Record<string, string> = {}
  for (const [type, hasher] of perType) types[type] = hasher.digest('hex')
  const combined = sha256Hex(Object.values(types).join(''))
  await deps.store.index({
    index: deps.index,
    id: IOC_SUMMARY_ID,
    body: { type_hashes: Object.fromEntries(Object.entries(types).map(([k, v]) => [k, { hash: { sha256: v } }])) },
    refresh: true,
  })
  if (!out) return { types, combined, exported: 0 }
  try {
    const state = await deps.engine.iocState()
    if (state.updating) deps.log.warn('Engine is still loading IoCs; notification skipped until the next update', {})
    else await deps.engine.iocUpdate(deps.exportPath, combined)
  } catch (e) {
    deps.log.warn('Engine could not be notified of new IoCs', { error: (e as Error).message })
  }
  return { types, combined, exported }
}

// IoC consumer post-sync (reference 2.11, 7.7), after content changed: one paged scan of the IoC
// index computes the per-type hashes stored in the summary document and writes the NDJSON export
// the Engine loads; then the Engine is told, unless it reports that it is still loading a previous
// export (fail-closed).
//
// The scan pages by `_seq_no` (`search_after`, no totals), which every backend serves in time
// linear in the page; a sort on `document.type`/`_id` made the embedded store sort the whole index
// for every page (quadratic: 33 s for 250,000 IoCs against 2.5 s for 50,000) and blocked the node
// meanwhile. Because the scan order is no longer the content order, each type's hash is an
// order-independent digest of its (id, hash) pairs: the sum modulo 2^256 of SHA-256(id NUL hash),
// with the count, hashed once more. It changes whenever any IoC of the type changes, is the same on
// every node and for every load order, and needs constant memory. No PIT: the scan runs under the
// sync lease, the only writer of this index.
import { createWriteStream, mkdirSync, renameSync, rmSync } from 'node:fs'
import { dirname } from 'node:path'
import type { Logger } from '../../http/log'
import type { Store } from '../../store/port'
import type { EngineClient } from '../engine'
import { sha256Hex } from '../hash'
import { isObject } from '../repository'
import { yieldToLoop } from './yield'

export const IOC_SUMMARY_ID = '__ioc_type_hashes__'

export interface IocPostSyncDeps {
  store: Store
  engine: EngineClient
  log: Logger
  /** Physical IoC index. */
  index: string
  exportPath: string
  pageSize: number
}

/** Order-independent digest of a set of (id, hash) pairs (see the module comment). */
export class SetDigest {
  private readonly sum = new Uint32Array(8)
  private count = 0

  add(id: string, hash: string): void {
    const d = new Bun.CryptoHasher('sha256').update(`${id}\0${hash}`).digest()
    // Big-endian 256-bit addition, carry from the last word to the first.
    let carry = 0
    for (let i = 7; i >= 0; i--) {
      const word = ((d[i * 4] << 24) | (d[i * 4 + 1] << 16) | (d[i * 4 + 2] << 8) | d[i * 4 + 3]) >>> 0
      const s = this.sum[i] + word + carry
      this.sum[i] = s >>> 0
      carry = s > 0xffffffff ? 1 : 0
    }
    this.count++
  }

  digest(): string {
    const hex = Array.from(this.sum, (w) => w.toString(16).padStart(8, '0')).join('')
    return sha256Hex(`${this.count}:${hex}`)
  }
}

/**
 * What a post-sync ran over: the IoCs it read and the highest `_seq_no` among them. Any write to the
 * IoC index since (create, update or delete) changes one of the two, so a summary whose record
 * differs from the index's does not describe the stored IoCs.
 */
export interface IocScanned {
  documents: number
  max_seq_no: number
}

const NOT_SUMMARY = { bool: { must_not: [{ ids: { values: [IOC_SUMMARY_ID] } }] } }

/** The same two figures read from the index now (one search of one hit). */
export async function iocStored(store: Store, index: string): Promise<IocScanned> {
  await store.refresh({ index, expand_wildcards: 'all' })
  const r = await store.search({
    index,
    expand_wildcards: 'all',
    body: { query: NOT_SUMMARY, sort: [{ _seq_no: { order: 'desc' } }], size: 1, track_total_hits: true, _source: false },
  })
  const total = r.hits.total
  const documents = typeof total === 'number' ? total : (total?.value ?? 0)
  return { documents, max_seq_no: Number(r.hits.hits[0]?.sort?.[0] ?? -1) }
}

export const sameScan = (a: IocScanned | undefined, b: IocScanned): boolean =>
  a !== undefined && a.documents === b.documents && a.max_seq_no === b.max_seq_no

export async function iocPostSync(
  deps: IocPostSyncDeps,
): Promise<{ types: Record<string, string>; combined: string; exported: number; scanned: IocScanned }> {
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
  const perType = new Map<string, SetDigest>()
  let exported = 0
  const scanned: IocScanned = { documents: 0, max_seq_no: -1 }
  try {
    let after: unknown[] | undefined
    for (;;) {
      const r = await deps.store.search({
        index: deps.index,
        expand_wildcards: 'all',
        body: {
          query: NOT_SUMMARY,
          sort: [{ _seq_no: { order: 'asc' } }],
          track_total_hits: false,
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
        let digest = perType.get(type)
        if (!digest) perType.set(type, (digest = new SetDigest()))
        digest.add(h._id, hash)
        scanned.documents++
        scanned.max_seq_no = Math.max(scanned.max_seq_no, Number(h.sort?.[0] ?? -1))
        if (out && !out.write(JSON.stringify(doc) + '\n')) await new Promise((res) => out!.once('drain', res))
        exported++
      }
      if (hits.length < deps.pageSize) break
      after = hits[hits.length - 1].sort
      await yieldToLoop()
    }
  } catch (e) {
    if (out) await new Promise((res) => out!.end(res))
    rmSync(tmp, { force: true })
    throw e
  }
  if (out) {
    await new Promise((res) => out!.end(res))
    renameSync(tmp, deps.exportPath)
  }
  const types: Record<string, string> = {}
  for (const type of [...perType.keys()].sort()) types[type] = perType.get(type)!.digest()
  const combined = sha256Hex(Object.values(types).join(''))
  await deps.store.index({
    index: deps.index,
    id: IOC_SUMMARY_ID,
    body: { type_hashes: Object.fromEntries(Object.entries(types).map(([k, v]) => [k, { hash: { sha256: v } }])) },
    refresh: true,
  })
  if (!out) return { types, combined, exported: 0, scanned }
  try {
    const state = await deps.engine.iocState()
    if (state.updating) deps.log.warn('Engine is still loading IoCs; notification skipped until the next update', {})
    else await deps.engine.iocUpdate(deps.exportPath, combined)
  } catch (e) {
    deps.log.warn('Engine could not be notified of new IoCs', { error: (e as Error).message })
  }
  return { types, combined, exported, scanned }
}

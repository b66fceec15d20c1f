// Loading a snapshot archive (reference 1.5.2): a ZIP whose root-level `*.json` entries are NDJSON,
// one change-shaped record per line. The archive is streamed from disk and unzipped as it is read,
// and the reader waits for the bulk writer between chunks, so memory stays bounded whatever the
// archive's size. Bad lines are skipped and counted, one warning per entry.
import { statSync } from 'node:fs'
import { Unzip, UnzipInflate } from 'fflate'
import type { Logger } from '../../http/log'
import type { ContentKind } from '../../setup/indices'
import { isObject } from '../repository'
import type { BulkWriter } from './bulk-writer'
import type { ConsumerDef } from './consumers'
import { routeRecord } from './documents'
import { Progress } from './progress'
import { pacer, yieldToLoop } from './yield'
import type { PassProgress } from './state'

export interface SnapshotLoad {
  /** Highest `offset` seen on any line (the local offset after a local/stable load). */
  maxOffset: number
  /** Records handed to the bulk writer. */
  queued: number
  skipped: number
}

type Counts = Record<string, number>

/** Compressed bytes handed to the unzipper at a time (a few hundred KiB of lines once inflated). */
const INFLATE_SLICE = 32 * 1024

export class SnapshotFormatError extends Error {
  override name = 'SnapshotFormatError'
}

export async function loadSnapshotFile(
  file: string,
  consumer: ConsumerDef,
  target: (kind: ContentKind) => string,
  writer: BulkWriter,
  deps: {
    log: Logger
    signal?: AbortSignal
    now?: () => number
    report?: (p: PassProgress) => Promise<void>
    /** Records already loaded by an interrupted attempt (non-empty lines, in archive order): not sent again. */
    skip?: number
    /**
     * Every `every` bulks: called once every bulk before it is written, with the records done so
     * far and the highest offset seen; where a later attempt can go on from.
     */
    checkpoint?: { every: number; save(position: number, maxOffset: number): Promise<void> }
  },
): Promise<SnapshotLoad> {
  const size = statSync(file).size
  const progress = new Progress(deps.log, 'snapshot load', { consumer: consumer.kind }, deps.now, undefined, deps.report)
  const lines: Array<[entry: string, line: string]> = []
  const perEntry = new Map<string, Counts>()
  let zipError: Error | undefined
  let maxOffset = 0
  let queued = 0
  let skipped = 0
  let entries = 0
  let position = 0
  let checkpointedAt = 0
  const skip = deps.skip ?? 0

  const unzip = new Unzip((entry) => {
    entries++
    // Root-level JSON entries only; sub-directories and other files are ignored (never started).
    if (entry.name.includes('/') || !entry.name.toLowerCase().endsWith('.json')) return
    const decoder = new TextDecoder()
    let rest = ''
    entry.ondata = (err, chunk, final) => {
      if (err) {
        zipError = err
        return
      }
      rest += decoder.decode(chunk, { stream: !final })
      const parts = rest.split('\n')
      rest = parts.pop() ?? ''
      for (const p of parts) lines.push([entry.name, p])
      if (final && rest !== '') {
        lines.push([entry.name, rest])
        rest = ''
      }
    }
    entry.start()
  })
  unzip.register(UnzipInflate)

  const count = (entry: string, why: string) => {
    skipped++
    const c = perEntry.get(entry) ?? {}
    c[why] = (c[why] ?? 0) + 1
    perEntry.set(entry, c)
  }

  const pace = pacer()
  const drain = async (fraction: number) => {
    const batch = lines.splice(0, lines.length)
    for (const [entry, raw] of batch) {
      await pace()
      const line = raw.trim()
      if (line === '') continue
      if (++position <= skip) continue
      let record: unknown
      try {
        record = JSON.parse(line)
      } catch {
        count(entry, 'unparseable')
        continue
      }
      if (!isObject(record)) {
        count(entry, 'unparseable')
        continue
      }
      const offset = typeof record.offset === 'number' && Number.isFinite(record.offset) ? record.offset : undefined
      if (offset !== undefined) maxOffset = Math.max(maxOffset, offset)
      const id =
        typeof record.resource === 'string' && record.resource ? record.resource : typeof record.name === 'string' ? record.name : ''
      if (!id) {
        count(entry, 'no_id')
        continue
      }
      const routed = routeRecord(consumer, id, record.payload, offset ?? 0)
      if ('skip' in routed) {
        count(entry, routed.skip)
        continue
      }
      await writer.add({ op: 'index', index: target(routed.kind), id: routed.id, body: routed.body })
      queued++
      if (deps.checkpoint && writer.batches - checkpointedAt >= deps.checkpoint.every) {
        checkpointedAt = writer.batches
        // Wait for the bulks in flight (reference 2.4): then everything up to here is written.
        const r = await writer.finish()
        if (r.dropped === 0) await deps.checkpoint.save(position, maxOffset)
      }
      // Per document (a clock read): one archive chunk can hold thousands of them.
      progress.tick(1, fraction)
    }
  }

  let read = 0
  const reader = Bun.file(file).stream().getReader()
  for (;;) {
    if (deps.signal?.aborted) {
      await reader.cancel()
      throw deps.signal.reason ?? new Error('aborted')
    }
    const { done, value } = await reader.read()
    if (done) break
    // A read can hand over megabytes at once; inflating them in one go would hold the event loop
    // and the inflated lines in memory, so the unzipper gets them a slice at a time.
    for (let at = 0; at < value.byteLength; at += INFLATE_SLICE) {
      const slice = value.subarray(at, at + INFLATE_SLICE)
      read += slice.byteLength
      try {
        unzip.push(slice, false)
      } catch (e) {
        throw new SnapshotFormatError(`snapshot archive is not a readable ZIP: ${(e as Error).message}`)
      }
      if (zipError) throw new SnapshotFormatError(`snapshot entry could not be inflated: ${zipError.message}`)
      await drain(size > 0 ? read / size : 0)
      await yieldToLoop()
    }
  }
  try {
    unzip.push(new Uint8Array(0), true)
  } catch (e) {
    throw new SnapshotFormatError(`snapshot archive is truncated: ${(e as Error).message}`)
  }
  if (zipError) throw new SnapshotFormatError(`snapshot entry could not be inflated: ${zipError.message}`)
  await drain(1)
  if (entries === 0) throw new SnapshotFormatError('snapshot archive holds no ZIP entries')
  for (const [entry, counts] of perEntry) deps.log.warn('snapshot lines skipped', { consumer: consumer.kind, entry, ...counts })
  progress.finish()
  return { maxOffset, queued, skipped }
}

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

export interface SnapshotDeps {
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
}

export async function loadSnapshotFile(
  file: string,
  consumer: ConsumerDef,
  target: (kind: ContentKind) => string,
  writer: BulkWriter,
  deps: SnapshotDeps,
): Promise<SnapshotLoad> {
  return new SnapshotReader(file, consumer, target, writer, deps).load()
}

/** One archive being loaded: the unzipper's lines wait in `lines` until `drain` sends them to the writer. */
class SnapshotReader {
  private readonly size: number
  private readonly progress: Progress
  private readonly lines: Array<[entry: string, line: string]> = []
  private readonly perEntry = new Map<string, Counts>()
  private readonly unzip: Unzip
  private readonly pace = pacer()
  private zipError: Error | undefined
  private maxOffset = 0
  private queued = 0
  private skipped = 0
  private entries = 0
  private position = 0
  private checkpointedAt = 0

  constructor(
    private readonly file: string,
    private readonly consumer: ConsumerDef,
    private readonly target: (kind: ContentKind) => string,
    private readonly writer: BulkWriter,
    private readonly deps: SnapshotDeps,
  ) {
    this.size = statSync(file).size
    this.progress = new Progress(deps.log, 'snapshot load', { consumer: consumer.kind }, deps.now, undefined, deps.report)
    this.unzip = new Unzip((entry) => {
      this.entries++
      // Root-level JSON entries only; sub-directories and other files are ignored (never started).
      if (entry.name.includes('/') || !entry.name.toLowerCase().endsWith('.json')) return
      const decoder = new TextDecoder()
      let rest = ''
      entry.ondata = (err, chunk, final) => {
        if (err) {
          this.zipError = err
          return
        }
        rest += decoder.decode(chunk, { stream: !final })
        const parts = rest.split('\n')
        rest = parts.pop() ?? ''
        for (const p of parts) this.lines.push([entry.name, p])
        if (final && rest !== '') {
          this.lines.push([entry.name, rest])
          rest = ''
        }
      }
      entry.start()
    })
    this.unzip.register(UnzipInflate)
  }

  async load(): Promise<SnapshotLoad> {
    const { deps, unzip } = this
    let read = 0
    const reader = Bun.file(this.file).stream().getReader()
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
        this.checkInflated()
        await this.drain(this.size > 0 ? read / this.size : 0)
        await yieldToLoop()
      }
    }
    try {
      unzip.push(new Uint8Array(0), true)
    } catch (e) {
      throw new SnapshotFormatError(`snapshot archive is truncated: ${(e as Error).message}`)
    }
    this.checkInflated()
    await this.drain(1)
    if (this.entries === 0) throw new SnapshotFormatError('snapshot archive holds no ZIP entries')
    for (const [entry, counts] of this.perEntry) deps.log.warn('snapshot lines skipped', { consumer: this.consumer.kind, entry, ...counts })
    this.progress.finish()
    return { maxOffset: this.maxOffset, queued: this.queued, skipped: this.skipped }
  }

  private checkInflated(): void {
    if (this.zipError) throw new SnapshotFormatError(`snapshot entry could not be inflated: ${this.zipError.message}`)
  }

  private count(entry: string, why: string): void {
    this.skipped++
    const c = this.perEntry.get(entry) ?? {}
    c[why] = (c[why] ?? 0) + 1
    this.perEntry.set(entry, c)
  }

  private async drain(fraction: number): Promise<void> {
    const batch = this.lines.splice(0, this.lines.length)
    for (const [entry, raw] of batch) {
      await this.pace()
      const line = raw.trim()
      if (line === '') continue
      if (++this.position <= (this.deps.skip ?? 0)) continue
      if (await this.send(entry, line))
        // Per document (a clock read): one archive chunk can hold thousands of them.
        this.progress.tick(1, fraction)
    }
  }

  /** One line to the writer; false when it was skipped (and counted). */
  private async send(entry: string, line: string): Promise<boolean> {
    const { deps, writer } = this
    let record: unknown
    try {
      record = JSON.parse(line)
    } catch {
      this.count(entry, 'unparseable')
      return false
    }
    if (!isObject(record)) {
      this.count(entry, 'unparseable')
      return false
    }
    const offset = typeof record.offset === 'number' && Number.isFinite(record.offset) ? record.offset : undefined
    if (offset !== undefined) this.maxOffset = Math.max(this.maxOffset, offset)
    const id = typeof record.resource === 'string' && record.resource ? record.resource : typeof record.name === 'string' ? record.name : ''
    if (!id) {
      this.count(entry, 'no_id')
      return false
    }
    const routed = routeRecord(this.consumer, id, record.payload, offset ?? 0)
    if ('skip' in routed) {
      this.count(entry, routed.skip)
      return false
    }
    await writer.add({ op: 'index', index: this.target(routed.kind), id: routed.id, body: routed.body })
    this.queued++
    if (deps.checkpoint && writer.batches - this.checkpointedAt >= deps.checkpoint.every) {
      this.checkpointedAt = writer.batches
      // Wait for the bulks in flight (reference 2.4): then everything up to here is written.
      const r = await writer.finish()
      if (r.dropped === 0) await deps.checkpoint.save(this.position, this.maxOffset)
    }
    return true
  }
}

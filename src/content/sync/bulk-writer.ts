// Bulk writes of synced content (reference 1.5.2, 2.9, 7.3): documents are grouped into bulk
// requests of at most `max_items_per_bulk` documents and `max_bulk_bytes` estimated bytes, with at
// most `max_concurrent_bulks` in flight. Failed items are classified: shed (breaker trip, rejected
// execution, 429/503) and topology (index missing or recreated, shard unavailable, node left) are
// resubmitted with their own retry budget and doubling backoff; anything else, and exhausted
// retries, counts as dropped.
import type { SettingsSnapshot } from '../../config/cluster-settings'
import type { BulkLine, Store } from '../../store/port'
import { sleep as realSleep, type Sleep } from '../cti/sleep'
import { HeapGrowth, youngCollections } from '../../heap'

export interface RetryBudget {
  maxRetries: number
  initialMs: number
  maxMs: number
}

export interface BulkLimits {
  maxItems: number
  maxBytes: number
  maxConcurrent: number
  shed: RetryBudget
  topology: RetryBudget
}

export function bulkLimits(s: SettingsSnapshot): BulkLimits {
  const budget = (k: 'shed' | 'topology'): RetryBudget => ({
    maxRetries: s.num(`plugins.content_manager.bulk.retry.${k}.max_retries`),
    initialMs: s.num(`plugins.content_manager.bulk.retry.${k}.initial_backoff_millis`),
    maxMs: s.num(`plugins.content_manager.bulk.retry.${k}.max_backoff_millis`),
  })
  return {
    maxItems: s.num('plugins.content_manager.max_items_per_bulk'),
    maxBytes: s.num('plugins.content_manager.max_bulk_bytes'),
    maxConcurrent: s.num('plugins.content_manager.max_concurrent_bulks'),
    shed: budget('shed'),
    topology: budget('topology'),
  }
}

export type WriteOp = { op: 'index'; index: string; id: string; body: object } | { op: 'delete'; index: string; id: string }

type Failure = 'shed' | 'topology' | 'fatal'
const SHED_TYPES = new Set(['circuit_breaking_exception', 'es_rejected_execution_exception', 'rejected_execution_exception'])
const TOPOLOGY_TYPES = new Set([
  'index_not_found_exception',
  'unavailable_shards_exception',
  'no_shard_available_action_exception',
  'shard_not_found_exception',
  'node_not_connected_exception',
  'node_disconnected_exception',
  'node_closed_exception',
  'index_closed_exception',
])

export function classify(status: number | undefined, type: string | undefined): Failure {
  if (status === 429 || status === 503 || (type && SHED_TYPES.has(type))) return 'shed'
  if (type && TOPOLOGY_TYPES.has(type)) return 'topology'
  return 'fatal'
}

interface Pending {
  op: WriteOp
  bytes: number
  shedTries: number
  topologyTries: number
  lastError?: string
}

export interface BulkResult {
  written: number
  dropped: number
  /** Bulk requests sent, retries included. */
  requests: number
  /** Up to ten reasons of dropped items, for the log. */
  reasons: string[]
}

/**
 * A long load allocates far faster than JavaScriptCore collects on its own: the heap is collected
 * once it grew by 24 MiB since the last collection, so a snapshot of 500,000 documents peaks at what
 * a few bulks hold and not at the garbage of many. Counted in the heap, not in the bulks' bytes:
 * small documents (a CVE's few hundred bytes) leave several times their size as parsed objects and
 * envelopes, and 8 bulks' worth of bytes (40 MiB) was never reached by a 100k-document load.
 * Shared by every writer of this thread.
 */
const syncHeap = new HeapGrowth(24 * 1024 * 1024)

export class BulkWriter {
  private batch: Pending[] = []
  private batchBytes = 0
  private readonly inFlight = new Set<Promise<void>>()
  private firstError: unknown
  readonly result: BulkResult = { written: 0, dropped: 0, requests: 0, reasons: [] }
  private readonly sleep: Sleep

  constructor(
    private readonly store: Store,
    private readonly limits: BulkLimits,
    private readonly opts: {
      signal?: AbortSignal
      sleep?: Sleep
      onBulk?: (result: BulkResult) => void | Promise<void>
      refresh?: boolean
    } = {},
  ) {
    this.sleep = opts.sleep ?? realSleep
  }

  /** Queues one write; waits when `max_concurrent_bulks` requests are already in flight. */
  async add(op: WriteOp): Promise<void> {
    if (this.firstError) throw this.firstError
    const bytes = op.op === 'delete' ? 64 : 64 + JSON.stringify(op.body).length
    if (this.batch.length > 0 && this.batchBytes + bytes > this.limits.maxBytes) await this.flush()
    this.batch.push({ op, bytes, shedTries: 0, topologyTries: 0 })
    this.batchBytes += bytes
    if (this.batch.length >= this.limits.maxItems) await this.flush()
  }

  /** Sends what is queued and waits for every request; the totals are final afterwards (more may be added later). */
  async finish(): Promise<BulkResult> {
    await this.flush()
    while (this.inFlight.size > 0) await Promise.race(this.inFlight)
    if (this.firstError) throw this.firstError
    return this.result
  }

  /** Bulk requests started so far (retries not counted). */
  batches = 0

  private async flush(): Promise<void> {
    if (this.batch.length === 0) return
    this.batches++
    if (!syncHeap.check()) youngCollections.due()
    while (this.inFlight.size >= this.limits.maxConcurrent) await Promise.race(this.inFlight)
    const items = this.batch
    this.batch = []
    this.batchBytes = 0
    const p: Promise<void> = this.send(items)
      .then(() => this.opts.onBulk?.(this.result))
      .catch((e) => {
        this.firstError ??= e
      })
      .finally(() => this.inFlight.delete(p))
    this.inFlight.add(p)
  }

  private async send(items: Pending[]): Promise<void> {
    let pending = items
    while (pending.length > 0) {
      if (this.opts.signal?.aborted) throw this.opts.signal.reason ?? new Error('aborted')
      const body: BulkLine[] = []
      for (const { op } of pending) {
        if (op.op === 'delete') body.push({ delete: { _index: op.index, _id: op.id } })
        else body.push({ index: { _index: op.index, _id: op.id } }, op.body as BulkLine)
      }
      this.result.requests++
      const retry: Pending[] = []
      let wait = 0
      const failed = (item: Pending, status: number | undefined, type: string | undefined, reason: string) => {
        const kind = classify(status, type)
        const budget = kind === 'shed' ? this.limits.shed : kind === 'topology' ? this.limits.topology : undefined
        const tries = kind === 'shed' ? ++item.shedTries : kind === 'topology' ? ++item.topologyTries : 0
        if (budget && tries <= budget.maxRetries) {
          retry.push(item)
          wait = Math.max(wait, Math.min(budget.initialMs * 2 ** (tries - 1), budget.maxMs))
        } else {
          this.result.dropped++
          if (this.result.reasons.length < 10) this.result.reasons.push(`${item.op.id}: ${type ?? status}: ${reason}`)
        }
      }
      try {
        const r = await this.store.bulk({ body, refresh: this.opts.refresh ?? false })
        r.items.forEach((entry, i) => {
          const res = Object.values(entry)[0]
          const item = pending[i]
          if (!res || !item) return
          const ok = res.status < 300 || (item.op.op === 'delete' && res.status === 404)
          if (ok) this.result.written++
          else failed(item, res.status, res.error?.type, res.error?.reason ?? '')
        })
      } catch (e) {
        // The whole request was refused: every item shares its fate.
        const err = e as { status?: number; type?: string; message?: string }
        for (const item of pending) failed(item, err.status, err.type, err.message ?? String(e))
      }
      pending = retry
      if (pending.length > 0) await this.sleep(wait, this.opts.signal)
    }
  }
}

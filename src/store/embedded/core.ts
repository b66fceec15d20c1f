/**
 * The transaction core every concern of the embedded store works through: the SQLite handle,
 * the in-memory catalog, one transaction at a time with undo of in-memory changes, `_seq_no`
 * counters, durability, and the state searches and points in time share (open PITs, the plan of
 * the running search, parsed large sources). bun:sqlite is synchronous, so every write
 * (including its `if_seq_no` / create-only check) is one atomic transaction.
 */
import type { Database } from 'bun:sqlite'
import { IndexNotFound, StoreError } from '../errors'
import { resolveExpression, type ResolveRequest } from '../names'
import type { FieldSpec } from '../query/compile'
import { Catalog, type DataStreamMeta, type IndexMeta } from './catalog'
import { GroupCommit, type GroupWrite, type Outcome } from './group-commit'
import { Checkpointer } from './checkpointer'
import { openStoreFile } from './integrity'
import { type FieldLengths, PendingStats, PendingText } from './text-index'
import { hasPending, REFRESH_DOCS, REFRESH_STEP, refreshIndex } from './refresh'
import type { Migration, MigrationResult } from './migrations'
import type { Plan } from './plan'
import type { Column, ColumnLayout } from './aggs-columnar'
import { IndexCaches } from './index-caches'
import { HeapGrowth } from '../../heap'
import type { Synchronous } from './schema'
import { SLICE_MS } from './pacer'
import { DEFAULT_SEARCH_LIMITS, type SearchLimits } from './search-limits'

export interface EmbeddedStoreOptions {
  /** See schema.ts: FULL (default) survives power loss, NORMAL survives kill -9 only. */
  synchronous?: Synchronous
  /** Milliseconds since the epoch; injectable for date math and PIT expiry in tests. */
  clock?: () => number
  /** Schema steps (tests simulate a schema change with their own list); see migrations.ts. */
  migrations?: readonly Migration[]
  /** How often a running store records written progress beside it (integrity.ts); 0: open and close only. */
  progressIntervalMs?: number
  /** Node-level search limits, read at each search so that dynamic settings apply at once. */
  searchLimits?: () => Partial<SearchLimits>
  /** How long one group commit may keep taking writes (group-commit.ts); default the search slice. */
  groupSliceMs?: number
  /** Checkpoint a store file's log on a thread of its own (checkpointer.ts); default true. */
  checkpointThread?: boolean
  /**
   * Answer every search by reading every document (no index plans, statistics from a pass):
   * the reference the indexed plans are tested against (test/store/text-index.test.ts).
   */
  scanOnly?: boolean
}

/**
 * A point in time is a `_seq_no` watermark per index, not a copy: it sees the rows written at or
 * before its watermark, and the older versions kept in `pit_history` of rows replaced or deleted
 * after it. Disk grows with the writes made while PITs are open, never with the number of PITs.
 */
export interface PitMeta {
  id: string
  created: number
  keepAlive: number
  expires: number
  targets: Array<{ ix: number; uuid: string; name: string; specs: Map<string, FieldSpec>; seq: number }>
}

/** See StoreCore.batchHeap. */
const BATCH_HEAP_GROWTH = 8 * 1024 * 1024

/** How long after the last write pending documents wait for a search before they are refreshed anyway. */
const IDLE_REFRESH_MS = 1000

/** Columns stay true while documents are only added (search-rows.ts extends them). */
const rewritesOf = (meta: IndexMeta) => meta.rewrites ?? 0

/** Longest a deferred transaction stays open: what a killed process may lose of deferred writes. */
export const DEFERRED_MS = 250

export class StoreCore {
  readonly db: Database
  readonly cat: Catalog
  readonly now: () => number
  readonly pits = new Map<string, PitMeta>()
  /** The last plan, so that counting and reading the same query plans it once (search-rows.ts). */
  lastPlan: { meta: IndexMeta; query: unknown; plan: Plan | null } | undefined
  /** What searches read from an index and may read again, until its next write (see index-caches.ts). */
  readonly caches = {
    /** Planner row counts (search-rows.ts's probeOf). */
    counts: new IndexCaches<number>(4096),
    /** Where each document's values sit in a column (search-rows.ts's layoutOf), per index. */
    layouts: new IndexCaches<ColumnLayout>(64, rewritesOf),
    /** Field columns for aggregations, in values of 8 bytes (12 with an ordinal): 48 MiB at most. */
    columns: new IndexCaches<Column | null>(4_000_000, rewritesOf),
    /** The matching rids of conjunctions (search-rows.ts's matchesOf), 8 bytes each: 16 MiB at most. */
    matches: new IndexCaches<Float64Array | null>(2_000_000),
    /** Text fields' lengths per document (text-index.ts's fieldLengths), 2 bytes each: 16 MiB at most; grown with added documents. */
    lengths: new IndexCaches<FieldLengths | null>(8_000_000, rewritesOf),
    /** The column positions of time filters and their pills (search-rows.ts's pick), 4 bytes each: 16 MiB at most. */
    picks: new IndexCaches<Int32Array | null>(4_000_000),
    /** Answers of size-0 searches (request-cache.ts), in characters: 32 MiB of UTF-16 at most. */
    answers: new IndexCaches<string>(16_000_000),
  }
  /** Large sources parsed once for concurrent searches (search-rows.ts), by rid (one version each), most recently used last. */
  readonly bigSources = new Map<number, { seq: number; source: Record<string, unknown>; size: number }>()
  bigSourceChars = 0
  /** Undo actions for in-memory changes of the running transaction. */
  private undo: Array<() => void> | undefined
  /** Indices whose seq_no counter moved in the running transaction (persisted once, at its end). */
  private readonly seqDirty = new Set<IndexMeta>()
  /** Indices a write of the running transaction asked to be refreshed (`refresh=true`): refreshed before its commit. */
  private readonly refreshAsked = new Set<IndexMeta>()
  /** Text-field counter changes of the running transaction, written at its end (text-index.ts). */
  readonly pendingStats = new PendingStats()
  readonly pendingText = new PendingText()
  private closed = false
  /** The deferred transaction left open (see deferredTransaction), and its commit's failure when its deadline met one. */
  private deferred?: { undo: Array<() => void>; normal: boolean; timer: ReturnType<typeof setTimeout> }
  private deferredError: unknown

  /** The configured durability; `index.translog.durability: async` indices commit with NORMAL instead. */
  private readonly synchronous: Synchronous

  /** Records a clean close in the store file and its marker (integrity.ts). */
  private readonly seal: () => void
  /** What opening did to the schema (for the start-up log). */
  readonly migration: MigrationResult
  /** OpenSearch's cluster_uuid, kept in the store (integrity.ts). */
  readonly clusterUuid: string

  private readonly searchLimits: () => Partial<SearchLimits>

  /** Single-document writes of one event-loop turn, committed together (group-commit.ts). */
  private readonly group = new GroupCommit((writes) => this.commitGroup(writes))
  private readonly groupSliceMs: number
  /** See EmbeddedStoreOptions.scanOnly. */
  readonly scanOnly: boolean
  /** Checkpoints a store file's log off the event loop; none for an in-memory store. */
  private readonly checkpointer?: Checkpointer

  constructor(path: string, options: EmbeddedStoreOptions = {}) {
    this.synchronous = options.synchronous ?? 'FULL'
    const opened = openStoreFile(path, {
      synchronous: this.synchronous,
      migrations: options.migrations,
      progressIntervalMs: options.progressIntervalMs,
    })
    this.db = opened.db
    this.seal = opened.seal
    this.migration = opened.migration
    this.clusterUuid = opened.clusterUuid
    this.cat = Catalog.load(this.db)
    this.now = options.clock ?? Date.now
    this.searchLimits = options.searchLimits ?? (() => ({}))
    this.groupSliceMs = options.groupSliceMs ?? SLICE_MS
    this.scanOnly = options.scanOnly === true
    if (path !== ':memory:' && options.checkpointThread !== false) this.checkpointer = new Checkpointer(this.db, path, this.synchronous)
  }

  limits(): SearchLimits {
    return { ...DEFAULT_SEARCH_LIMITS, ...this.searchLimits() }
  }

  // -------------------------------------------------------------------------------------------
  // Transactions

  /**
   * `fn` in one transaction; `relaxed` commits it with synchronous NORMAL (see BulkParams.durability);
   * `deferred` leaves it open, to be committed with later ones (see `deferredTransaction`).
   */
  tx<T>(fn: () => T, opts: { relaxed?: boolean; deferred?: boolean; forRead?: boolean } = {}): T {
    this.assertOpen()
    if (this.undo) return fn() // nested: part of the outer transaction
    this.group.flush()
    const undo: Array<() => void> = []
    this.undo = undo
    try {
      if (opts.deferred) return this.deferredTransaction(fn, undo)
      return this.transaction(fn, () => runUndo(undo), opts.relaxed === true, opts.forRead === true)
    } finally {
      this.undo = undefined
    }
  }

  /**
   * `body` between BEGIN IMMEDIATE and COMMIT, the sequence numbers it moved saved with it; on any
   * failure the transaction is rolled back and `takeBack` undoes its in-memory changes. `relaxed`
   * commits with synchronous NORMAL (`index.translog.durability: async`, BulkParams.durability).
   */
  private transaction<T>(body: () => T, takeBack: () => void, relaxed = false, forRead = false): T {
    this.settle(!forRead)
    this.clearPending()
    const normal = relaxed && this.synchronous === 'FULL'
    if (normal) this.db.run('PRAGMA synchronous = NORMAL')
    try {
      this.sql('BEGIN IMMEDIATE')
      try {
        const out = body()
        this.endBody(undefined, this.batchHeap)
        this.sql('COMMIT')
        this.scheduleRefresh()
        return out
      } catch (e) {
        if (this.db.inTransaction) this.sql('ROLLBACK')
        throw e
      }
    } catch (e) {
      takeBack()
      throw e
    } finally {
      if (normal) this.db.run('PRAGMA synchronous = FULL')
    }
  }

  /** What a transaction's body leaves for its end (its text rows, text statistics and `_seq_no` counters), forgotten. */
  private clearPending(): void {
    this.seqDirty.clear()
    this.refreshAsked.clear()
    this.pendingStats.clear()
    this.pendingText.clear()
  }

  /**
   * What a transaction's body leaves for its end: the refresh of an index it left REFRESH_DOCS
   * documents pending, its text rows, text statistics and `_seq_no` counters; true if it refreshed one.
   */
  private endBody(refreshLimit?: number, heap?: HeapGrowth): boolean {
    const refreshed = this.refreshFull(refreshLimit, heap)
    this.pendingText.flush(this.db)
    this.pendingStats.flush(this.db)
    this.saveSeqs()
    return refreshed
  }

  /**
   * `body` in the deferred transaction (begun now if none is open), committed with synchronous
   * NORMAL by whatever comes first: the next other transaction, a close, or DEFERRED_MS after it
   * began. Its changes are this connection's (searches see them) at once, and durable with the next
   * durable commit. A commit costs every page the transaction changed, written to the log: a
   * detector writing its findings a slice at a time (a few dozen each) rewrote the same field-value
   * pages in every commit, 3-4 log pages per finding; one commit over many slices writes each page
   * once. No savepoint per body: SQLite copies every page a savepoint changes into its journal
   * first, which cost more than the commits saved (2,407 rules, 120k findings: 13.8 s of the node
   * thread for the bulks with savepoints, 8.6 s without). So a body that fails takes back every
   * deferred write not yet committed, as a failed commit does (see `abandon`).
   */
  private deferredTransaction<T>(body: () => T, undo: Array<() => void>): T {
    if (!this.deferred) {
      this.clearPending()
      const normal = this.synchronous === 'FULL'
      if (normal) this.db.run('PRAGMA synchronous = NORMAL')
      try {
        this.sql('BEGIN IMMEDIATE')
      } catch (e) {
        if (normal) this.db.run('PRAGMA synchronous = FULL')
        throw e
      }
      // On a turn of its own, not inside a writer's: its commit never adds to another's stretch.
      const timer = setTimeout(() => this.settleLater(), DEFERRED_MS)
      timer.unref()
      this.deferred = { undo: [], normal, timer }
    }
    const open = this.deferred
    try {
      const out = body()
      this.endBody(REFRESH_STEP)
      open.undo.push(...undo)
      return out
    } catch (e) {
      open.undo.push(...undo)
      this.abandon(e)
      throw e
    }
  }

  /**
   * Commits the deferred transaction, if one is open, and throws (once) what took deferred writes
   * back since; not to a read's refresh (`report` false): the next write is the one to be told.
   */
  private settle(report = true): void {
    if (this.deferred) this.commitDeferred()
    const e = this.deferredError
    if (e === undefined || !report) return
    this.deferredError = undefined
    throw e
  }

  /** The deferred transaction's COMMIT; a failed one is abandoned. */
  private commitDeferred(): void {
    const open = this.deferred!
    try {
      this.sql('COMMIT')
    } catch (e) {
      this.abandon(e)
      return
    }
    this.deferred = undefined
    clearTimeout(open.timer)
    if (open.normal) this.db.run('PRAGMA synchronous = FULL')
    this.scheduleRefresh()
  }

  /**
   * The deferred transaction failed (`cause`): rolled back, its in-memory changes taken back, and
   * the next transaction told before it commits anything, so that a write depending on the
   * deferred ones (a detector's checkpoint on its findings) is not made durable without them.
   */
  private abandon(cause: unknown): void {
    const open = this.deferred!
    this.deferred = undefined
    clearTimeout(open.timer)
    const reason = cause instanceof Error ? cause.message : String(cause)
    this.deferredError = new StoreError('deferred_writes_lost', 500, `deferred writes were taken back: ${reason}`)
    runUndo(open.undo)
    this.clearPending()
    if (this.db.inTransaction) this.sql('ROLLBACK')
    if (open.normal) this.db.run('PRAGMA synchronous = FULL')
  }

  /** The deadline's commit, on a turn of its own; its failure waits for the next transaction. */
  private settleLater(): void {
    if (this.closed || !this.deferred) return
    try {
      this.commitDeferred()
    } catch {
      // The connection failed under it (abandon recorded why first): the next transaction is told.
    }
  }

  /**
   * A single-document write on `index`, committed with the other writes of this event-loop turn;
   * settles after the commit. The write's checks run at commit time, against the writes before it.
   */
  groupWrite<T>(index: string, run: () => T): Promise<T> {
    this.assertOpen()
    return this.group.enqueue<T>({ run, relaxed: this.relaxed(index) })
  }

  /**
   * One transaction for the head of a group: a savepoint per write, so that a failed write takes
   * only itself back; at least one write, then as many as fit in the slice.
   */
  private commitGroup(writes: readonly GroupWrite[]): Outcome[] {
    this.assertOpen()
    const until = performance.now() + this.groupSliceMs
    const outcomes: Outcome[] = []
    const undos: Array<Array<() => void>> = []
    const each = () => {
      for (const w of writes) {
        if (outcomes.length > 0 && performance.now() >= until) break
        const undo: Array<() => void> = []
        this.undo = undo
        undos.push(undo)
        this.sql('SAVEPOINT w')
        try {
          outcomes.push({ ok: true, value: w.run() })
          this.sql('RELEASE w')
        } catch (error) {
          this.sql('ROLLBACK TO w')
          this.sql('RELEASE w')
          runUndo(undo)
          undo.length = 0
          outcomes.push({ ok: false, error })
        }
      }
      return outcomes
    }
    try {
      // Decided for the whole group: a write past the slice would only make the commit stricter.
      const relaxed = writes.every((w) => w.relaxed)
      return this.transaction(
        each,
        () => {
          for (let i = undos.length - 1; i >= 0; i--) runUndo(undos[i])
        },
        relaxed,
      )
    } finally {
      this.undo = undefined
    }
  }

  /** Statements without parameters, prepared once (db.run would compile them on every call). */
  private sql(statement: string): void {
    this.db.query(statement).run()
  }

  private saveSeqs(): void {
    const save = this.db.query('UPDATE indices SET seq = ? WHERE ix = ?')
    for (const meta of this.seqDirty) if (this.cat.byIx.get(meta.ix) === meta) save.run(meta.seq, meta.ix)
  }

  /**
   * The indices written in this transaction that leave REFRESH_DOCS documents pending get their
   * field values (refresh.ts): `limit` of them at most (a deferred transaction's, REFRESH_STEP); true if one did.
   */
  private refreshFull(limit?: number, heap?: HeapGrowth): boolean {
    let refreshed = false
    for (const meta of this.seqDirty)
      if (meta.nextRid - meta.indexedRid >= REFRESH_DOCS) {
        if (!refreshed) heap?.check()
        refreshIndex(this, meta, limit)
        refreshed = true
      }
    // A write with `refresh=true` is searched next: refreshed in its own commit, not in a
    // transaction (and a log sync) of the next search's. A deferred transaction's (bounded by
    // `limit`) keeps batching its refreshes.
    if (limit === undefined) for (const meta of this.refreshAsked) if (this.cat.byIx.get(meta.ix) === meta) refreshIndex(this, meta)
    this.refreshAsked.clear()
    return refreshed
  }

  /** The running transaction refreshes `meta` before it commits (a write's `refresh=true`). */
  refreshAtCommit(meta: IndexMeta): void {
    this.refreshAsked.add(meta)
  }

  /**
   * Collected when a write transaction is about to refresh a batch, if it grew by BATCH_HEAP_GROWTH
   * (heap.ts): by then the earlier bulks of the batch are garbage (their parsed bodies, sources and
   * keys, and the native buffers those hold), which JavaScriptCore otherwise lets pile up to tens
   * of MiB before a full collection. A 100k-event `_bulk` ingest over HTTP, same runs: peak RSS
   * 250-258 MiB instead of 282-339, node CPU per event +3% (within the runs' spread); a 48 MiB
   * growth allowance costs ~1% and peaks at 266-276 MiB. Before the refresh rather than after its
   * commit: the refresh's sort (SQLite's sorter holds the batch's keys up to the page cache's size)
   * then does not peak on top of that garbage.
   */
  private readonly batchHeap = new HeapGrowth(BATCH_HEAP_GROWTH)

  /**
   * Every document of these indices in their field values (refresh.ts): what a search or a count
   * runs before it reads them. A write transaction only when one has pending documents.
   */
  refresh(metas: Iterable<IndexMeta>): void {
    const due = [...metas].filter((m) => hasPending(m) && this.cat.byIx.get(m.ix) === m)
    if (due.length > 0) this.tx(() => due.forEach((m) => refreshIndex(this, m)), { forRead: true })
  }

  /** A second after the last commit that left documents pending, they are refreshed (see refresh.ts). */
  private scheduleRefresh(): void {
    if (this.idleRefresh) {
      this.idleRefresh.refresh()
      return
    }
    if (![...this.seqDirty].some(hasPending)) return
    this.idleRefresh = setTimeout(() => {
      this.idleRefresh = undefined
      if (this.closed) return
      try {
        this.refresh(this.cat.byIx.values())
      } catch {
        // Nothing is lost: the next search, count or write past REFRESH_DOCS refreshes them.
      }
    }, IDLE_REFRESH_MS)
    this.idleRefresh.unref()
  }
  private idleRefresh: ReturnType<typeof setTimeout> | undefined

  /** The text rows this transaction wrote, in the text index before a read of it (see PendingText). */
  textVisible(): void {
    if (this.pendingText.size > 0) this.pendingText.flush(this.db)
  }

  onUndo(f: () => void): void {
    this.undo?.push(f)
  }

  assertOpen(): void {
    if (this.closed) throw new StoreError('illegal_state_exception', 500, 'store is closed')
  }

  nextSeq(meta: IndexMeta): number {
    meta.writes = (meta.writes ?? 0) + 1
    const seq = ++meta.seq
    this.seqDirty.add(meta)
    this.onUndo(() => {
      meta.seq = Math.min(meta.seq, seq - 1)
      this.rewrote(meta)
    })
    return seq
  }

  /** A document of the index changed or went (see IndexMeta.rewrites). */
  rewrote(meta: IndexMeta): void {
    meta.rewrites = (meta.rewrites ?? 0) + 1
  }

  /**
   * OpenSearch's `index.translog.durability: async` (acknowledge before the fsync) on an index
   * that exists under this exact name: its single-document writes may commit with synchronous
   * NORMAL, which survives a killed process but not a power loss. Lock and lease documents use it,
   * since a lock lost with the machine is released, not corrupted. Everything else keeps FULL,
   * and a group holding any such write commits FULL.
   */
  private relaxed(index: string): boolean {
    return this.cat.byName.get(index)?.settings['index.translog.durability'] === 'async'
  }

  /** An index id (so its rids) may be given to the next index created: no parsed source may outlive it. */
  clearSourceCache(): void {
    this.bigSources.clear()
    this.bigSourceChars = 0
  }

  // -------------------------------------------------------------------------------------------
  // Resolution

  resolveTargets(expression: string | string[] | undefined, req: ResolveRequest = {}) {
    return resolveExpression(this.cat, expression, req)
  }

  indexMeta(name: string): IndexMeta {
    const meta = this.cat.byName.get(name)
    if (!meta) throw new IndexNotFound(name)
    return meta
  }

  writeIndexOf(ds: DataStreamMeta): IndexMeta {
    // Asked for every document written to a stream: the last answer while no index came or went.
    const known = this.writeIndices.get(ds)
    if (
      known &&
      known.generation === ds.generation &&
      known.indices === this.cat.byName.size &&
      this.cat.byName.get(known.meta.name) === known.meta
    )
      return known.meta
    const backing = this.cat.backingIndices(ds)
    const meta = this.indexMeta(backing[backing.length - 1])
    this.writeIndices.set(ds, { meta, generation: ds.generation, indices: this.cat.byName.size })
    return meta
  }
  private readonly writeIndices = new WeakMap<DataStreamMeta, { meta: IndexMeta; generation: number; indices: number }>()

  close(): void {
    if (this.closed) return
    this.group.flush()
    try {
      // A failed deferred commit is told here too, and the store closes all the same.
      this.settle()
    } finally {
      clearTimeout(this.idleRefresh)
      this.closed = true
      this.db.run('DELETE FROM pit_history')
      this.checkpointer?.stop()
      this.seal()
      this.db.close()
    }
  }
}

function runUndo(undo: Array<() => void>): void {
  for (let i = undo.length - 1; i >= 0; i--) undo[i]()
}

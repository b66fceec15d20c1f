/**
 * The store file's write-ahead log is checkpointed by a thread of its own (checkpoint-worker.ts),
 * so no commit on the node thread pays for copying pages back into the file and syncing it (10 ms
 * and more per checkpoint of a few MiB, which SQLite runs inside whichever commit crosses its
 * threshold). The node thread's own automatic checkpoint stays as a backstop at a much larger
 * size, so the log stays bounded even if the thread cannot keep up or fails.
 */
import type { Database } from 'bun:sqlite'
import type { Synchronous } from './schema'

/**
 * The thread's entry point. In the compiled executable it is an entry point of its own
 * (scripts/build.ts), addressed from the bundle's root (src/); run from source, the file beside this.
 */
const WORKER = import.meta.url.includes('$bunfs')
  ? './store/embedded/checkpoint-worker.ts'
  : new URL('./checkpoint-worker.ts', import.meta.url).href

/** How often the thread checkpoints: the log grows by at most what is written meanwhile. */
export const CHECKPOINT_EVERY_MS = 100
/** Pages (16 KiB) of log after which the node thread checkpoints itself: SQLite's own threshold. */
export const OWN_CHECKPOINT_PAGES = 256
/** The node thread's threshold while the thread checkpoints: a backstop (256 MiB of log). */
export const BACKSTOP_CHECKPOINT_PAGES = 16_384
/** Longest wait at close for the thread to let go of its connection. */
const STOP_WAIT_MS = 5_000

export type CheckpointerMessage =
  { kind: 'start'; file: string; synchronous: Synchronous; everyMs: number } | { kind: 'stop'; closed: Int32Array<SharedArrayBuffer> }

export class Checkpointer {
  private readonly worker: Worker
  private stopped = false

  /** Starts checkpointing `file`, whose node-thread connection is `db`. */
  constructor(db: Database, file: string, synchronous: Synchronous, opts: { everyMs?: number; onError?: (error: string) => void } = {}) {
    db.run(`PRAGMA wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`)
    this.worker = new Worker(WORKER)
    this.worker.unref()
    const failed = (error: string) => {
      if (this.stopped) return
      // The node thread checkpoints as it did without the thread.
      db.run(`PRAGMA wal_autocheckpoint = ${OWN_CHECKPOINT_PAGES}`)
      opts.onError?.(error)
    }
    this.worker.onmessage = (e: MessageEvent<{ ok: boolean; error?: string }>) => {
      if (!e.data.ok) failed(e.data.error ?? 'the checkpoint thread could not open the store file')
    }
    this.worker.onerror = (e) => failed(e.message)
    this.worker.postMessage({
      kind: 'start',
      file,
      synchronous,
      everyMs: opts.everyMs ?? CHECKPOINT_EVERY_MS,
    } satisfies CheckpointerMessage)
  }

  /**
   * Stops the thread and waits until its connection is closed, so the node thread's connection is
   * the last one and its close checkpoints the whole log and removes it.
   */
  stop(): void {
    if (this.stopped) return
    this.stopped = true
    const closed = new Int32Array(new SharedArrayBuffer(4))
    this.worker.postMessage({ kind: 'stop', closed } satisfies CheckpointerMessage)
    Atomics.wait(closed, 0, 0, STOP_WAIT_MS)
    this.worker.terminate()
  }
}

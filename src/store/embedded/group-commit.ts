/**
 * Group commit of single-document writes. A commit in WAL mode with synchronous FULL costs an
 * fsync, and bun:sqlite runs it on the one JS thread: with one transaction per write, concurrent
 * writers queue behind each other's fsyncs. Writes issued during the same turn of the event loop
 * are instead run, in the order they were issued, as savepoints of one transaction, committed
 * with one fsync; each caller's promise settles only after that commit, so an acknowledged write
 * is as durable as before. A write that fails (version conflict, mapping error) is rolled back to
 * its savepoint alone and fails alone; a commit that fails fails every write of the group.
 */

/** How one write of a group ended. */
export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

export interface GroupWrite {
  run: () => unknown
  /** May commit with synchronous NORMAL (`index.translog.durability: async`); see StoreCore.relaxed. */
  relaxed: boolean
}

interface Queued extends GroupWrite {
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

export class GroupCommit {
  private queue: Queued[] = []
  private scheduled = false

  /** `commit` runs a whole group as one transaction and answers one outcome per write, in order. */
  constructor(private readonly commit: (writes: readonly GroupWrite[]) => Outcome[]) {}

  enqueue<T>(write: GroupWrite): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ ...write, resolve: resolve as (value: unknown) => void, reject })
      if (!this.scheduled) {
        this.scheduled = true
        // setImmediate, not a microtask: requests read from sockets in the same loop turn join.
        setImmediate(() => this.flush())
      }
    })
  }

  /**
   * Commits what is queued now. Other transactions call this first, so that writes commit in
   * the order they were issued whatever path they took.
   */
  flush(): void {
    this.scheduled = false
    if (this.queue.length === 0) return
    const group = this.queue
    this.queue = []
    let outcomes: Outcome[]
    try {
      outcomes = this.commit(group)
    } catch (error) {
      outcomes = group.map(() => ({ ok: false, error }))
    }
    group.forEach((w, i) => {
      const o = outcomes[i]
      if (o.ok) w.resolve(o.value)
      else w.reject(o.error)
    })
  }
}

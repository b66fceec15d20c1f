/**
 * Group commit of single-document writes. A commit in WAL mode with synchronous FULL costs an
 * fsync, and bun:sqlite runs it on the one JS thread: with one transaction per write, concurrent
 * writers queue behind each other's fsyncs. Writes issued during the same turn of the event loop
 * are instead run, in the order they were issued, as savepoints of one transaction, committed
 * with one fsync; each caller's promise settles only after that commit, so an acknowledged write
 * is as durable as before. A write that fails (version conflict, mapping error) is rolled back to
 * its savepoint alone and fails alone; a commit that fails fails every write taken with it.
 * A group stops taking writes after a slice of the event loop (like a paced search): the rest
 * stay queued, first in line for the next group, so a burst does not hold up other requests.
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

  /**
   * `commit` runs writes from the start of the group as one transaction and answers one outcome
   * per write it ran, in order; it may stop early (its time slice), leaving the rest queued.
   */
  constructor(private readonly commit: (writes: readonly GroupWrite[]) => Outcome[]) {}

  enqueue<T>(write: GroupWrite): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ ...write, resolve: resolve as (value: unknown) => void, reject })
      this.schedule()
    })
  }

  private schedule(): void {
    if (this.scheduled) return
    this.scheduled = true
    // setImmediate, not a microtask: requests read from sockets in the same loop turn join.
    setImmediate(() => {
      this.scheduled = false
      this.flushSlice()
    })
  }

  /**
   * Commits everything queued now, slice after slice. Other transactions call this first, so
   * that writes commit in the order they were issued whatever path they took.
   */
  flush(): void {
    while (this.queue.length > 0) this.flushSlice()
  }

  private flushSlice(): void {
    if (this.queue.length === 0) return
    const group = this.queue
    this.queue = []
    let outcomes: Outcome[]
    try {
      outcomes = this.commit(group)
    } catch (error) {
      outcomes = group.map(() => ({ ok: false, error }))
    }
    // Writes past the slice go back to the head of the queue, before any issued meanwhile.
    if (outcomes.length < group.length) {
      this.queue = [...group.slice(outcomes.length), ...this.queue]
      this.schedule()
    }
    for (let i = 0; i < outcomes.length; i++) {
      const o = outcomes[i]
      if (o.ok) group[i].resolve(o.value)
      else group[i].reject(o.error)
    }
  }
}

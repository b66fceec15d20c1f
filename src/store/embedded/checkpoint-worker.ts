// Checkpoints the store's write-ahead log on a connection of its own, off the event loop: a commit
// on the node thread only appends to the log (and syncs it), while copying its pages back into the
// store file and syncing that happen here, PASSIVE (never waiting for a reader or a writer).
import { Database } from 'bun:sqlite'
import type { CheckpointerMessage } from './checkpointer'

declare const self: Worker

let db: Database | undefined
let timer: ReturnType<typeof setInterval> | undefined

self.onmessage = (event: MessageEvent<CheckpointerMessage>) => {
  const message = event.data
  if (message.kind === 'start') {
    try {
      db = new Database(message.file)
      // The store's durability: a checkpoint syncs the store file before the log may be reused.
      db.run(`PRAGMA synchronous = ${message.synchronous}`)
      const checkpoint = db.query('PRAGMA wal_checkpoint(PASSIVE)')
      timer = setInterval(() => {
        try {
          checkpoint.get()
        } catch {
          // Busy or locked now: the next tick tries again, and the node thread's backstop holds.
        }
      }, message.everyMs)
      postMessage({ ok: true })
    } catch (e) {
      postMessage({ ok: false, error: e instanceof Error ? e.message : String(e) })
    }
    return
  }
  clearInterval(timer)
  try {
    db?.close()
  } finally {
    db = undefined
    Atomics.store(message.closed, 0, 1)
    Atomics.notify(message.closed, 0)
  }
}

// Runs `VACUUM INTO` on its own connection, off the main thread: the copy is one read transaction
// of the WAL database (a consistent point in time) while the node keeps serving and writing.
import { Database } from 'bun:sqlite'

declare const self: Worker

self.onmessage = (event: MessageEvent<{ source: string; target: string }>) => {
  const { source, target } = event.data
  let db: Database | undefined
  try {
    db = new Database(source, { readonly: true })
    db.run('PRAGMA busy_timeout = 5000')
    db.run('VACUUM INTO ?', [target])
    postMessage({ ok: true })
  } catch (e) {
    postMessage({ ok: false, error: e instanceof Error ? e.message : String(e) })
  } finally {
    db?.close()
  }
}

import { Database } from 'bun:sqlite'
import { type Migration, migrate, type MigrationResult, SCHEMA_MIGRATIONS } from './migrations'

/**
 * Durability: WAL with `synchronous = FULL` by default. Every acknowledged write transaction is
 * fsynced to the WAL before the call returns, so it survives `kill -9` AND power loss / OS crash
 * (the same promise as OpenSearch's default `index.translog.durability: request`).
 * `NORMAL` is available for throwaway stores: it survives `kill -9` (the WAL is in the OS page
 * cache) but the last transactions before a power loss may be rolled back.
 */
export type Synchronous = 'FULL' | 'NORMAL'

/**
 * Compiled statements `db.query` keeps per connection. Bun's default of 20 is less than what one
 * bulk of the store runs (its writes, the field-value INSERTs of each length, the text index,
 * savepoints, counters): each statement pushed out was compiled again on its next use. The store's
 * hot statements are a few dozen shapes (a plan's SQL follows the query's shape, not its values);
 * the cache stays an LRU, so odd shapes only push out each other. A compiled statement holds
 * about 20 KiB: 256 of them bound the cache at ~5 MiB per connection.
 */
const STATEMENT_CACHE = 256
Database.MAX_QUERY_CACHE_SIZE = STATEMENT_CACHE

/** Connection settings, then the schema brought to its newest version (see migrations.ts). */
export function prepareDatabase(
  db: Database,
  synchronous: Synchronous,
  file = ':memory:',
  migrations: readonly Migration[] = SCHEMA_MIGRATIONS,
): MigrationResult {
  // 16 KiB pages (effective for new files only): ~1 KB documents pack 15 to a page, and the
  // B-trees are shallower; ingest measured ~1.5x faster than with 4 KiB pages.
  db.run('PRAGMA page_size = 16384')
  db.run('PRAGMA journal_mode = WAL')
  db.run(`PRAGMA synchronous = ${synchronous}`)
  db.run('PRAGMA busy_timeout = 5000')
  // The automatic checkpoint runs in the committing call, on the event loop, and is counted in
  // pages: SQLite's 1000 meant 16 MiB of WAL at 16 KiB pages, copied and fsynced in one 10-20 ms
  // stall every few hundred writes (the p99 of concurrent writers). 256 pages is SQLite's own 4 MiB.
  db.run('PRAGMA wal_autocheckpoint = 256')
  // Sorts past the page cache (a refresh's batch of keys, a large ORDER BY) spill to a temporary
  // file, not to the heap: MEMORY held a 1M-event ingest's peak RSS at 308 MiB, FILE at 243-253.
  db.run('PRAGMA temp_store = FILE')
  db.run('PRAGMA cache_size = -16000') // 16 MiB page cache: bounded memory at any data size
  const result = migrate(db, file, migrations)
  // Points in time do not outlive the process.
  db.run('DELETE FROM pit_history')
  return result
}

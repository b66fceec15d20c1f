// Turns an embedded store's file back into what an older schema held, for migration tests.
import type { Database } from 'bun:sqlite'

/**
 * Takes the fields that `where` (an SQL condition on the `fields` table) selects out of the file,
 * as a schema without them never wrote them: their values, their rows and the documents' keys that
 * name them. Answers the ids of the fields taken out.
 */
export function dropFields(db: Database, where: string): number[] {
  const ids = (db.query(`SELECT f FROM fields WHERE ${where}`).all() as Array<{ f: number }>).map((r) => r.f)
  if (ids.length === 0) return ids
  db.run(`DELETE FROM fv WHERE f IN (${ids.join(',')})`)
  db.run(`DELETE FROM fields WHERE f IN (${ids.join(',')})`)
  for (const { rid, keys } of db.query('SELECT rid, keys FROM docs').all() as Array<{ rid: number; keys: string }>)
    db.query('UPDATE docs SET keys = ? WHERE rid = ?').run(
      JSON.stringify((JSON.parse(keys) as Array<[number]>).filter(([f]) => !ids.includes(f))),
      rid,
    )
  return ids
}

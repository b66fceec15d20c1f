// Croner awaits a job's callback and, without a `catch` option, leaves its rejection unhandled,
// which ends the process: a job whose store call fails (a platform node lost) must log instead.
import { expect, test } from 'bun:test'
import { Glob } from 'bun'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '../..')

/** The `new Cron(...)` calls of a source text whose options name no `catch`. */
export function cronsWithoutCatch(text: string): string[] {
  const found: string[] = []
  for (const m of text.matchAll(/new Cron\(/g)) {
    // The call's text up to its callback: the pattern, then the options object.
    const call = text.slice(m.index, text.indexOf('=>', m.index))
    if (!/\bcatch:/.test(call)) found.push(call.split('\n')[0])
  }
  return found
}

test('the checker finds a job without catch and passes one with it', () => {
  expect(cronsWithoutCatch(`new Cron('* * * * *', { protect: true }, () => run())`)).toHaveLength(1)
  expect(cronsWithoutCatch(`new Cron('* * * * *', { protect: true, catch: log }, () => run())`)).toEqual([])
})

test('every scheduled job of src/ logs its failures (croner `catch`)', () => {
  const missing: string[] = []
  for (const file of new Glob('src/**/*.ts').scanSync(ROOT))
    for (const call of cronsWithoutCatch(readFileSync(join(ROOT, file), 'utf8'))) missing.push(`${file}: ${call}`)
  expect(missing).toEqual([])
})

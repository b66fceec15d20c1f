// Rule authoring through the Content Manager's routes, as the tests over a TestServer do it.
import { expect } from 'bun:test'
import type { TestServer } from './server'

export const CONTENT = '/_plugins/_content_manager'

/** A rule of the `win` integration matching command lines that contain `word`. */
export const winRule = (title: string, word: string, level = 'high') => ({
  metadata: { title, author: 'me' },
  level,
  logsource: { product: 'win' },
  detection: { selection: { 'process.command_line|contains': word }, condition: 'selection' },
})

/** Promotes everything the draft space holds to test, as the preview offers it. */
export async function promoteDraft(s: TestServer): Promise<void> {
  const preview = await s.request('GET', `${CONTENT}/promote?space=draft`)
  const r = await s.request('POST', `${CONTENT}/promote`, { body: { space: 'draft', ...(preview.body as object) } })
  expect(r.status).toBe(200)
}

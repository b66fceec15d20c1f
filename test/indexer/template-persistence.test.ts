// Component and legacy templates are kept in the store file: a reopened store still has them and
// still composes new indices from them.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedStore } from '../../src/store/embedded'

const dir = mkdtempSync(join(tmpdir(), 'svc-templates-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('component, legacy and index templates survive a reopen, and so does what a template removal took away', async () => {
  const path = join(dir, 'templates.db')
  const a = openEmbeddedStore(path)
  await a.putComponentTemplate({
    name: 'part',
    body: { template: { settings: { 'index.priority': 7 }, mappings: { properties: { p: { type: 'keyword' } } } } },
  })
  await a.putIndexTemplate({ name: 'composed', body: { index_patterns: ['comp-*'], composed_of: ['part'] } })
  await a.putTemplate({
    name: 'old',
    body: { index_patterns: ['old-*'], order: 3, settings: { number_of_shards: 1 }, aliases: { '{index}-a': {} } },
  })
  await a.putTemplate({ name: 'dropped', body: { index_patterns: ['dropped-*'] } })
  await a.putComponentTemplate({ name: 'dropped', body: { template: {} } })
  await a.deleteTemplate({ name: 'dropped' })
  await a.deleteComponentTemplate({ name: 'dropped' })
  await a.close()

  const b = openEmbeddedStore(path)
  try {
    expect((await b.getComponentTemplate()).component_templates.map((t) => t.name)).toEqual(['part'])
    expect(await b.getTemplate()).toEqual({
      old: {
        order: 3,
        index_patterns: ['old-*'],
        settings: { index: { number_of_shards: '1' } },
        mappings: {},
        aliases: { '{index}-a': {} },
      },
    })
    await b.createIndex({ index: 'comp-1' })
    await b.createIndex({ index: 'old-1' })
    const got = await b.getIndex({ index: ['comp-1', 'old-1'] })
    expect([got['comp-1'].settings.index.priority, got['comp-1'].mappings]).toEqual(['7', { properties: { p: { type: 'keyword' } } }])
    expect(got['old-1'].aliases).toEqual({ 'old-1-a': {} })
    // The composable template still names the component template, so it still may not go.
    await expect(b.deleteComponentTemplate({ name: 'part' })).rejects.toThrow(
      'cannot be removed as they are still in use by index templates [composed]',
    )
  } finally {
    await b.close()
  }
})

import { describe, expect, test } from 'bun:test'
import { isSystemIndex } from '../../src/setup/indices/names'
import { SETUP_DEFINITIONS, SETUP_STATUS_DOC_ID, SETUP_STATUS_INDEX } from '../../src/setup/indices'
import { startTestServer } from '../helpers/server'

/** What the index API shows of everything Setup owns. */
async function observed(request: Awaited<ReturnType<typeof startTestServer>>['request']) {
  const cat = await request('GET', '/_cat/indices?expand_wildcards=all&format=json&h=index,uuid')
  const templates = await request('GET', '/_index_template')
  const streams = await request('GET', '/_data_stream')
  const marker = await request('GET', `/${SETUP_STATUS_INDEX}/_doc/${SETUP_STATUS_DOC_ID}`)
  expect([cat.status, templates.status, streams.status, marker.status]).toEqual([200, 200, 200, 200])
  return {
    indices: new Map((cat.body as Array<{ index: string; uuid: string }>).map((r) => [r.index, r.uuid])),
    templates: new Map(
      (templates.body.index_templates as Array<{ name: string; index_template: unknown }>).map((t) => [
        t.name,
        JSON.stringify(t.index_template),
      ]),
    ),
    streams: (streams.body.data_streams as Array<{ name: string; indices: Array<{ index_name: string }> }>).map((s) => [
      s.name,
      s.indices.map((i) => i.index_name),
    ]),
    marker: marker.body._source,
  }
}

describe('start-up over HTTP', () => {
  test('a fresh data dir becomes ready with everything present; a restart changes nothing', async () => {
    const first = await startTestServer()
    let before: Awaited<ReturnType<typeof observed>>
    try {
      before = await observed(first.request)
      expect(before.marker.status).toBe('ready')
      for (const d of SETUP_DEFINITIONS) {
        // A system index is not visible through the index API, not even to all_access (bootstrap.test.ts checks it in the store).
        if (d.kind === 'index') expect(before.indices.has(d.name)).toBe(!isSystemIndex(d.name))
        if (d.kind === 'content') expect(before.indices.has(d.index)).toBe(true)
        if (d.kind !== 'index' || d.template) expect(before.templates.has(d.template!.name)).toBe(true)
        if (d.kind === 'stream') expect(before.streams.map(([name]) => name)).toContain(d.name)
      }
    } finally {
      await first.stop({ keepData: true })
    }
    const second = await startTestServer({ dataDir: first.dataDir })
    try {
      const after = await observed(second.request)
      expect(after.marker.status).toBe('ready')
      expect(after.marker.timestamp > before.marker.timestamp).toBe(true)
      // Same indices with the same uuids (nothing recreated), same templates and streams.
      expect([...after.indices].sort()).toEqual([...before.indices].sort())
      expect([...after.templates].sort()).toEqual([...before.templates].sort())
      expect(after.streams).toEqual(before.streams)
    } finally {
      await second.stop()
    }
  })
})

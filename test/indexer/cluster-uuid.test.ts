// cluster_uuid (issue 29 item 8a), over real HTTP: random per install, kept across restarts, the
// same in every answer that reports it.
import { describe, expect, test } from 'bun:test'
import { startTestServer } from '../helpers/server'

describe('cluster_uuid', () => {
  test('two installs with the default cluster name report different uuids; a restart keeps its own', async () => {
    const one = await startTestServer()
    const two = await startTestServer()
    try {
      const a = (await one.request('GET', '/')).body
      const b = (await two.request('GET', '/')).body
      expect(a.cluster_name).toBe(b.cluster_name)
      expect(a.cluster_uuid).toMatch(/^[A-Za-z0-9_-]{22}$/)
      expect(b.cluster_uuid).toMatch(/^[A-Za-z0-9_-]{22}$/)
      expect(a.cluster_uuid).not.toBe(b.cluster_uuid)

      const state = (await one.request('GET', '/_cluster/state/metadata,version')).body
      expect(state.cluster_uuid).toBe(a.cluster_uuid)
      expect(state.metadata.cluster_uuid).toBe(a.cluster_uuid)
      expect(state.state_uuid).not.toBe(a.cluster_uuid)
      expect((await one.request('GET', '/_cluster/stats')).body.cluster_uuid).toBe(a.cluster_uuid)

      await one.stop({ keepData: true })
      const again = await startTestServer({ dataDir: one.dataDir })
      try {
        expect((await again.request('GET', '/')).body.cluster_uuid).toBe(a.cluster_uuid)
      } finally {
        await again.stop()
      }
    } finally {
      await one.stop().catch(() => {})
      await two.stop()
    }
  })
})

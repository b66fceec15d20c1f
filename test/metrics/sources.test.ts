// The scrape-time sources that need no HTTP client: lock events from the journal, this node's
// Engine loads, and the route labels (bounded: patterns, never raw paths).
import { expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Journal } from '../../src/journal/journal'
import { createMetrics } from '../../src/metrics'
import { routeLabeler } from '../../src/metrics/http'
import { openEmbeddedStore } from '../../src/store/embedded'

test('lock events come from the journal and Engine load state from the node, at scrape time', async () => {
  const journal = new Journal(join(mkdtempSync(join(tmpdir(), 'svc-metrics-')), 'journal.db'))
  const store = openEmbeddedStore(':memory:')
  let loads = [{ space: 'standard' as const, loadedHash: 'abc123', lastOutcome: 'loaded' as const, lastAt: 1, inFlight: false }]
  const metrics = createMetrics({ routes: () => [], sources: { store, journal, engineLoads: () => loads, now: Date.now } })
  try {
    journal.record('lock.acquire', 'x')
    journal.record('lock.steal', 'x')
    journal.record('lock.steal', 'y')
    journal.record('lock.timeout', 'y')
    journal.record('sync.pass', 'schedule', { outcome: 'ready', millis: 2500 })
    let text = await metrics.scrape()
    expect(text).toContain('svc_lock_events_total{kind="steal"} 2')
    expect(text).toContain('svc_lock_events_total{kind="timeout"} 1')
    expect(text).toContain('svc_lock_events_total{kind="acquire"} 1')
    expect(text).toContain('svc_sync_last_pass_duration_seconds 2.5')
    expect(text).toContain('svc_engine_policy_loaded{space="standard",hash="abc123"} 1')
    expect(text).toContain('svc_engine_policy_last_load{space="standard",outcome="loaded"} 1')
    expect(text).toContain('svc_engine_policy_load_in_progress{space="standard"} 0')
    // A new hash replaces the old series rather than adding one.
    loads = [{ space: 'standard', loadedHash: 'def456', lastOutcome: 'loaded', lastAt: 2, inFlight: true }]
    text = await metrics.scrape()
    expect(text).not.toContain('abc123')
    expect(text).toContain('svc_engine_policy_loaded{space="standard",hash="def456"} 1')
    expect(text).toContain('svc_engine_policy_load_in_progress{space="standard"} 1')
  } finally {
    journal.close()
    await store.close()
  }
})

test('route labels are the matching pattern, static segments first, anything else "unmatched"', () => {
  const label = routeLabeler(() => [
    { method: 'GET', path: '/:index/_doc/:id' },
    { method: 'GET', path: '/:index/_search' },
    { method: 'GET', path: '/_cat/indices' },
    { method: 'GET', path: '/:index/:x' },
    { method: 'GET', path: '/_plugins/_setup/sessions/:id' },
  ])
  expect(label('GET', '/logs/_doc/42')).toBe('/:index/_doc/:id')
  expect(label('GET', '/_cat/indices')).toBe('/_cat/indices')
  expect(label('GET', '/logs/_search/')).toBe('/:index/_search')
  expect(label('GET', '/_plugins/_setup/sessions/abc')).toBe('/_plugins/_setup/sessions/:id')
  expect(label('GET', '/a/b/c/d')).toBe('unmatched')
})

// Shared builders for the Engine tests: a recording logger and resources shaped as reference 4.2.2.
import { afterAll, afterEach } from 'bun:test'
import type { EngineLog, FullPolicy } from '../../../src/content/engine'
import { startEngineServer, type EngineServer } from '../../fixtures/engine/server'

/**
 * One Engine test server for a test file, put back after each test: healed, listening again
 * after a vanish, no tester sessions, no recorded requests.
 */
export function useEngineServer(): EngineServer {
  const engine = startEngineServer()
  afterAll(() => engine.stop())
  afterEach(() => {
    engine.heal()
    engine.restart()
    engine.sessions.clear()
    engine.requests.length = 0
  })
  return engine
}

export interface LogLine {
  level: keyof EngineLog
  message: string
  fields?: Record<string, unknown>
}

export function recordingLog(): EngineLog & { lines: LogLine[] } {
  const lines: LogLine[] = []
  const at = (level: keyof EngineLog) => (message: string, fields?: Record<string, unknown>) => void lines.push({ level, message, fields })
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}

export function decoder(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'd-1',
    name: 'decoder/app-access/0',
    enabled: true,
    metadata: { title: 'App access', author: 'ACME', date: '2026-05-04T10:11:12Z', modified: '2026-05-04T10:11:12Z' },
    check: [{ 'event.original': 'exists()' }],
    'parse|event.original': ['<source.ip> - <user.name> [<_when>] "<http.request.method> <url.path>" <http.response.status_code>'],
    normalize: [{ map: [{ 'event.kind': 'event' }, { 'event.category': ['web'] }, { 'event.action': '$http.request.method' }] }],
    ...overrides,
  }
}

export function integration(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'i-1',
    metadata: { title: 'app', author: 'ACME' },
    category: 'applications',
    enabled: true,
    decoders: ['d-1'],
    rules: [],
    kvdbs: [],
    ...overrides,
  }
}

export function fullPolicy(overrides: Partial<FullPolicy['policy']> = {}, resources: Partial<FullPolicy['resources']> = {}): FullPolicy {
  return {
    policy: {
      id: 'p-1',
      metadata: { title: 'Standard' },
      root_decoder: null,
      integrations: ['i-1'],
      filters: [],
      enrichments: [],
      enabled: true,
      index_unclassified_events: false,
      index_discarded_events: false,
      ...overrides,
    },
    resources: { integrations: [integration()], kvdbs: [], decoders: [decoder()], filters: [], ...resources },
  }
}

export const accessLine = '10.0.0.7 - alice [04/May/2026:10:11:12] "GET /login" 200'

// End-to-end: the compiled binary (with the Engine test server behind the Content Manager) takes
// Sigma YAML through the rules API — two base rules and the specification's "failed logins
// followed by a successful login" correlation chain — a user detector holding the outer
// correlation, events through the index API, and answers a correlation finding through the
// findings API once the detector's monitor has run.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startEngineServer, type EngineServer } from '../fixtures/engine/server'
import { spawnBinary, type SpawnedServer, requireBinary } from '../helpers/spawn-binary'
import { customRulesDetector, draftRules, pluginCaller } from './detection-client'
import { specLogins, specRules } from '../ruleset/correlation/spec-example'
import { EVENTS, SA } from '../helpers/calls'
import { waitFor } from '../helpers/wait'

const T0 = Date.UTC(2026, 8, 10, 12, 0, 0)

let engine: EngineServer
let server: SpawnedServer
const call = pluginCaller(() => server)

beforeAll(async () => {
  requireBinary()
  engine = startEngineServer()
  server = await spawnBinary({ env: { SVC_SETTING_plugins__content_manager__engine__socket_path: engine.socketPath } })
})
afterAll(async () => {
  await server?.stop()
  await engine?.stop()
})

describe('Sigma correlation through the binary', () => {
  test(
    'rules API -> detector -> index API -> findings API',
    async () => {
      // A draft integration gives the rules their log type.
      const ids = await draftRules(call, 'e2elogs', specRules('e2elogs'))
      const chainId = ids[3]
      const detector = await call('POST', `${SA}/detectors`, customRulesDetector('e2e-correlation', 'e2elogs', EVENTS, [chainId]))
      expect(detector.status).toBe(201)

      const events = specLogins(T0)
      const lines = events.flatMap((e) => [JSON.stringify({ create: {} }), JSON.stringify(e)]).join('\n') + '\n'
      const bulk = await fetch(`${server.url}/${EVENTS}/_bulk?refresh=true`, {
        method: 'POST',
        headers: { authorization: server.auth, 'content-type': 'application/x-ndjson' },
        body: lines,
      })
      expect(((await bulk.json()) as any).errors).toBe(false)

      // The detector would read them on its one-minute schedule; the monitor's execute API runs it
      // now, as an operator would (the schedule itself is the scheduler's tests' business).
      const execute = await call('POST', `/_plugins/_alerting/monitors/${detector.body.detector.monitor_id[0]}/_execute`)
      expect(execute.status).toBe(200)
      let findings: any[] = []
      await waitFor(
        async () => {
          const r = await call('GET', `${SA}/findings/_search?detector_id=${detector.body._id}&size=100`)
          findings = r.body.findings ?? []
          return findings.some((f: any) => f.queries[0].id === chainId)
        },
        { timeoutMs: 150_000, intervalMs: 2000, what: 'the chain finding' },
      ).catch(() => undefined) // the assertions below say what is missing
      const chain = findings.filter((f) => f.queries[0].id === chainId)
      // What the node said, for a failure's reader (the schedule, the thread, the windows).
      if (chain.length !== 1) console.error(server.output.slice(-60).join('\n'))
      expect(chain).toHaveLength(1)
      const doc = JSON.parse(chain[0].document_list[0].document)
      expect(doc.svc.correlation.group).toEqual({ 'user.name': 'alice' })
      expect(doc.svc.correlation.rule.type).toBe('temporal_ordered')
      expect(doc.svc.correlation.window.end).toBe(events[3]['@timestamp'])
      // Only the correlation the detector holds writes findings: its base rules and the inner
      // event_count are parts of it (generate: false), and bob failed only twice.
      expect(findings.map((f) => f.queries[0].id)).toEqual([chainId])
      // The executable's evaluator thread (an entry point of its own) started and answered the rule set.
      expect(server.output.some((l) => l.includes('detection evaluator thread started'))).toBe(true)
    },
    { timeout: 200_000 },
  )
})

// End to end: the compiled binary killed (kill -9) while a detector run holds its lease. The lease
// stays in the embedded store, as a killed run leaves it (here written as the run writes it, so
// the kill cannot miss the run). The restarted node runs the detector at once (monitor _execute)
// and writes the finding, instead of waiting out the lease's stale age (15 minutes).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startEngineServer, type EngineServer } from '../fixtures/engine/server'
import { spawnBinary, type SpawnedServer, requireBinary } from '../helpers/spawn-binary'
import { customRulesDetector, draftRules, pluginCaller } from './detection-client'
import { EVENTS, SA } from '../helpers/calls'
import { actionRule } from '../helpers/sigma-rules'

const RULE = actionRule({ title: 'Killed run', name: 'killed_run', product: 'killlogs', action: 'after_restart' })

let engine: EngineServer
let node: SpawnedServer | undefined
const dataDir = mkdtempSync(join(tmpdir(), 'svc-detector-kill-'))
const start = () => spawnBinary({ dataDir, env: { SVC_SETTING_plugins__content_manager__engine__socket_path: engine.socketPath } })
const call = pluginCaller(() => node!)

beforeAll(async () => {
  requireBinary()
  engine = startEngineServer()
  node = await start()
})
afterAll(async () => {
  await node?.stop('SIGKILL')
  await engine?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

test('a detector whose run was killed runs again as soon as the node is back', async () => {
  const [rule] = await draftRules(call, 'killlogs', [RULE])
  const detector = await call('POST', `${SA}/detectors`, customRulesDetector('e2e-kill', 'killlogs', EVENTS, [rule]))
  expect(detector.status).toBe(201)
  const execute = `/_plugins/_alerting/monitors/${detector.body.detector.monitor_id[0]}/_execute`

  // The run's lease, as a run holds it when the process is killed.
  const lease = await call('PUT', `/.platform-sap-detectors-locks/_doc/run-${detector.body._id}?refresh=true`, { acquired_at: Date.now() })
  expect(lease.status).toBe(201)
  expect((await call('POST', execute)).body.error).toContain('is being run by another node')
  expect(await node!.stop('SIGKILL')).not.toBe(0)

  node = await start()
  const bulk = await fetch(`${node.url}/${EVENTS}/_bulk?refresh=true`, {
    method: 'POST',
    headers: { authorization: node.auth, 'content-type': 'application/x-ndjson' },
    body:
      [{ event: { action: 'after_restart' } }, { event: { action: 'other' } }]
        .flatMap((e) => [JSON.stringify({ create: {} }), JSON.stringify({ '@timestamp': new Date().toISOString(), ...e })])
        .join('\n') + '\n',
  })
  expect(((await bulk.json()) as any).errors).toBe(false)
  const run = await call('POST', execute)
  expect(run.status).toBe(200)
  expect(run.body.error).toBeNull()
  expect(Object.values(run.body.input_results.results[0]).flat()).toHaveLength(1)
  const findings = await call('GET', `${SA}/findings/_search?detector_id=${detector.body._id}`)
  expect(findings.body.findings).toHaveLength(1)
  expect(node.output.some((l) => l.includes('detector run lease taken over'))).toBe(true)
}, 60_000)

// Correlation alerts over real HTTP (reference 1.7): a detector trigger that selects a Sigma
// correlation rule raises one correlation alert per firing, with its notification; the list
// filters by rule, acknowledging sets ACKNOWLEDGED whatever the state; unknown ids are a 404.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startReceiver, type Receiver } from '../fixtures/webhook/receiver'
import { actionRule, eventCountRule } from '../helpers/sigma-rules'
import {
  type AlertingServer,
  detectorWith,
  eventually,
  linuxRules,
  postRule,
  SA,
  startAlertingServer,
  webhook,
} from '../notifications/harness'

const FAILED = actionRule({ title: 'Failed login', name: 'failed_login_ca', action: 'login_failed' })
const BURST = eventCountRule({ title: 'Login failure burst', name: 'login_burst', rules: ['failed_login_ca'], threshold: 3 })

let s: AlertingServer
let receiver: Receiver

beforeAll(async () => {
  s = await startAlertingServer()
  receiver = startReceiver()
  await linuxRules(s, [])
})
afterAll(async () => {
  await s.stop()
  await receiver.stop()
})

test('a correlation firing selected by a trigger raises a correlation alert and notifies', async () => {
  await postRule(s, FAILED)
  const burst = await postRule(s, BURST)
  const channel = await webhook(s, `${receiver.url}/burst`)
  const d = await detectorWith(
    s,
    [burst],
    [
      {
        id: 'burst',
        name: 'burst trigger',
        severity: '1',
        ids: [burst],
        detection_types: ['rules'],
        actions: [
          {
            id: 'a',
            name: 'a',
            destination_id: channel,
            message_template: '{{ctx.correlationRuleName}}: {{ctx.correlatedFindingIds.length}} linked',
          },
        ],
      },
    ],
    'correlating',
  )
  const login = (user: string) => ({ event: { action: 'login_failed' }, user: { name: user } })
  await s.index([login('alice'), login('alice'), login('bob'), login('alice')])
  expect((await s.run(d)).status).toBe(200)

  const list = await s.request('GET', `${SA}/correlationAlerts?correlation_rule_id=${burst}`)
  expect(list.status).toBe(200)
  expect(list.body.total_alerts).toBe(1)
  const [alert] = list.body.correlationAlerts
  expect(alert).toMatchObject({
    correlation_rule_id: burst,
    correlation_rule_name: 'Login failure burst',
    trigger_name: 'burst trigger',
    severity: '1',
    state: 'ACTIVE',
    acknowledged_time: null,
  })
  expect(Date.parse(alert.end_time) - Date.parse(alert.start_time)).toBe(600_000)
  expect((await s.request('GET', `${SA}/correlationAlerts?correlation_rule_id=other`)).body.total_alerts).toBe(0)

  const got = await eventually(async () => receiver.received.find((r) => r.path === '/burst'), 5000, 'correlation notification')
  expect(got.body).toStartWith('Login failure burst: ')
  expect(got.key).toBe(`${alert.id}:a`)

  // Re-running over no new event raises nothing again.
  await s.run(d)
  expect((await s.request('GET', `${SA}/correlationAlerts`)).body.total_alerts).toBe(1)

  const ack = await s.request('POST', `${SA}/_acknowledge/correlationAlerts`, { body: { alertIds: [alert.id] } })
  expect(ack.status).toBe(200)
  expect(ack.body.acknowledged.map((a: any) => [a.id, a.state])).toEqual([[alert.id, 'ACKNOWLEDGED']])
  expect(ack.body.failed).toEqual([])
  expect((await s.request('POST', `${SA}/_acknowledge/correlationAlerts`, { body: { alertIds: ['nope'] } })).status).toBe(404)
  expect((await s.request('POST', `${SA}/_acknowledge/correlationAlerts`, { body: { alertIds: [] } })).status).toBe(400)
  expect((await s.request('GET', `${SA}/correlationAlerts`, { user: 'nobody' })).status).toBe(403)
})

// Detector triggers raising alerts over real HTTP: the trigger condition (OR within a list, AND
// across lists, every tag), one alert per (trigger, document), GET alerts with the peer's
// parameters, acknowledge, DELETED on detector or trigger removal, and the 4xx answers to bad input.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rollOver } from '../../src/ruleset/alerts/indices'
import { faultyStore, type FaultyStore } from '../fixtures/faulty-store'
import { startReceiver, type Receiver } from '../fixtures/webhook/receiver'
import {
  type AlertingServer,
  detectorWith,
  eventually,
  linuxRules,
  NOTIFY,
  SA,
  startAlertingServer,
  webhook,
} from '../notifications/harness'

let s: AlertingServer
let receiver: Receiver
let channel: string

beforeAll(async () => {
  s = await startAlertingServer()
  receiver = startReceiver()
  await linuxRules(s, [
    { action: 'login_failed', level: 'high', tags: ['attack.t1110'] },
    { action: 'sudo', level: 'low', tags: ['attack.t1548'] },
    { action: 'ssh', level: 'medium', tags: ['attack.t1021', 'attack.lateral'] },
  ])
  channel = await webhook(s, `${receiver.url}/hook`)
})
afterAll(async () => {
  await s.stop()
  await receiver.stop()
})

const alertsOf = async (detector: string, query = '') => (await s.request('GET', `${SA}/alerts?detector_id=${detector}${query}`)).body

/** A detector on `r-<action>` with one trigger, run over one matching event; answers it and its one alert, acknowledged. */
async function acknowledgedAlert(action: string, name: string) {
  const rule = `r-${action}`
  const d = await detectorWith(s, [rule], [{ id: 't', name, severity: '1', ids: [rule], detection_types: ['rules'], actions: [] }], name)
  await s.index([{ event: { action } }])
  await s.run(d)
  const [a] = (await alertsOf(d)).alerts
  await s.request('POST', `${SA}/detectors/${d}/_acknowledge/alerts`, { body: { alerts: [a.id] } })
  return { d, a }
}

describe('trigger conditions', () => {
  test('one alert per (trigger, matched document); lists AND together, values OR; every tag counts', async () => {
    const d = await detectorWith(
      s,
      ['r-login_failed', 'r-sudo', 'r-ssh'],
      [
        { id: 'by-level', name: 'high only', severity: '1', sev_levels: ['high'], detection_types: ['rules'], actions: [] },
        { id: 'by-ids', name: 'ids', severity: '2', ids: ['r-sudo', 'r-ssh'], detection_types: ['rules'], actions: [] },
        // Second tag of the list: the peer would read only the first one.
        { id: 'by-tags', name: 'tags', severity: '3', tags: ['attack.t9999', 'attack.lateral'], detection_types: ['rules'], actions: [] },
        { id: 'and', name: 'and', severity: '4', types: ['linux'], sev_levels: ['low'], detection_types: ['rules'], actions: [] },
        { id: 'none', name: 'nothing', severity: '5', ids: ['r-sudo'], sev_levels: ['high'], detection_types: ['rules'], actions: [] },
      ],
      'conditions',
    )
    const [failed, sudo, ssh] = await s.index([
      { event: { action: 'login_failed' } },
      { event: { action: 'sudo' } },
      { event: { action: 'ssh' } },
    ])
    await s.index([{ event: { action: 'unrelated' } }])
    expect((await s.run(d)).status).toBe(200)
    const { alerts, total_alerts } = await alertsOf(d, '&size=100')
    const byTrigger = (t: string) =>
      alerts
        .filter((a: any) => a.trigger_id === t)
        .map((a: any) => a.related_doc_ids[0])
        .sort()
    const doc = (x: { _id: string; _index: string }) => `${x._id}|${x._index}`
    expect(byTrigger('by-level')).toEqual([doc(failed)])
    expect(byTrigger('by-ids')).toEqual([doc(sudo), doc(ssh)].sort())
    expect(byTrigger('by-tags')).toEqual([doc(ssh)])
    expect(byTrigger('and')).toEqual([doc(sudo)])
    expect(byTrigger('none')).toEqual([])
    expect(total_alerts).toBe(5)
    const a = alerts.find((x: any) => x.trigger_id === 'by-level')
    expect(a).toMatchObject({
      detector_id: d,
      trigger_name: 'high only',
      severity: '1',
      state: 'ACTIVE',
      error_message: null,
      end_time: null,
      acknowledged_time: null,
    })
    expect(a.finding_ids).toHaveLength(1)
    expect(new Date(a.start_time).toISOString()).toBe(a.start_time)

    // A second run over no new event raises nothing again.
    await s.run(d)
    expect((await alertsOf(d, '&size=100')).total_alerts).toBe(5)
  })
})

describe('GET alerts', () => {
  test('parameters: detector id or type required; severity, state, sort, paging, search string', async () => {
    const d = await detectorWith(
      s,
      ['r-sudo'],
      [
        { id: 't-a', name: 'alpha', severity: '2', ids: ['r-sudo'], detection_types: ['rules'], actions: [] },
        { id: 't-b', name: 'beta', severity: '3', ids: ['r-sudo'], detection_types: ['rules'], actions: [] },
      ],
      'params',
    )
    await s.index([{ event: { action: 'sudo' } }, { event: { action: 'sudo' } }])
    await s.run(d)
    const missing = await s.request('GET', `${SA}/alerts`)
    expect(missing.status).toBe(400)
    expect(missing.body).toEqual({ message: 'At least one of detector type or detector id needs to be passed', status: 400 })
    expect((await s.request('GET', `${SA}/alerts?detector_id=nope`)).status).toBe(404)
    expect((await s.request('GET', `${SA}/alerts?detectorType=no-such-type`)).status).toBe(404)
    expect((await alertsOf(d)).total_alerts).toBe(4)
    expect((await alertsOf(d, '&severityLevel=3')).alerts.map((a: any) => a.trigger_name)).toEqual(['beta', 'beta'])
    expect((await alertsOf(d, '&alertState=ACKNOWLEDGED')).total_alerts).toBe(0)
    const page = await alertsOf(d, '&size=1&startIndex=1&sortString=severity&sortOrder=desc')
    expect(page.alerts).toHaveLength(1)
    expect(page.total_alerts).toBe(4)
    expect((await alertsOf(d, '&searchString=alpha')).alerts.every((a: any) => a.trigger_name === 'alpha')).toBe(true)
    expect((await alertsOf(d, '&sortString=trigger_name&sortOrder=desc')).alerts.map((a: any) => a.trigger_name)).toEqual([
      'beta',
      'beta',
      'alpha',
      'alpha',
    ])
    expect((await s.request('GET', `${SA}/alerts?detector_id=${d}&sortString=nope`)).status).toBe(400)
    expect((await alertsOf(d, `&startTime=${Date.now() + 60_000}`)).total_alerts).toBe(4)
    expect((await alertsOf(d, `&startTime=${Date.now() + 60_000}&endTime=${Date.now() + 120_000}`)).total_alerts).toBe(0)
    const byType = await s.request('GET', `${SA}/alerts?detectorType=linux&size=100`)
    expect(byType.body.alerts.some((a: any) => a.detector_id === d)).toBe(true)
    expect((await s.request('GET', `${SA}/alerts?detector_id=${d}&size=abc`)).status).toBe(400)
  })
})

describe('acknowledge', () => {
  test('ACTIVE alerts are acknowledged once; other ids are missing; no id of this detector is a 404', async () => {
    const d = await detectorWith(
      s,
      ['r-sudo'],
      [{ id: 't', name: 'ack', severity: '1', ids: ['r-sudo'], detection_types: ['rules'], actions: [] }],
      'ack',
    )
    const other = await detectorWith(
      s,
      ['r-sudo'],
      [{ id: 't', name: 'other', severity: '1', ids: ['r-sudo'], detection_types: ['rules'], actions: [] }],
      'ack-other',
    )
    await s.index([{ event: { action: 'sudo' } }, { event: { action: 'sudo' } }])
    await s.run(d)
    await s.run(other)
    const [a1, a2] = (await alertsOf(d)).alerts.map((a: any) => a.id)
    const foreign = (await alertsOf(other)).alerts[0].id
    const ack = await s.request('POST', `${SA}/detectors/${d}/_acknowledge/alerts`, { body: { alerts: [a1, foreign, 'nope'] } })
    expect(ack.status).toBe(200)
    expect(ack.body.acknowledged.map((a: any) => [a.id, a.state])).toEqual([[a1, 'ACKNOWLEDGED']])
    expect(ack.body.acknowledged[0].acknowledged_time).not.toBeNull()
    expect(ack.body.failed).toEqual([])
    expect(ack.body.missing.sort()).toEqual([foreign, 'nope'].sort())
    const again = await s.request('POST', `${SA}/detectors/${d}/_acknowledge/alerts`, { body: { alerts: [a1, a2] } })
    expect(again.body.failed.map((a: any) => a.id)).toEqual([a1])
    expect(again.body.acknowledged.map((a: any) => a.id)).toEqual([a2])
    expect((await alertsOf(d, '&alertState=ACKNOWLEDGED')).total_alerts).toBe(2)
    // The other detector's alert is untouched.
    expect((await alertsOf(other)).alerts[0].state).toBe('ACTIVE')

    const onlyForeign = await s.request('POST', `${SA}/detectors/${d}/_acknowledge/alerts`, { body: { alerts: [foreign] } })
    expect(onlyForeign.status).toBe(404)
    expect(onlyForeign.body.status).toBe(404)
    expect(onlyForeign.body.message).toContain(d)
    const empty = await s.request('POST', `${SA}/detectors/${d}/_acknowledge/alerts`, { body: { alerts: [] } })
    expect(empty.body).toEqual({ message: 'alert ids list cannot be empty', status: 400 })
    expect((await s.request('POST', `${SA}/detectors/${d}/_acknowledge/alerts`, { body: { alerts: 'x' } })).status).toBe(400)
    expect((await s.request('POST', `${SA}/detectors/nope/_acknowledge/alerts`, { body: { alerts: [a1] } })).status).toBe(404)
  })

  test('with alert history on, an acknowledged alert moves to the history index', async () => {
    await s.deps.settings.update({ persistent: { 'plugins.security_analytics.alert_history_enabled': true } })
    try {
      const { d, a } = await acknowledgedAlert('sudo', 'hist')
      const where = await s.deps.store.search({
        index: '.opensearch-sap-linux-alerts*',
        expand_wildcards: 'all',
        body: { query: { ids: { values: [a.id] } } },
      })
      expect(where.hits.hits.map((h) => h._index)).toEqual([
        expect.stringMatching(/^\.opensearch-sap-linux-alerts-history-\d{4}\.\d{2}\.\d{2}-1$/),
      ])
      expect((await alertsOf(d)).alerts.map((x: any) => x.state)).toEqual(['ACKNOWLEDGED'])
    } finally {
      await s.deps.settings.update({ persistent: { 'plugins.security_analytics.alert_history_enabled': null } })
    }
  })
})

describe('retired alerts', () => {
  test('a removed trigger and a deleted detector leave their alerts DELETED', async () => {
    const triggers = [
      { id: 'keep', name: 'keep', severity: '1', ids: ['r-sudo'], detection_types: ['rules'], actions: [] },
      { id: 'drop', name: 'drop', severity: '1', ids: ['r-sudo'], detection_types: ['rules'], actions: [] },
    ]
    const d = await detectorWith(s, ['r-sudo'], triggers, 'retire')
    await s.index([{ event: { action: 'sudo' } }])
    await s.run(d)
    const body = (await s.request('GET', `${SA}/detectors/${d}`)).body.detector
    expect((await s.request('PUT', `${SA}/detectors/${d}`, { body: { ...body, triggers: [triggers[0]] } })).status).toBe(200)
    const states = async () =>
      Object.fromEntries((await alertsOf(d)).alerts.map((a: any) => [a.trigger_id, a.state])) as Record<string, string>
    await eventually(async () => ((await states()).drop === 'DELETED' ? true : undefined), 5000, 'dropped trigger alert DELETED')
    expect((await states()).keep).toBe('ACTIVE')
    const all = await s.deps.store.search({
      index: '.opensearch-sap-linux-alerts*',
      expand_wildcards: 'all',
      body: { size: 100, query: { term: { detector_id: d } } },
    })
    expect((await s.request('DELETE', `${SA}/detectors/${d}`)).status).toBe(200)
    await eventually(
      async () => {
        const r = await s.deps.store.search({
          index: '.opensearch-sap-linux-alerts*',
          expand_wildcards: 'all',
          body: { size: 100, query: { term: { detector_id: d } } },
        })
        return r.hits.hits.every((h: any) => h._source.state === 'DELETED') ? true : undefined
      },
      5000,
      'every alert DELETED',
    )
    expect(all.hits.hits).toHaveLength(2)
  })
})

describe('bad input is a 4xx in the plugin envelope', () => {
  const trigger = (action: Record<string, unknown>) => [
    {
      id: 't',
      name: 'bad',
      severity: '1',
      ids: ['r-sudo'],
      detection_types: ['rules'],
      actions: [{ name: 'a', message_template: { source: 'x' }, ...action }],
    },
  ]
  const create = (triggers: unknown[]) =>
    s.request('POST', `${SA}/detectors`, {
      body: {
        type: 'detector',
        name: 'bad',
        detector_type: 'linux',
        enabled: false,
        schedule: { period: { interval: 1, unit: 'MINUTES' } },
        inputs: [{ detector_input: { indices: ['svc-events-v5-security'], custom_rules: [{ id: 'r-sudo' }], pre_packaged_rules: [] } }],
        triggers,
      },
    })

  test('unknown destination, bad template, unknown action key, throttle without value', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ destination_id: 'no-such-channel' }, 'notification channel [no-such-channel] not found'],
      [{ destination_id: channel, message_template: { source: 'Hello {{#ctx.alerts}}' } }, 'Invalid message_template of action [a]'],
      [{ destination_id: channel, message_template: { source: 'x', lang: 'painless' } }, 'lang must be mustache'],
      [{ destination_id: channel, subject_template: '{{/x}}' }, 'Invalid subject_template of action [a]'],
      [{ destination_id: channel, colour: 'red' }, 'Invalid action of trigger [bad]'],
      [{ destination_id: channel, throttle_enabled: true }, 'throttle_enabled needs a throttle'],
      [{ destination_id: channel, throttle_enabled: true, throttle: { value: 2000, unit: 'MINUTES' } }, 'throttle cannot exceed'],
      [{ destination_id: channel, message_template: '  ' }, 'message_template is empty'],
    ]
    for (const [action, message] of cases) {
      const r = await create(trigger(action))
      expect({ status: r.status, has: r.body.message?.includes(message) }).toEqual({ status: 400, has: true })
      expect(r.body.status).toBe(400)
    }
    expect((await create(trigger({ destination_id: channel }))).status).toBe(201)
  })

  test('alerts and acknowledgements need their actions; channel configs theirs', async () => {
    expect((await s.request('GET', `${SA}/alerts?detectorType=linux`, { user: 'nobody' })).status).toBe(403)
    expect((await s.request('POST', `${SA}/detectors/x/_acknowledge/alerts`, { user: 'nobody', body: { alerts: ['a'] } })).status).toBe(403)
    expect((await s.request('GET', `${NOTIFY}/configs`, { user: 'nobody' })).status).toBe(403)
  })
})

describe('filter_by_backend_roles', () => {
  test("alerts of another backend role's detector are neither listed nor acknowledged", async () => {
    await s.deps.settings.update({ persistent: { 'plugins.security_analytics.filter_by_backend_roles': true } })
    try {
      const create = (user: string, name: string) =>
        detectorWith(
          s,
          ['r-sudo'],
          [{ id: 't', name: 'mine', severity: '1', ids: ['r-sudo'], detection_types: ['rules'], actions: [] }],
          name,
          user,
        )
      const blue = await create('blue', 'blue-det')
      const red = await create('red', 'red-det')
      await s.index([{ event: { action: 'sudo' } }])
      await s.run(blue)
      await s.run(red)
      const redAlert = (await alertsOf(red)).alerts[0].id
      expect((await s.request('GET', `${SA}/alerts?detector_id=${red}`, { user: 'blue' })).status).toBe(403)
      const byType = await s.request('GET', `${SA}/alerts?detectorType=linux&size=100`, { user: 'blue' })
      expect(byType.status).toBe(200)
      expect(new Set(byType.body.alerts.map((a: any) => a.detector_id))).toEqual(new Set([blue]))
      const ack = await s.request('POST', `${SA}/detectors/${red}/_acknowledge/alerts`, { user: 'blue', body: { alerts: [redAlert] } })
      expect(ack.status).toBe(403)
      expect((await alertsOf(red)).alerts[0].state).toBe('ACTIVE')
    } finally {
      await s.deps.settings.update({ persistent: { 'plugins.security_analytics.filter_by_backend_roles': null } })
    }
  })
})

describe('history rollover and retention', () => {
  test('a full history write index rolls over; history past its retention period is deleted', async () => {
    const set = (values: Record<string, unknown>) => s.deps.settings.update({ persistent: values })
    await set({ 'plugins.security_analytics.alert_history_enabled': true, 'plugins.security_analytics.alert_history_max_docs': 1 })
    try {
      const { d, a } = await acknowledgedAlert('ssh', 'roll')
      const history = async () =>
        Object.keys(await s.deps.store.getIndex({ index: '.opensearch-sap-linux-alerts-history-*', expand_wildcards: 'all' })).sort()
      const before = await history()
      await rollOver(s.deps.store, await s.deps.settings.snapshot(), Date.now(), s.deps.log)
      const after = await history()
      expect(after).toHaveLength(before.length + 1)
      const aliases = await s.deps.store.getAlias({ name: '.opensearch-sap-linux-alerts-history', expand_wildcards: 'all' })
      const writer = Object.entries(aliases).find(
        ([, v]) => (v.aliases['.opensearch-sap-linux-alerts-history'] as any)?.is_write_index === true,
      )?.[0]
      expect(writer).toBe(after.find((i) => !before.includes(i)))
      // The acknowledged alert is still listed from the rolled index.
      expect((await alertsOf(d)).alerts.map((x: any) => x.id)).toEqual([a.id])

      // Retention 0s: every history index but the one taking writes goes.
      await set({
        'plugins.security_analytics.alert_history_retention_period': '0s',
        'plugins.security_analytics.alert_history_max_docs': 1000,
      })
      await Bun.sleep(5)
      await rollOver(s.deps.store, await s.deps.settings.snapshot(), Date.now(), s.deps.log)
      expect(await history()).toEqual([writer!])
    } finally {
      await set({
        'plugins.security_analytics.alert_history_enabled': null,
        'plugins.security_analytics.alert_history_max_docs': null,
        'plugins.security_analytics.alert_history_retention_period': null,
      })
    }
  })
})

describe('a run whose alerts cannot be written', () => {
  test('stops before its checkpoint with an ERROR alert; the next run raises them, none lost and none twice', async () => {
    let faulty!: FaultyStore
    const other = await startAlertingServer({}, { wrapStore: (inner) => (faulty = faultyStore(inner)) })
    try {
      await linuxRules(other, [{ action: 'sudo', level: 'high' }])
      const d = await detectorWith(
        other,
        ['r-sudo'],
        [{ id: 't', name: 'crash', severity: '1', ids: ['r-sudo'], detection_types: ['rules'], actions: [] }],
        'crash',
      )
      await other.index([{ event: { action: 'sudo' } }, { event: { action: 'sudo' } }])
      // The findings are written, then the alerts' bulk is refused as a whole.
      faulty.arm({ failAt: [1], match: (m) => m.index.startsWith('.opensearch-sap-'), bulk: 'request' })
      const failed = await other.run(d)
      faulty.disarm()
      expect(failed.body.error).toContain('injected fault')
      // The failed run is the detector's one ERROR alert.
      const [error] = (await other.request('GET', `${SA}/alerts?detector_id=${d}`)).body.alerts
      expect(error).toMatchObject({ state: 'ERROR', finding_ids: [], end_time: null })
      expect(error.error_message).toContain('injected fault')
      expect(error.alert_history).toHaveLength(1)
      expect((await other.run(d)).body.error).toBeNull()
      // The next run succeeded: the ERROR alert is gone (history is off), the two alerts are there.
      const { alerts } = (await other.request('GET', `${SA}/alerts?detector_id=${d}`)).body
      expect(alerts.map((a: any) => a.state)).toEqual(['ACTIVE', 'ACTIVE'])
      expect(new Set(alerts.map((a: any) => a.related_doc_ids[0])).size).toBe(2)
      await other.run(d)
      expect((await other.request('GET', `${SA}/alerts?detector_id=${d}`)).body.total_alerts).toBe(2)
    } finally {
      await other.stop()
    }
  })
})

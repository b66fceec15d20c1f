// The detectors REST API over real HTTP: create/get/update/delete/search, the reference's
// validation order and messages, max_detectors / max_rules_per_detector, standard-detector
// guards, set_enabled and filter_by_backend_roles.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ctiRule, detectorBody, EVENTS, LINUX, type RulesetServer, startRulesetServer } from './harness'

const BASE = '/_plugins/_security_analytics'
const SA = 'plugins.security_analytics.'

let s: RulesetServer
/** The Content Manager's detector of the Linux integration (enabled, one rule). */
const linuxContentDetector = () =>
  s.ruleset.sync.upsertDetector({ integrationId: LINUX.id, logType: 'linux', category: 'security', ruleIds: ['std-0'], enabled: true })
const custom: string[] = []

beforeAll(async () => {
  s = await startRulesetServer({ linux: true })
  for (let i = 0; i < 4; i++) {
    const id = `std-${i}`
    await s.ruleset.sync.upsertRule('standard', ctiRule(id, { sel: { 'event.action': `a${i}` }, condition: 'sel' }), LINUX.id, false)
    await s.ruleset.sync.upsertRule('custom', ctiRule(`cus-${i}`, { sel: { 'event.action': `c${i}` }, condition: 'sel' }), LINUX.id, false)
    custom.push(`cus-${i}`)
  }
  await s.index([{ '@timestamp': '2026-09-10T12:00:00Z', event: { action: 'x' } }])
})
afterAll(async () => {
  await s.stop()
})

async function wipeDetectors() {
  const r = await s.request('POST', `${BASE}/detectors/_search`, { body: { size: 100 } })
  for (const h of r.body.hits.hits) await s.ruleset.sync.deleteDetector(h._id)
}

describe('create, get, update, delete, search', () => {
  test('create answers 201 with Location and the detector; get returns the same', async () => {
    const r = await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ custom: custom.slice(0, 2) }) })
    expect(r.status).toBe(201)
    expect(r.headers.get('location')).toBe(`${BASE}/detectors/${r.body._id}`)
    expect(r.body._version).toBe(1)
    expect(r.body.detector).toMatchObject({
      name: 'linux-custom',
      detector_type: 'linux',
      enabled: true,
      threat_intel_enabled: false,
      triggers: [],
    })
    expect(r.body.detector.inputs[0].detector_input.custom_rules).toEqual([{ id: 'cus-0' }, { id: 'cus-1' }])
    expect(new Date(r.body.detector.last_update_time).toISOString()).toBe(r.body.detector.last_update_time)
    const g = await s.request('GET', `${BASE}/detectors/${r.body._id}`)
    expect(g.status).toBe(200)
    expect(g.body).toEqual(r.body)
  })

  test('update changes the detector and its version; delete removes it; a second delete is 404', async () => {
    const c = await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ custom: ['cus-0'] }) })
    const u = await s.request('PUT', `${BASE}/detectors/${c.body._id}`, {
      body: detectorBody({ name: 'renamed', custom: ['cus-1', 'cus-2'] }),
    })
    expect(u.status).toBe(200)
    expect(u.body._version).toBe(2)
    expect(u.body.detector.name).toBe('renamed')
    const d = await s.request('DELETE', `${BASE}/detectors/${c.body._id}`)
    expect(d.status).toBe(200)
    expect(d.body._id).toBe(c.body._id)
    const again = await s.request('DELETE', `${BASE}/detectors/${c.body._id}`)
    expect(again.status).toBe(404)
    expect(again.body).toEqual({ message: `Detector with ${c.body._id} is not found`, status: 404 })
  })

  test('search runs the body over the detectors index', async () => {
    await wipeDetectors()
    await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ name: 'alpha', custom: ['cus-0'] }) })
    await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ name: 'beta', custom: ['cus-0'], enabled: false }) })
    const r = await s.request('POST', `${BASE}/detectors/_search`, { body: { query: { term: { 'detector.enabled': false } } } })
    expect(r.status).toBe(200)
    expect(r.body.hits.hits.map((h: any) => h._source.detector.name)).toEqual(['beta'])
  })
})

describe('validation and limits', () => {
  test('malformed bodies are 400 naming the field', async () => {
    const r = await s.request('POST', `${BASE}/detectors`, {
      body: { ...detectorBody(), schedule: { period: { interval: 0, unit: 'MINUTES' } } },
    })
    expect(r.status).toBe(400)
    expect(r.body.message).toContain('schedule.period.interval')
    expect((await s.request('POST', `${BASE}/detectors`, { raw: '{nope' })).status).toBe(400)
  })

  test('trigger detection types', async () => {
    const none = await s.request('POST', `${BASE}/detectors`, {
      body: { ...detectorBody({ custom: ['cus-0'] }), triggers: [{ name: 't1', detection_types: [] }] },
    })
    expect(none.body).toEqual({ message: 'Trigger [t1] should mention at least one detection type but found none', status: 400 })
    const bad = await s.request('POST', `${BASE}/detectors`, {
      body: { ...detectorBody({ custom: ['cus-0'] }), triggers: [{ name: 't2', detection_types: ['rules', 'ml'] }] },
    })
    expect(bad.body).toEqual({ message: 'Trigger [t2] has unsupported detection type [ml]', status: 400 })
  })

  test('max_rules_per_detector on create and update', async () => {
    await s.setSetting(`${SA}max_rules_per_detector`, 2)
    try {
      const r = await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ custom: custom.slice(0, 3) }) })
      expect(r.body).toEqual({ message: 'Detector cannot have more than 2 rules, but found 3', status: 400 })
      const ok = await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ custom: custom.slice(0, 2) }) })
      expect(ok.status).toBe(201)
      const u = await s.request('PUT', `${BASE}/detectors/${ok.body._id}`, { body: detectorBody({ custom: custom.slice(0, 3) }) })
      expect(u.body).toEqual({ message: 'Detector cannot have more than 2 rules, but found 3', status: 400 })
      // The Content Manager is held to it too.
      await expect(
        s.ruleset.sync.upsertDetector({
          integrationId: 'int-x',
          logType: 'linux',
          category: 'security',
          ruleIds: ['std-0', 'std-1', 'std-2'],
          sources: [EVENTS],
        }),
      ).rejects.toThrow('Detector cannot have more than 2 rules, but found 3')
    } finally {
      await s.setSetting(`${SA}max_rules_per_detector`, 50)
    }
  })

  test('max_detectors counts user detectors only', async () => {
    await wipeDetectors()
    await s.setSetting(`${SA}max_detectors`, 2)
    try {
      // A Content Manager detector does not count and is never refused by the limit.
      await linuxContentDetector()
      for (let i = 0; i < 2; i++)
        expect((await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ custom: ['cus-0'] }) })).status).toBe(201)
      const r = await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ custom: ['cus-0'] }) })
      expect(r.body).toEqual({ message: 'This request would create more than the allowed detectors [2].', status: 400 })
      await s.ruleset.sync.upsertDetector({
        integrationId: 'int-other',
        logType: 'linux',
        category: 'security',
        ruleIds: ['std-1'],
        enabled: false,
      })
      const all = await s.request('POST', `${BASE}/detectors/_search`, { body: { size: 100 } })
      expect(all.body.hits.hits.length).toBe(4)
    } finally {
      await s.setSetting(`${SA}max_detectors`, 10)
      await wipeDetectors()
    }
  })

  test('source indices must be svc-events-v5, readable and existing', async () => {
    const wrong = await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ custom: ['cus-0'], indices: ['logs-x'] }) })
    expect(wrong.body).toEqual({ message: 'Threat detectors can only be created for `svc-events-v5` data sources.', status: 400 })
    const missing = await s.request('POST', `${BASE}/detectors`, {
      body: detectorBody({ custom: ['cus-0'], indices: ['svc-events-v5-nothere'] }),
    })
    expect(missing.body).toEqual({ message: 'Indices not found svc-events-v5-nothere', status: 404 })
    const blind = await s.request('POST', `${BASE}/detectors`, { user: 'noread', body: detectorBody({ custom: ['cus-0'] }) })
    expect(blind.body).toEqual({ message: `User doesn't have read permissions for one or more configured index ${EVENTS}`, status: 403 })
  })

  test('one rule space per detector; unknown rules are refused', async () => {
    const both = await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ custom: ['cus-0'], prePackaged: ['std-0'] }) })
    expect(both.body).toEqual({ message: 'Detector cannot have both prepackaged and custom rules. Use only one type.', status: 400 })
    const unknown = await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ custom: ['cus-0', 'nope'] }) })
    expect(unknown.status).toBe(404)
    expect(unknown.body.message).toContain('nope')
    // A standard-space rule is not a custom rule.
    const wrongSpace = await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ custom: ['std-0'] }) })
    expect(wrongSpace.status).toBe(404)
  })

  test('a caller without the detector action is refused before anything happens', async () => {
    const r = await s.request('POST', `${BASE}/detectors`, { user: 'nobody', body: detectorBody({ custom: ['cus-0'] }) })
    expect(r.status).toBe(403)
  })
})

describe('standard detectors', () => {
  test('users may only enable or disable them, and never delete them', async () => {
    await s.ruleset.sync.upsertDetector({
      integrationId: LINUX.id,
      logType: 'linux',
      category: 'security',
      ruleIds: ['std-0', 'std-1'],
      interval: 99999,
      enabled: false,
    })
    const g = await s.request('GET', `${BASE}/detectors/${LINUX.id}`)
    expect(g.body.detector).toMatchObject({
      name: 'linux',
      detector_type: 'linux',
      enabled: false,
      schedule: { period: { interval: 2, unit: 'MINUTES' } },
    })
    expect(g.body.detector.inputs[0].detector_input).toMatchObject({
      description: 'Detector for linux integration',
      indices: [EVENTS],
      pre_packaged_rules: [{ id: 'std-0' }, { id: 'std-1' }],
    })
    const { last_update_time: _a, enabled_time: _b, ...asGot } = g.body.detector
    const renamed = await s.request('PUT', `${BASE}/detectors/${LINUX.id}`, { body: { ...asGot, name: 'mine' } })
    expect(renamed.body).toEqual({
      message: 'Standard detectors cannot be modified by users. Only enabling or disabling is allowed.',
      status: 400,
    })
    const enabled = await s.request('PUT', `${BASE}/detectors/${LINUX.id}`, { body: { ...asGot, enabled: true } })
    expect(enabled.status).toBe(200)
    expect(enabled.body.detector.enabled).toBe(true)
    expect(enabled.body.detector.enabled_time).not.toBeNull()
    const del = await s.request('DELETE', `${BASE}/detectors/${LINUX.id}`)
    expect(del.body).toEqual({ message: 'Standard detectors cannot be deleted by users.', status: 400 })
    expect(await s.ruleset.sync.deleteDetector(LINUX.id)).toBe(true)
    expect(await s.ruleset.sync.deleteDetector(LINUX.id)).toBe(false)
  })

  test('set_enabled switches enabled only; unchanged state is a no-op; unknown detector is version -1', async () => {
    await linuxContentDetector()
    const before = (await s.request('GET', `${BASE}/detectors/${LINUX.id}`)).body
    const off = await s.ruleset.sync.setDetectorEnabled(LINUX.id, false, 'admin')
    expect(off).toMatchObject({ changed: true, _version: before._version + 1 })
    const same = await s.ruleset.sync.setDetectorEnabled(LINUX.id, false)
    expect(same).toMatchObject({ changed: false, _version: before._version + 1 })
    const after = (await s.request('GET', `${BASE}/detectors/${LINUX.id}`)).body.detector
    expect(after.enabled).toBe(false)
    expect(after.enabled_time).toBeNull()
    const { enabled: _e, enabled_time: _t, last_update_time: _l, ...rest } = after
    const { enabled: _e2, enabled_time: _t2, last_update_time: _l2, ...restBefore } = before.detector
    expect(rest).toEqual(restBefore)
    expect(await s.ruleset.sync.setDetectorEnabled('nope', true)).toEqual({ _id: 'nope', _version: -1, changed: false })
    await s.ruleset.sync.deleteDetector(LINUX.id)
  })
})

describe('filter_by_backend_roles', () => {
  test('off: everyone with the action sees every detector', async () => {
    await wipeDetectors()
    const blue = await s.request('POST', `${BASE}/detectors`, { user: 'blue', body: detectorBody({ custom: ['cus-0'] }) })
    expect((await s.request('GET', `${BASE}/detectors/${blue.body._id}`, { user: 'red' })).status).toBe(200)
  })

  test('on: creation needs a backend role; reads, searches, updates and deletes are limited to shared roles', async () => {
    await wipeDetectors()
    await s.setSetting(`${SA}filter_by_backend_roles`, true)
    try {
      const plain = await s.request('POST', `${BASE}/detectors`, { user: 'plain', body: detectorBody({ custom: ['cus-0'] }) })
      expect(plain.body).toEqual({ message: "User doesn't have backend roles configured. Contact administrator", status: 403 })
      const blue = await s.request('POST', `${BASE}/detectors`, {
        user: 'blue',
        body: detectorBody({ name: 'blue-one', custom: ['cus-0'] }),
      })
      expect(blue.status).toBe(201)
      const red = await s.request('POST', `${BASE}/detectors`, { user: 'red', body: detectorBody({ name: 'red-one', custom: ['cus-0'] }) })
      expect(red.status).toBe(201)
      // blue and red share `det`: give red a detector of its own by changing what is shared.
      expect((await s.request('GET', `${BASE}/detectors/${blue.body._id}`, { user: 'red' })).status).toBe(200)
      const names = async (user: string) =>
        (await s.request('POST', `${BASE}/detectors/_search`, { user, body: { size: 10 } })).body.hits.hits
          .map((h: any) => h._source.detector.name)
          .sort()
      expect(await names('blue')).toEqual(['blue-one', 'red-one'])
      // An all_access caller is never filtered; a detector created by admin carries admin's roles.
      const admins = await s.request('POST', `${BASE}/detectors`, {
        user: 'admin',
        body: detectorBody({ name: 'admin-one', custom: ['cus-0'] }),
      })
      expect(admins.status).toBe(201)
      expect(await names('admin')).toEqual(['admin-one', 'blue-one', 'red-one'])
      expect(await names('blue')).toEqual(['blue-one', 'red-one'])
      const denied = await s.request('GET', `${BASE}/detectors/${admins.body._id}`, { user: 'blue' })
      expect(denied.status).toBe(403)
      expect(
        (await s.request('PUT', `${BASE}/detectors/${admins.body._id}`, { user: 'blue', body: detectorBody({ custom: ['cus-0'] }) }))
          .status,
      ).toBe(403)
      expect((await s.request('DELETE', `${BASE}/detectors/${admins.body._id}`, { user: 'blue' })).status).toBe(403)
      expect((await s.request('GET', `${BASE}/detectors/${admins.body._id}`, { user: 'admin' })).status).toBe(200)
    } finally {
      await s.setSetting(`${SA}filter_by_backend_roles`, false)
    }
  })
})

/**
 * The six lifecycle policies of reference 1.5 in embedded mode, seen over HTTP through the ISM
 * API the embedded index API serves: present after the bootstrap, an operator's edit reverted
 * by the next start, and the retention job applying what the API shows.
 */
import { describe, expect, test } from 'bun:test'
import { applyRetention } from '../../src/setup'
import { LIFECYCLE_POLICIES, RAW_EVENTS_STREAM } from '../../src/setup/indices'
import { startTestServer, type TestServer } from '../helpers/server'
import { quietLog } from './harness'
import { editPolicyAge, policyPath } from '../helpers/ism'

/** The delete age and template patterns a stored policy carries. */
function essentials(policy: any) {
  const hot = policy.states.find((s: { name: string }) => s.name === 'hot')
  return {
    default_state: policy.default_state,
    states: policy.states.map((s: { name: string }) => s.name),
    deleteAfter: hot.transitions[0].conditions.min_index_age,
    deletes: policy.states
      .find((s: { name: string }) => s.name === 'delete')
      .actions.map((a: object) => Object.keys(a).filter((k) => k !== 'retry')[0]),
    rollover: hot.actions[0].rollover,
    patterns: policy.ism_template.map((t: { index_patterns: string[] }) => t.index_patterns),
    priorities: policy.ism_template.map((t: { priority: number }) => t.priority),
  }
}

async function tags(srv: TestServer): Promise<string[]> {
  const r = await srv.request('POST', `/${RAW_EVENTS_STREAM}/_search`, { body: { query: { match_all: {} } } })
  expect(r.status).toBe(200)
  return r.body.hits.hits.map((h: { _source: { tags: string[] } }) => h._source.tags[0])
}

describe('lifecycle policies over HTTP (embedded)', () => {
  test('every shipped policy is there after the bootstrap, as reference 1.5 describes it', async () => {
    const started = Date.now()
    const srv = await startTestServer()
    try {
      const list = await srv.request('GET', '/_plugins/_ism/policies?size=50')
      expect(list.status).toBe(200)
      expect(list.body.policies.map((p: { _id: string }) => p._id).sort()).toEqual(LIFECYCLE_POLICIES.map((p) => p.id).sort())
      for (const p of LIFECYCLE_POLICIES) {
        const r = await srv.request('GET', policyPath(p.id))
        expect(r.status).toBe(200)
        expect(r.body._id).toBe(p.id)
        expect(essentials(r.body.policy)).toEqual({
          default_state: 'hot',
          states: ['hot', 'delete'],
          deleteAfter: p.deleteAfter,
          deletes: ['delete'],
          rollover: {
            min_doc_count: 200_000_000,
            min_primary_shard_size: '20gb',
            ...(p.rolloverMinIndexAge ? { min_index_age: p.rolloverMinIndexAge } : {}),
          },
          patterns: [p.ismPatterns],
          priorities: [0],
        })
        // The boot time, copied into the template (reference 1.5), so it matches indices created from now on.
        const stamped = r.body.policy.ism_template[0].last_updated_time
        expect(stamped).toBeGreaterThanOrEqual(started)
        expect(stamped).toBeLessThanOrEqual(Date.now())
      }
      const sessions = await srv.request('GET', policyPath('ai-assistant-sessions-policy'))
      expect(essentials(sessions.body.policy).deleteAfter).toBe('7d')
      expect(sessions.body.policy.states[0].actions[0].rollover.min_index_age).toBe('1d')
    } finally {
      await srv.stop()
    }
  })

  test("an operator's edit holds, and steers retention, until the next start rewrites the policy", async () => {
    const first = await startTestServer()
    const NOW = Date.now()
    let editedVersion = 0
    try {
      const put = await editPolicyAge(first, 'stream-raw-events-policy', '2h')
      expect(put.status).toBe(200)
      editedVersion = put.body._version

      // Raw events are now kept 2 hours instead of 10 minutes.
      for (const [tag, age] of [
        ['young', 30 * 60_000],
        ['old', 3 * 3_600_000],
      ] as const) {
        const r = await first.request('POST', `/${RAW_EVENTS_STREAM}/_doc?refresh=true&op_type=create`, {
          body: { '@timestamp': new Date(NOW - age).toISOString(), tags: [tag] },
        })
        expect(r.status).toBe(201)
      }
      // (The node's own 5-minute job may get there first; what is left is what counts.)
      const out = await applyRetention({ store: first.server.app.deps.store, now: () => NOW, log: quietLog() })
      expect(out.find((o) => o.stream === RAW_EVENTS_STREAM)?.policy).toBe('stream-raw-events-policy')
      expect(await tags(first)).toEqual(['young'])
    } finally {
      await first.stop({ keepData: true })
    }

    const second = await startTestServer({ dataDir: first.dataDir })
    try {
      const r = await second.request('GET', policyPath('stream-raw-events-policy'))
      expect(r.body._version).toBe(editedVersion + 1)
      expect(essentials(r.body.policy).deleteAfter).toBe('10m')
      // The shipped age applies again: the 30-minute-old event goes.
      await applyRetention({ store: second.server.app.deps.store, now: () => NOW, log: quietLog() })
      expect(await tags(second)).toEqual([])
    } finally {
      await second.stop()
    }
  })
})

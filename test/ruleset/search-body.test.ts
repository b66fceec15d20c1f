// The `_search` routes of Ruleset Management check the body's top-level members against the store
// port's search schema: a mistyped member is a 400 naming it, never a failure inside the store.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startRulesetServer, type RulesetServer } from './harness'

const BASE = '/_plugins/_security_analytics'
const ROUTES = [`${BASE}/detectors/_search`, `${BASE}/rules/_search`, `${BASE}/logtype/_search`]

let s: RulesetServer
beforeAll(async () => {
  s = await startRulesetServer()
})
afterAll(() => s.stop())

describe('search bodies', () => {
  test('a well-formed body and an empty one search', async () => {
    for (const path of ROUTES) {
      expect((await s.request('POST', path, { body: { query: { match_all: {} }, size: 1, sort: [{ _id: 'asc' }] } })).status).toBe(200)
      expect((await s.request('POST', path, { raw: '' })).status).toBe(200)
    }
  })

  test('mistyped members are 400s naming the member', async () => {
    const cases: Array<[string, string]> = [
      ['{"size": {"toString": 1}}', 'size'],
      ['{"from": [{"toString": 1}]}', 'from'],
      ['{"size": "10"}', 'size'],
      ['{"size": -1}', 'size'],
      ['{"query": []}', 'query'],
      ['{"sort": 5}', 'sort'],
      ['{"track_total_hits": "yes"}', 'track_total_hits'],
    ]
    for (const path of ROUTES) {
      for (const [raw, field] of cases) {
        const r = await s.request('POST', path, { raw })
        expect({ raw, status: r.status, envelope: r.body.status }).toEqual({ raw, status: 400, envelope: 400 })
        expect(r.body.message).toStartWith(`Invalid search request body: field [${field}`)
      }
    }
  })

  test('a body nested past the bound is refused before it reaches the store', async () => {
    const deep = `{"query": ${'{"bool": {"must": ['.repeat(2000)}{"match_all": {}}${']}}'.repeat(2000)}}`
    for (const path of ROUTES)
      expect(await s.request('POST', path, { raw: deep })).toMatchObject({
        status: 400,
        body: { message: 'Invalid search request body.', status: 400 },
      })
  })
})

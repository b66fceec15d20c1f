/**
 * Work done "with the caller's rights" in platform mode: the node writes with the caller's own
 * credentials and the platform's index rights decide (spec "Resource creation rules" 3, "Update
 * findings"; reference setup 2 step 9). The users' platform roles are unknown to the node's
 * roles.yml, which only grants them OUR cluster actions (by user name): a local index check would
 * refuse all of them, so every success below is the platform's word.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { CONTENT_ALIASES, SETTINGS_DOC_ID, SETTINGS_INDEX } from '../../src/setup/indices'
import { CUSTOM_RULES_INDEX, LOG_TYPES_INDEX } from '../../src/ruleset/indices'
import { INDEX_ACTIONS, PLATFORM_SA_ACTIONS } from '../../src/security/actions'
import { updateFindings } from '../../src/ruleset/findings/update'
import { securityRefusal } from '../../src/security/platform/caller-store'
import { StoreError } from '../../src/store/errors'
import { faultyStore } from '../fixtures/faulty-store'
import type { TestServer } from '../helpers/server'
import { integrationBody, ruleBody } from '../content/harness'
import { forEachPlatform, startNode, type PlatformUnderTest } from './cluster-helpers'
import { basicAuth } from '../helpers/calls'

const ERIN = { name: 'erin', password: 'Erin-pass-1' } // writes content (platform role content_writer)
const FRANK = { name: 'frank', password: 'Frank-pass-1' } // reads content only (content_reader)
const IVAN = { name: 'ivan', password: 'Ivan-pass-1' } // updates security findings only (case_writer)
const GINA = { name: 'gina', password: 'Gina-pass-1' } // no rights on .svc-settings at the platform
const HANK = { name: 'hank', password: 'Hank-pass-1' } // writes .svc-settings (settings_writer)
const KIM = { name: 'kim', password: 'Kim-pass-1' } // indexes content but may not delete it (content_indexer)
const PREFIX = '/_plugins/_content_manager'
const SETTINGS = '/_plugins/_setup/settings'
const FINDINGS_UPDATE = '/_plugins/_security_analytics/findings/_update'
const basic = basicAuth

forEachPlatform(
  {
    users: [
      { ...ERIN, roles: ['content_writer'] },
      { ...FRANK, roles: ['content_reader'] },
      { ...IVAN, roles: ['case_writer'] },
      { ...GINA },
      { ...HANK, roles: ['settings_writer'] },
      { ...KIM, roles: ['content_indexer'] },
    ],
    roles: {
      content_writer: { index_permissions: [{ index_patterns: ['svc-threatintel-*'], allowed_actions: ['indices:data/write/*', 'read'] }] },
      content_indexer: {
        index_permissions: [
          { index_patterns: ['svc-threatintel-*'], allowed_actions: ['indices:data/write/index', 'indices:data/write/bulk*', 'read'] },
        ],
      },
      content_reader: { index_permissions: [{ index_patterns: ['svc-threatintel-*'], allowed_actions: ['read'] }] },
      case_writer: {
        index_permissions: [{ index_patterns: ['.ds-svc-findings-v5-security-*'], allowed_actions: ['indices:data/write/*', 'read'] }],
      },
      settings_writer: { index_permissions: [{ index_patterns: [SETTINGS_INDEX], allowed_actions: ['indices:data/write/*'] }] },
    },
  },
  (current) => {
    let platform: PlatformUnderTest
    let node: TestServer
    /** The node's log (refused promotions are logged as errors); kept out of the test output. */
    const nodeLog: string[] = []

    beforeAll(async () => {
      platform = current()
      node = await startNode(platform, {
        logLines: nodeLog,
        roles: {
          node_content: { cluster_permissions: ['cluster:admin/content_manager/*'] },
          node_cases: { cluster_permissions: [PLATFORM_SA_ACTIONS.findingsUpdate] },
          node_settings: { cluster_permissions: ['cluster:admin/setup/settings/update'] },
        },
        rolesMapping: {
          node_content: { users: [ERIN.name, FRANK.name, KIM.name] },
          node_cases: { users: [IVAN.name] },
          node_settings: { users: [GINA.name, HANK.name] },
        },
      })
    }, 180_000)

    afterAll(async () => {
      await node?.stop()
    })

    /** `_source` of every document of `index` on the platform (none when the index does not exist). */
    async function platformDocs(index: string): Promise<Array<Record<string, any>>> {
      const r = await platform.request('POST', `/${index}/_search?ignore_unavailable=true`, {
        body: { size: 1000, query: { match_all: {} } },
      })
      expect(r.status).toBe(200)
      return r.body.hits.hits.map((h: { _source: Record<string, any> }) => h._source)
    }

    const draftPolicy = async () => (await platformDocs(CONTENT_ALIASES.policies)).find((d) => d.space.name === 'draft')!

    describe('content resources', () => {
      test('a user whose platform role grants writes on the content indices creates a resource our roles.yml would refuse', async () => {
        const deps = node.server.app.deps
        const erin = await deps.security.authenticate(new Request(node.url + '/', { headers: { authorization: basic(ERIN) } }))
        // The local word alone would have refused: content_writer is the platform's role, not ours.
        expect(() => deps.security.authorizeIndices(erin, INDEX_ACTIONS.index, ['svc-threatintel-integrations-a'])).toThrow(
          'no permissions',
        )

        const r = await node.request('POST', `${PREFIX}/integrations`, { user: ERIN, body: integrationBody('erin-app') })
        expect(r.status).toBe(201)
        const id = r.body.message
        const stored = (await platformDocs(CONTENT_ALIASES.integrations)).filter((d) => d.document.id === id)
        expect(stored.map((d) => [d.space.name, d.document.metadata.title])).toEqual([['draft', 'erin-app']])
        // The link to the draft policy is the caller's write too.
        expect((await draftPolicy()).document.integrations).toContain(id)

        const rule = await node.request('POST', `${PREFIX}/rules`, { user: ERIN, body: ruleBody(id, 'erin-rule', 'erin-app') })
        expect(rule.status).toBe(201)
      })

      test('a user the platform refuses gets its 403, and nothing is written: no document, no link, no Ruleset Management copy', async () => {
        const parent = await node.request('POST', `${PREFIX}/integrations`, { user: ERIN, body: integrationBody('frank-parent') })
        expect(parent.status).toBe(201)
        const rulesBefore = (await platformDocs(CUSTOM_RULES_INDEX)).length
        const integration = () =>
          platformDocs(CONTENT_ALIASES.integrations).then((ds) => ds.find((d) => d.document.id === parent.body.message)!)
        const linkedBefore = (await integration()).document.rules

        const r = await node.request('POST', `${PREFIX}/rules`, {
          user: FRANK,
          body: ruleBody(parent.body.message, 'frank-rule', 'frank-parent'),
        })
        expect(r.status).toBe(403)
        expect(r.body.status).toBe(403)
        expect(r.body.message).toContain(`no permissions for [${INDEX_ACTIONS.index}]`)
        expect(r.body.message).toContain('frank')

        expect((await platformDocs(CONTENT_ALIASES.rules)).filter((d) => d.document.metadata?.title === 'frank-rule')).toEqual([])
        expect((await integration()).document.rules).toEqual(linkedBefore)
        // Ruleset Management had stored its copy before the refusal; it was taken back out.
        const rules = await platformDocs(CUSTOM_RULES_INDEX)
        expect(rules.length).toBe(rulesBefore)
        expect(JSON.stringify(rules)).not.toContain('frank-rule')

        const integ = await node.request('POST', `${PREFIX}/integrations`, { user: FRANK, body: integrationBody('frank-app') })
        expect(integ.status).toBe(403)
        expect((await platformDocs(CONTENT_ALIASES.integrations)).filter((d) => d.document.metadata.title === 'frank-app')).toEqual([])
      })

      test('update and delete: refused ones change nothing, allowed ones go through', async () => {
        const made = await node.request('POST', `${PREFIX}/integrations`, { user: ERIN, body: integrationBody('shared-app') })
        expect(made.status).toBe(201)
        const id = made.body.message
        const stored = async () => (await platformDocs(CONTENT_ALIASES.integrations)).find((d) => d.document.id === id)
        const before = await stored()
        const changed = { ...before!.document, metadata: { ...before!.document.metadata, description: 'changed' } }

        const put = await node.request('PUT', `${PREFIX}/integrations/${id}`, { user: FRANK, body: { resource: changed } })
        expect(put.status).toBe(403)
        expect(await stored()).toEqual(before)
        const del = await node.request('DELETE', `${PREFIX}/integrations/${id}`, { user: FRANK })
        expect(del.status).toBe(403)
        expect(await stored()).toEqual(before)
        // Refused half-way, the link to the draft policy was put back where it was.
        expect((await draftPolicy()).document.integrations).toContain(id)

        expect((await node.request('PUT', `${PREFIX}/integrations/${id}`, { user: ERIN, body: { resource: changed } })).status).toBe(200)
        expect((await stored())!.document.metadata.description).toBe('changed')
        expect((await node.request('DELETE', `${PREFIX}/integrations/${id}`, { user: ERIN })).status).toBe(200)
        expect(await stored()).toBeUndefined()
        expect((await draftPolicy()).document.integrations).not.toContain(id)
      })
      test('a delete the platform refuses half-way (unlinked, then not deleted) puts the link and the Ruleset Management copy back', async () => {
        const ids: string[] = []
        for (const title of ['kim-1', 'kim-2', 'kim-3']) {
          const made = await node.request('POST', `${PREFIX}/integrations`, { user: ERIN, body: integrationBody(title) })
          expect(made.status).toBe(201)
          ids.push(made.body.message)
        }
        const before = (await draftPolicy()).document.integrations as string[]
        const logType = async () => (await platformDocs(LOG_TYPES_INDEX)).filter((d) => JSON.stringify(d).includes(ids[1]))
        expect((await logType()).length).toBe(1)

        const r = await node.request('DELETE', `${PREFIX}/integrations/${ids[1]}`, { user: KIM })
        expect(r.status).toBe(403)
        expect(r.body.message).toContain(`no permissions for [${INDEX_ACTIONS.delete}]`)
        // The middle one is back in its place, not appended.
        expect((await draftPolicy()).document.integrations).toEqual(before)
        expect((await platformDocs(CONTENT_ALIASES.integrations)).filter((d) => d.document.id === ids[1]).length).toBe(1)
        expect((await logType()).length).toBe(1)
      })

      test('a promotion the platform refuses is rolled back and answered 403; with the rights it completes', async () => {
        const made = await node.request('POST', `${PREFIX}/integrations`, { user: ERIN, body: integrationBody('promoted-app') })
        expect(made.status).toBe(201)
        const preview = await node.request('GET', `${PREFIX}/promote?space=draft`)
        expect(preview.status).toBe(200)
        expect(preview.body.changes.integrations).toContainEqual({ operation: 'add', id: made.body.message })
        const inTest = async () =>
          (await platformDocs(CONTENT_ALIASES.integrations)).filter((d) => d.space.name === 'test').map((d) => d.document.id)
        const testPolicy = async () => (await platformDocs(CONTENT_ALIASES.policies)).find((d) => d.space.name === 'test')
        const [idsBefore, policyBefore] = [await inTest(), await testPolicy()]

        const denied = await node.request('POST', `${PREFIX}/promote`, {
          user: FRANK,
          body: { space: 'draft', changes: preview.body.changes },
        })
        expect(denied.status).toBe(403)
        expect(denied.body.message).toContain('no permissions for [indices:data/write/bulk[s], indices:data/write/index]')
        expect(await inTest()).toEqual(idsBefore)
        expect(await testPolicy()).toEqual(policyBefore)

        const done = await node.request('POST', `${PREFIX}/promote`, {
          user: ERIN,
          body: { space: 'draft', changes: preview.body.changes },
        })
        expect(done).toMatchObject({ status: 200, body: { message: 'Promotion completed successfully.' } })
        expect(await inTest()).toContain(made.body.message)
      })
      test('a draft reset the platform refuses deletes nothing and answers 403', async () => {
        const draftContent = async () => (await platformDocs(CONTENT_ALIASES.integrations)).filter((d) => d.space.name === 'draft').length
        const [countBefore, policyBefore] = [await draftContent(), await draftPolicy()]
        expect(countBefore).toBeGreaterThan(0)
        const r = await node.request('DELETE', `${PREFIX}/space/draft`, { user: FRANK })
        expect(r.status).toBe(403)
        expect(r.body.message).toContain(`no permissions for [indices:data/write/bulk[s], ${INDEX_ACTIONS.delete}]`)
        expect(await draftContent()).toBe(countBefore)
        expect(await draftPolicy()).toEqual(policyBefore)
      })
    })

    describe('findings case management', () => {
      test('an item on an index the platform refuses is a 403 item in a 207; the allowed one is updated', async () => {
        const ids: Record<string, { _id: string; _index: string }> = {}
        for (const category of ['security', 'cloud-services']) {
          const put = await platform.request('POST', `/svc-findings-v5-${category}/_doc?op_type=create&refresh=true`, {
            body: { '@timestamp': new Date().toISOString(), svc: { rule: { title: `${category} finding` } } },
          })
          expect(put.status).toBe(201)
          ids[category] = { _id: put.body._id, _index: put.body._index }
        }
        expect(ids.security._index).toStartWith('.ds-svc-findings-v5-security-')

        const r = await node.request('PUT', FINDINGS_UPDATE, {
          user: IVAN,
          body: {
            findings: [
              { ...ids.security, case: { status: 'Acknowledged' } },
              { ...ids['cloud-services'], case: { status: 'Acknowledged' } },
            ],
          },
        })
        expect(r.status).toBe(207)
        expect(r.body.errors).toBe(true)
        expect(r.body.items[0]).toMatchObject({ ...ids.security, status: 200, result: 'updated' })
        expect(r.body.items[1]).toMatchObject({ ...ids['cloud-services'], status: 403 })
        expect(r.body.items[1].error).toContain('no permissions for [indices:data/write/bulk[s], indices:data/write/update]')

        const source = async (f: { _id: string; _index: string }) =>
          (await platform.request('GET', `/${f._index}/_doc/${f._id}`)).body._source
        expect((await source(ids.security)).svc.case).toEqual({ status: 'acknowledged' })
        expect((await source(ids['cloud-services'])).svc.case).toBeUndefined()
      })
      test('a bulk the platform refuses as a whole (no bulk right at all) makes every item a 403 item', async () => {
        const put = await platform.request('POST', '/svc-findings-v5-security/_doc?op_type=create&refresh=true', {
          body: { '@timestamp': new Date().toISOString() },
        })
        const finding = { _id: put.body._id, _index: put.body._index }
        const deps = node.server.app.deps
        const ivan = await deps.security.authenticate(new Request(node.url + '/', { headers: { authorization: basic(IVAN) } }))
        // What OpenSearch answers a caller without indices:data/write/bulk: the whole request refused.
        const refusing = faultyStore(deps.storeFor!(ivan))
        refusing.arm({
          failAt: [1],
          bulk: 'request',
          error: () => new StoreError('security_exception', 403, 'no permissions for [indices:data/write/bulk] and User [name=ivan]'),
        })
        const answer = await updateFindings({ ...deps, storeFor: () => refusing }, ivan, [{ ...finding, case: { status: 'closed' } }])
        expect(answer.errors).toBe(true)
        expect(answer.items).toEqual([
          { ...finding, status: 403, error: 'no permissions for [indices:data/write/bulk] and User [name=ivan]' },
        ])
        expect((await platform.request('GET', `/${finding._index}/_doc/${finding._id}`)).body._source.svc).toBeUndefined()
      })
    })

    describe('securityRefusal', () => {
      test('finds the security exception in a cause chain, and nothing else', () => {
        const wrapped = new StoreError('remote_transport_exception', 500, 'wrapped', {
          caused_by: { type: 'security_exception', reason: 'no permissions for [x]' },
        })
        expect(securityRefusal(wrapped)).toEqual({ status: 403, message: 'no permissions for [x]' })
        expect(securityRefusal(new StoreError('security_exception', 401, 'who?'))).toEqual({ status: 401, message: 'who?' })
        expect(securityRefusal(new StoreError('version_conflict_engine_exception', 409, 'conflict'))).toBeUndefined()
        expect(securityRefusal(new Error('boom'))).toBeUndefined()
      })
    })

    describe('settings endpoint', () => {
      const stored = async () => (await platform.request('GET', `/${SETTINGS_INDEX}/_doc/${SETTINGS_DOC_ID}`)).body._source

      test('a caller the platform refuses on .svc-settings gets the platform’s 403 in the envelope; nothing is written', async () => {
        const before = await stored()
        const r = await node.request('PUT', SETTINGS, {
          user: GINA,
          body: { engine: { index_raw_events: !before?.engine?.index_raw_events } },
        })
        expect(r.status).toBe(403)
        expect(r.body).toEqual({ status: 403, message: expect.stringContaining(`no permissions for [${INDEX_ACTIONS.index}]`) })
        expect(r.body.message).toContain('gina')
        expect(await stored()).toEqual(before)
      })

      test('a caller the platform lets write .svc-settings persists the record', async () => {
        for (const value of [true, false]) {
          const r = await node.request('PUT', SETTINGS, { user: HANK, body: { engine: { index_raw_events: value } } })
          expect(r).toMatchObject({ status: 200, body: { message: 'Settings updated successfully.', status: 200 } })
          expect(await stored()).toEqual({ engine: { index_raw_events: value } })
        }
      })
    })
  },
)

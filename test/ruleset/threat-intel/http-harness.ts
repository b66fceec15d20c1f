// What the threat-intel HTTP suites share: waiting on a condition, a sync pass of the CTI IoC
// consumer brought to the feed's end, and events bulk-indexed over HTTP.
import { expect } from 'bun:test'
import type { FakeConsumer } from '../../fixtures/cti/server'
import type { TestServer } from '../../helpers/server'
import { EVENTS } from '../../helpers/calls'

export { EVENTS }

/** Polls `check` until true; on time-out, throws naming `what` and `state()` when given. */
export async function until(check: () => Promise<boolean>, what: string, ms = 30_000, state?: () => Promise<unknown>) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await check()) return
    await Bun.sleep(100)
  }
  throw new Error(`timed out waiting for ${what}${state ? `: ${JSON.stringify(await state())}` : ''}`)
}

/** The IoC consumer's state document. */
export const consumerState = async (s: TestServer, type: string) =>
  (await s.request('GET', `/.svc-cti-consumers/_doc/${encodeURIComponent(type)}`)).body._source

/** Starts a pass and waits until the consumer holds the feed's last offset. */
export async function synced(s: TestServer, feed: FakeConsumer, type: string) {
  const state = () => consumerState(s, type)
  await until(async () => (await s.request('POST', '/_plugins/_content_manager/update')).status === 202, 'a pass to start', 30_000, state)
  await until(
    async () => {
      const st = await state()
      return st?.status === 'ready' && st.local_offset === feed.lastOffset && !st.post_sync_pending
    },
    'the feed to be applied',
    30_000,
    state,
  )
}

/** Bulk-indexes events (refreshed; `@timestamp` now unless they carry one); answers their ids. */
export async function indexEvents(s: TestServer, events: Array<Record<string, unknown>>): Promise<string[]> {
  const body = events.flatMap((e) => [
    JSON.stringify({ create: { _index: EVENTS } }),
    JSON.stringify({ '@timestamp': new Date().toISOString(), ...e }),
  ])
  const r = await s.request('POST', '/_bulk?refresh=true', {
    body: body.join('\n') + '\n',
    headers: { 'content-type': 'application/x-ndjson' },
  })
  expect(r.body.errors).toBe(false)
  return r.body.items.map((i: any) => i.create._id as string)
}

/** A `network` detector body with `threat_intel_enabled` over the events stream, no rules, these triggers. */
export const networkTiDetector = (name: string, triggers: unknown[] = []) => ({
  type: 'detector',
  name,
  detector_type: 'network',
  enabled: true,
  threat_intel_enabled: true,
  schedule: { period: { interval: 60, unit: 'MINUTES' } },
  inputs: [{ detector_input: { description: 'ti', indices: [EVENTS], custom_rules: [], pre_packaged_rules: [] } }],
  triggers,
})

// What the detection end-to-end tests send the binary: plugin calls (JSON, or Sigma YAML for the
// rules API) as its admin, custom Sigma rules under a draft integration, and the body of a user
// detector over custom rules.
import { expect } from 'bun:test'
import { SA } from '../helpers/calls'
import type { SpawnedServer } from '../helpers/spawn-binary'

/** A plugin call: `body` is sent as JSON, or as it is as Sigma YAML when `yaml`. */
export type PluginCall = (method: string, path: string, body?: unknown, yaml?: boolean) => Promise<{ status: number; body: any }>

/** A call to the node `node()` answers with (read at each call: a test may restart it). */
export function pluginCaller(node: () => SpawnedServer): PluginCall {
  return async (method: string, path: string, body?: unknown, yaml = false) => {
    const { url, auth } = node()
    const r = await fetch(url + path, {
      method,
      headers: { authorization: auth, 'content-type': yaml ? 'application/yaml' : 'application/json' },
      body: body === undefined ? undefined : yaml ? String(body) : JSON.stringify(body),
    })
    return { status: r.status, body: (await r.json()) as any }
  }
}

/** An enabled detector of `logType` over `index` with these custom rules, run every minute. */
export const customRulesDetector = (name: string, logType: string, index: string, ruleIds: string[]) => ({
  type: 'detector',
  name,
  detector_type: logType,
  enabled: true,
  schedule: { period: { interval: 1, unit: 'MINUTES' } },
  inputs: [
    { detector_input: { description: 'e2e', indices: [index], custom_rules: ruleIds.map((id) => ({ id })), pre_packaged_rules: [] } },
  ],
  triggers: [],
})

/** Creates the draft integration `logType` (the custom rules' log type) and posts each Sigma rule under it; answers the rules' ids. */
export async function draftRules(call: PluginCall, logType: string, rules: string[]): Promise<string[]> {
  const integration = await call('POST', '/_plugins/_content_manager/integrations', {
    resource: { metadata: { title: logType, author: 'tests', description: `${logType} logs` }, category: 'applications' },
  })
  expect(integration.status).toBe(201)
  const ids: string[] = []
  for (const yaml of rules) {
    const r = await call('POST', `${SA}/rules?category=${logType}`, yaml, true)
    expect(r.status).toBe(201)
    ids.push(r.body._id)
  }
  return ids
}

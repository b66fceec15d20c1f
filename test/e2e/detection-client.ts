// What the detection end-to-end tests send the binary: plugin calls (JSON, or Sigma YAML for the
// rules API) as its admin, and the body of a user detector over custom rules.
import type { SpawnedServer } from '../helpers/spawn-binary'

/** A call to the node `node()` answers with (read at each call: a test may restart it). */
export function pluginCaller(node: () => SpawnedServer) {
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

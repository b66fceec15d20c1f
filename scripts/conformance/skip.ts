/**
 * `skip` sections: version ranges with OpenSearch's ordering and runner features.
 */

/** What this runner implements, in upstream's feature names. */
export const RUNNER_FEATURES = new Set([
  'headers',
  'allowed_warnings',
  'warnings',
  'node_selector',
  'contains',
  'stash_in_key',
  'arbitrary_key',
  'embedded_stash_key',
])

/**
 * A version as a sortable tuple. OpenSearch gives its own version ids an extra high bit, so
 * every Elasticsearch-era version (5.x-7.x) sorts before OpenSearch 1.0.0: `" - 7.99.99"`
 * never skips on OpenSearch, which a plain semver comparison would get wrong.
 */
export function versionKey(version: string): number[] {
  const m = /^\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(version)
  if (!m) throw new Error(`not a version: [${version}]`)
  const [major, minor, patch] = [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)]
  const legacy = major >= 5 && major <= 8
  return [legacy ? 0 : 1, major, minor, patch]
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0)
    if (d !== 0) return d
  }
  return 0
}

/** True when `version` lies in one of the comma-separated inclusive ranges (`all` = always). */
export function versionInRanges(ranges: string, version: string): boolean {
  const v = versionKey(version)
  for (const raw of ranges.split(',')) {
    const range = raw.trim()
    if (range === 'all') return true
    const dash = range.indexOf('-')
    if (dash < 0) throw new Error(`version range [${range}] has no '-'`)
    const lower = range.slice(0, dash).trim()
    const upper = range.slice(dash + 1).trim()
    const aboveLower = lower === '' || compare(v, versionKey(lower)) >= 0
    const belowUpper = upper === '' || compare(v, versionKey(upper)) <= 0
    if (aboveLower && belowUpper) return true
  }
  return false
}

export function featureList(features: unknown): string[] {
  if (features === undefined || features === null) return []
  if (Array.isArray(features)) return features.map(String)
  return String(features)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

/** The reason to skip, or undefined to run. Looks only at a leading `skip` step. */
export function skipReason(steps: Array<Record<string, unknown>>, version: string): string | undefined {
  const first = steps[0]
  if (!first || !('skip' in first)) return undefined
  const skip = (first.skip ?? {}) as Record<string, unknown>
  const missing = featureList(skip.features).filter((f) => !RUNNER_FEATURES.has(f))
  if (missing.length > 0) return `runner lacks feature(s) ${missing.join(', ')}`
  if (typeof skip.version === 'string' && versionInRanges(skip.version, version)) {
    return `version ${version} in [${skip.version}]: ${String(skip.reason ?? '')}`
  }
  return undefined
}

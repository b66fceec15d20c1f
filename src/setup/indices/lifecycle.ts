/**
 * The six lifecycle policies of reference 1.5. On the platform they are ISM
 * policies; in embedded mode the retention job (`../retention.ts`) applies
 * the same delete ages to data-stream documents.
 */
export interface LifecyclePolicy {
  id: string
  /** Data streams (name prefixes) the policy governs. */
  streams: string[]
  /** `ism_template` patterns of the reference. */
  ismPatterns: string[]
  /** Age after which data is deleted, in milliseconds. */
  deleteAfterMillis: number
  /** Human form of the age as ISM writes it (`1h`, `90d`). */
  deleteAfter: string
  /** Extra rollover condition besides the shared size/doc-count ones. */
  rolloverMinIndexAge?: string
}

const UNIT_MILLIS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const

/**
 * One policy of the table: its ISM patterns are the stream's backing indices and the stream
 * itself, and the delete age in milliseconds is read from the ISM form (`10m`, `1h`, `90d`).
 */
function policy(id: string, stream: string, deleteAfter: string, rolloverMinIndexAge?: string): LifecyclePolicy {
  const base = stream.replace(/-$/, '')
  const [, n, unit] = /^(\d+)([mhd])$/.exec(deleteAfter)!
  return {
    id,
    streams: [stream],
    ismPatterns: [`.ds-${base}-*`, `${base}*`],
    deleteAfter,
    deleteAfterMillis: Number(n) * UNIT_MILLIS[unit as keyof typeof UNIT_MILLIS],
    ...(rolloverMinIndexAge ? { rolloverMinIndexAge } : {}),
  }
}

export const LIFECYCLE_POLICIES: LifecyclePolicy[] = [
  policy('stream-events-policy', 'svc-events-v5-', '1h'),
  policy('stream-raw-events-policy', 'svc-events-raw-v5', '10m'),
  policy('stream-findings-policy', 'svc-findings-v5-', '90d'),
  policy('stream-metrics-policy', 'svc-metrics-', '30d'),
  policy('stream-active-responses-policy', 'svc-active-responses', '3d'),
  policy('ai-assistant-sessions-policy', 'svc-ai-assistant-sessions', '7d', '1d'),
]

export const policyById = (id: string) => LIFECYCLE_POLICIES.find((p) => p.id === id)

const retry = { count: 3, backoff: 'exponential', delay: '1m' }

/** The ISM policy document of reference 1.5, for a platform that runs ISM. */
export function ismPolicyBody(p: LifecyclePolicy, lastUpdatedMillis: number) {
  return {
    policy: {
      description: `Rollover and retention of ${p.streams.join(', ')}`,
      default_state: 'hot',
      last_updated_time: lastUpdatedMillis,
      states: [
        {
          name: 'hot',
          actions: [
            {
              retry,
              rollover: {
                min_doc_count: 200_000_000,
                min_primary_shard_size: '20gb',
                ...(p.rolloverMinIndexAge ? { min_index_age: p.rolloverMinIndexAge } : {}),
              },
            },
          ],
          transitions: [{ state_name: 'delete', conditions: { min_index_age: p.deleteAfter } }],
        },
        { name: 'delete', actions: [{ retry, delete: {} }], transitions: [] },
      ],
      ism_template: [
        {
          index_patterns: p.ismPatterns,
          priority: 0,
          last_updated_time: lastUpdatedMillis,
        },
      ],
    },
  }
}

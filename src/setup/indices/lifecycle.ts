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

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

export const LIFECYCLE_POLICIES: LifecyclePolicy[] = [
  {
    id: 'stream-events-policy',
    streams: ['svc-events-v5-'],
    ismPatterns: ['.ds-svc-events-v5-*', 'svc-events-v5*'],
    deleteAfter: '1h',
    deleteAfterMillis: HOUR,
  },
  {
    id: 'stream-raw-events-policy',
    streams: ['svc-events-raw-v5'],
    ismPatterns: ['.ds-svc-events-raw-v5-*', 'svc-events-raw-v5*'],
    deleteAfter: '10m',
    deleteAfterMillis: 10 * MINUTE,
  },
  {
    id: 'stream-findings-policy',
    streams: ['svc-findings-v5-'],
    ismPatterns: ['.ds-svc-findings-v5-*', 'svc-findings-v5*'],
    deleteAfter: '90d',
    deleteAfterMillis: 90 * DAY,
  },
  {
    id: 'stream-metrics-policy',
    streams: ['svc-metrics-'],
    ismPatterns: ['.ds-svc-metrics-*', 'svc-metrics*'],
    deleteAfter: '30d',
    deleteAfterMillis: 30 * DAY,
  },
  {
    id: 'stream-active-responses-policy',
    streams: ['svc-active-responses'],
    ismPatterns: ['.ds-svc-active-responses-*', 'svc-active-responses*'],
    deleteAfter: '3d',
    deleteAfterMillis: 3 * DAY,
  },
  {
    id: 'ai-assistant-sessions-policy',
    streams: ['svc-ai-assistant-sessions'],
    ismPatterns: ['.ds-svc-ai-assistant-sessions-*', 'svc-ai-assistant-sessions*'],
    deleteAfter: '7d',
    deleteAfterMillis: 7 * DAY,
    rolloverMinIndexAge: '1d',
  },
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

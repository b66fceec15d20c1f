/**
 * The Sigma correlation specification's complete example ("Failed Logins Followed by Successful
 * Login"): an event_count correlation chained into a temporal_ordered one. The group-by field and
 * the failure threshold are parameters (the spec uses `User` and 10), so each test can use the
 * example on its own events.
 */
export function specChain(groupBy = 'User', threshold = 10): { multiple: string; chain: string } {
  return {
    multiple: `title: Multiple failed logons
id: a8418a5a-5fc4-46b5-b23b-6c73beb19d41
description: Detects multiple failed logins within a certain amount of time
name: multiple_failed_login
correlation:
    type: event_count
    rules:
        - failed_login
    group-by:
        - ${groupBy}
    timespan: 10m
    condition:
        gte: ${threshold}
`,
    chain: `title: Correlation - Multiple Failed Logins Followed by Successful Login
id: b180ead8-d58f-40b2-ae54-c8940995b9b6
status: experimental
correlation:
    type: temporal_ordered
    rules:
        - multiple_failed_login
        - successful_login
    group-by:
        - ${groupBy}
    timespan: 10m
level: high
`,
  }
}

import { actionRule, eventCountRule } from '../../helpers/sigma-rules'

/**
 * The Sigma correlation specification's complete example ("Failed Logins Followed by Successful
 * Login"): an event_count correlation chained into a temporal_ordered one. The group-by field and
 * the failure threshold are parameters (the spec uses `User` and 10), so each test can use the
 * example on its own events.
 */
export function specChain(groupBy = 'User', threshold = 10): { multiple: string; chain: string } {
  return {
    multiple: eventCountRule({
      title: 'Multiple failed logons',
      id: 'a8418a5a-5fc4-46b5-b23b-6c73beb19d41',
      description: 'Detects multiple failed logins within a certain amount of time',
      name: 'multiple_failed_login',
      rules: ['failed_login'],
      groupBy,
      threshold,
    }),
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

/**
 * The example as the rules API takes it, base rules first: failed_login and successful_login of the
 * `product` log type (on `event.action`), then the chain grouped by `user.name` with threshold 3.
 */
export function specRules(product: string): string[] {
  const { multiple, chain } = specChain('user.name', 3)
  return [
    actionRule({ title: 'Failed login', name: 'failed_login', action: 'login_failed', product }),
    actionRule({ title: 'Login', name: 'successful_login', action: 'login_success', product }),
    multiple,
    chain,
  ]
}

/**
 * Logins for the chain grouped by `user.name` with threshold 3, five seconds apart from `t0`: alice
 * fails three times then logs in (the chain fires), bob fails twice then logs in (below the threshold).
 */
export function specLogins(t0: number) {
  const login = (user: string, action: string, i: number) => ({
    '@timestamp': new Date(t0 + i * 5000).toISOString(),
    event: { action },
    user: { name: user },
  })
  return [
    ...[0, 1, 2].map((i) => login('alice', 'login_failed', i)),
    login('alice', 'login_success', 3),
    ...[4, 5].map((i) => login('bob', 'login_failed', i)),
    login('bob', 'login_success', 6),
  ]
}

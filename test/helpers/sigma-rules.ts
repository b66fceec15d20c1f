// Sigma rules as tests send them to the rules API (YAML text): a rule matching one `event.action`
// of a log type, and an event_count correlation over rules named in it.

/** A Sigma rule of the `product` log type (default linux) matching the events whose `event.action` is `action`. */
export function actionRule(r: { title: string; name: string; action: string; product?: string; id?: string; level?: string }): string {
  return lines([
    `title: ${r.title}`,
    r.id && `id: ${r.id}`,
    `name: ${r.name}`,
    r.level && `level: ${r.level}`,
    'logsource:',
    `    product: ${r.product ?? 'linux'}`,
    'detection:',
    '    selection:',
    `        event.action: ${r.action}`,
    '    condition: selection',
  ])
}

/** An event_count correlation: `threshold` or more matches of `rules` per `groupBy` (default user.name) within 10 minutes. */
export function eventCountRule(r: {
  title: string
  name: string
  rules: string[]
  threshold: number
  groupBy?: string
  id?: string
  description?: string
}): string {
  return lines([
    `title: ${r.title}`,
    r.id && `id: ${r.id}`,
    r.description && `description: ${r.description}`,
    `name: ${r.name}`,
    'correlation:',
    '    type: event_count',
    '    rules:',
    ...r.rules.map((name) => `        - ${name}`),
    '    group-by:',
    `        - ${r.groupBy ?? 'user.name'}`,
    '    timespan: 10m',
    '    condition:',
    `        gte: ${r.threshold}`,
  ])
}

const lines = (all: Array<string | undefined>) => all.filter((l) => l).join('\n') + '\n'

// The sample content packaged with svc-ext (issue 15 item 9): written for this project, small, and
// enough for a fresh install with no CTI API to have working content (the spec's packaged-snapshot
// fallback): one policy, two integrations with their decoders, rules and a KVDB, a filter, and a
// handful of IoCs. Each entry is one snapshot line (reference 1.5.2); offsets start at 1.
type Line = { resource: string; offset: number; payload: Record<string, unknown> }

const author = 'svc-ext sample content'
const date = '2026-01-15'
let offset = 0
const line = (resource: string, type: string, document: Record<string, unknown>): Line => ({
  resource,
  offset: ++offset,
  payload: { type, document: { id: resource, ...document } },
})

const rules = [
  line('0b5c6b0e-6f1c-4c55-9d0e-2a1f3c6d7e01', 'rule', {
    title: 'SSH authentication failure',
    author,
    date,
    description: 'A login over SSH was refused because the password or key was wrong.',
    level: 'low',
    status: 'stable',
    enabled: true,
    logsource: { product: 'linux', service: 'sshd' },
    detection: { selection: { 'event.action': 'ssh_login', 'event.outcome': 'failure' }, condition: 'selection' },
    tags: ['attack.credential-access', 'attack.t1110'],
  }),
  line('0b5c6b0e-6f1c-4c55-9d0e-2a1f3c6d7e02', 'rule', {
    title: 'SSH login as root',
    author,
    date,
    description: 'Someone logged in over SSH directly as root.',
    level: 'medium',
    status: 'stable',
    enabled: true,
    logsource: { product: 'linux', service: 'sshd' },
    detection: { selection: { 'event.action': 'ssh_login', 'event.outcome': 'success', 'user.name': 'root' }, condition: 'selection' },
    tags: ['attack.initial-access', 'attack.t1078'],
  }),
  line('0b5c6b0e-6f1c-4c55-9d0e-2a1f3c6d7e03', 'rule', {
    title: 'Web request from a known bad address',
    author,
    date,
    description: 'An HTTP request came from an address listed as an indicator of compromise.',
    level: 'high',
    status: 'experimental',
    enabled: true,
    logsource: { product: 'nginx', category: 'webserver' },
    detection: { selection: { 'threat.indicator.matched': true }, condition: 'selection' },
  }),
]

const decoders = [
  line('5e2f4a8c-1d3b-4f6a-8c9e-0a1b2c3d4e01', 'decoder', {
    name: 'decoder/sshd/0',
    metadata: { title: 'OpenSSH server', author, date, module: 'sshd' },
    check: [{ 'event.original': 'regex_match(sshd\\[)' }],
    normalize: [{ map: [{ 'event.kind': 'event' }, { 'event.category': 'array_append(authentication)' }] }],
  }),
  line('5e2f4a8c-1d3b-4f6a-8c9e-0a1b2c3d4e02', 'decoder', {
    name: 'decoder/nginx-access/0',
    metadata: { title: 'nginx access log', author, date, module: 'nginx' },
    check: [{ 'event.original': 'regex_match(HTTP/1)' }],
    normalize: [{ map: [{ 'event.kind': 'event' }, { 'event.category': 'array_append(web)' }] }],
  }),
]

const kvdbs = [
  line('7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c01', 'kvdb', {
    metadata: { title: 'SSH outcome names', author, date },
    content: { Accepted: 'success', Failed: 'failure', Invalid: 'failure' },
  }),
]

const integrations = [
  line('9c8b7a6d-5e4f-4a3b-8c2d-1e0f9a8b7c01', 'integration', {
    metadata: { title: 'Linux SSH', author, date, description: 'Logins to the OpenSSH server.' },
    category: 'access-management',
    decoders: [decoders[0].resource],
    rules: [rules[0].resource, rules[1].resource],
    kvdbs: [kvdbs[0].resource],
  }),
  line('9c8b7a6d-5e4f-4a3b-8c2d-1e0f9a8b7c02', 'integration', {
    metadata: { title: 'nginx', author, date, description: 'Access logs of the nginx web server.' },
    category: 'network-activity',
    decoders: [decoders[1].resource],
    rules: [rules[2].resource],
    kvdbs: [],
  }),
]

const filters = [
  line('3d4e5f6a-7b8c-4d9e-8f0a-1b2c3d4e5f01', 'pre-filter', {
    name: 'filter/drop-health-checks/0',
    metadata: { title: 'Drop load-balancer health checks', author, date },
    check: [{ 'url.path': '/healthz' }],
  }),
]

const policy = line('1f2e3d4c-5b6a-4978-8695-a4b3c2d1e001', 'policy', {
  metadata: { title: 'Sample standard policy', author, date },
  root_decoder: null,
  integrations: integrations.map((i) => i.resource),
  filters: filters.map((f) => f.resource),
  enrichments: [],
  enabled: true,
  index_unclassified_events: false,
  index_discarded_events: false,
})

export const SAMPLE_RULESET: Line[] = [...rules, ...decoders, ...kvdbs, ...integrations, ...filters, policy]

const ioc = (id: string, name: string, type: string, extra: Record<string, unknown>) => ({
  resource: id,
  offset: Number(id),
  payload: {
    type: 'ioc',
    document: {
      id,
      name,
      type,
      confidence: 80,
      first_seen: '2026-01-10T08:00:00Z',
      provider: 'svc-ext-sample',
      tags: ['sample'],
      ...extra,
    },
  },
})

// Documentation addresses (RFC 5737, RFC 2606): they match nothing real.
export const SAMPLE_IOCS: Line[] = [
  ioc('1', '192.0.2.10:4444', 'ip:port', { software: { name: 'sample.rat', type: 'botnet_cc' } }),
  ioc('2', '198.51.100.23:8080', 'ip:port', { software: { name: 'sample.loader', type: 'payload_delivery' } }),
  ioc('3', '203.0.113.5', 'ip', {}),
  ioc('4', 'http://malware.example/payload.bin', 'url', { software: { name: 'sample.dropper', type: 'payload_delivery' } }),
  ioc('5', 'phish.example.net', 'domain', { tags: ['sample', 'phishing'] }),
]

export const SAMPLE_MANIFEST = {
  'ruleset.zip': {
    name: 'sample-ruleset',
    context: 'svc-ext-sample',
    type: 'cti:catalog:consumer:ruleset',
    resource: '',
    is_public: true,
    remote_offset: 0,
  },
  'iocs.zip': {
    name: 'sample-iocs',
    context: 'svc-ext-sample',
    type: 'cti:catalog:consumer:iocs',
    resource: '',
    is_public: true,
    remote_offset: 0,
  },
}

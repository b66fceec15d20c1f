/**
 * Hostile request material for the robustness walk: a seeded generator (the
 * same seed gives the same requests, so a failure can be replayed) and the
 * fixed batteries of bodies, path params and query strings.
 */

/** mulberry32: small, fast and good enough to pick mutations reproducibly. */
export function seeded(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
  }
}
export type Rng = ReturnType<typeof seeded>

/** A request body as sent: raw text or bytes, with the content type it claims (undefined: none). */
export interface HostileBody {
  name: string
  body: string | Uint8Array
  contentType?: string
}

const JSON_TYPE = 'application/json'
const MiB = 1024 * 1024

export const deepArray = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)
export const deepObject = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)

/** Values of every JSON type, plus the awkward ones (huge numbers, empty containers, nested nulls). */
export const WRONG_TYPES: ReadonlyArray<[string, string]> = [
  ['zero', '0'],
  ['negative', '-1'],
  ['float', '1.5'],
  ['huge number', '1e400'],
  ['unsafe integer', '9007199254740993'],
  ['true', 'true'],
  ['false', 'false'],
  ['null', 'null'],
  ['empty string', '""'],
  ['blank string', '"   "'],
  ['string', '"surprise"'],
  ['empty object', '{}'],
  ['object', '{"x":{"y":[1,"2",null]}}'],
  ['empty array', '[]'],
  ['array of numbers', '[1,2,3]'],
  ['array of nulls', '[null,null]'],
  ['nested arrays', '[[[]]]'],
  // String(x) and `${x}` throw a TypeError on these: no conversion to a primitive exists.
  ['object with toString', '{"toString":1,"valueOf":2}'],
  ['array holding such an object', '[{"toString":1}]'],
]

/** Strings that trip naive code: lone surrogates (as JSON escapes), NUL, RTL overrides, emoji, combining marks. */
export const UNICODE_STRINGS: ReadonlyArray<[string, string]> = [
  ['lone high surrogate', '"\\ud800"'],
  ['lone low surrogate', '"a\\udfffb"'],
  ['NUL', '"a\\u0000b"'],
  ['RTL override', `"${'\u202e'}evil${'\u202c'}"`],
  ['emoji and combining', `"${'\u{1f600}'}e${'\u0301\u0301\u0301'}"`],
  ['byte order mark', `"${'\ufeff'}x"`],
  ['control characters', '"\\u0001\\u001f\\b\\f"'],
]

/** Bodies every route gets, whatever it expects. */
export function fixedBodies(): HostileBody[] {
  const bytes = (...xs: number[]) => new Uint8Array(xs)
  const enc = new TextEncoder()
  return [
    { name: 'empty body', body: '', contentType: JSON_TYPE },
    { name: 'whitespace', body: ' \n\t\r ', contentType: JSON_TYPE },
    { name: 'invalid JSON', body: '{not json', contentType: JSON_TYPE },
    { name: 'truncated JSON', body: '{"title": "abc', contentType: JSON_TYPE },
    { name: 'truncated after colon', body: '{"a":', contentType: JSON_TYPE },
    { name: 'trailing garbage', body: '{"a":1} x', contentType: JSON_TYPE },
    { name: 'single quotes', body: "{'a': 1}", contentType: JSON_TYPE },
    { name: 'scalar number', body: '42', contentType: JSON_TYPE },
    { name: 'scalar string', body: '"hello"', contentType: JSON_TYPE },
    { name: 'scalar true', body: 'true', contentType: JSON_TYPE },
    { name: 'null', body: 'null', contentType: JSON_TYPE },
    { name: 'empty array', body: '[]', contentType: JSON_TYPE },
    { name: 'array of objects', body: '[{},{}]', contentType: JSON_TYPE },
    { name: 'empty object', body: '{}', contentType: JSON_TYPE },
    { name: '10,000 nested arrays', body: deepArray(10_000), contentType: JSON_TYPE },
    { name: '10,000 nested objects', body: deepObject(10_000), contentType: JSON_TYPE },
    { name: 'nesting at the bound', body: deepArray(1000), contentType: JSON_TYPE },
    { name: '__proto__ pollution', body: '{"__proto__": {"polluted": "yes"}, "a": 1}', contentType: JSON_TYPE },
    { name: 'constructor pollution', body: '{"constructor": {"prototype": {"polluted": "yes"}}}', contentType: JSON_TYPE },
    { name: 'non-UTF-8 bytes', body: bytes(0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x22, 0x7d), contentType: JSON_TYPE },
    {
      name: 'UTF-16 body',
      body: new Uint8Array(new Uint16Array([...'{"a":1}'].map((c) => c.charCodeAt(0))).buffer),
      contentType: JSON_TYPE,
    },
    { name: 'byte order mark', body: enc.encode('\ufeff{}'), contentType: JSON_TYPE },
    { name: 'NUL bytes', body: bytes(0, 0, 0, 0), contentType: JSON_TYPE },
    { name: 'text/plain', body: '{"a":1}', contentType: 'text/plain' },
    { name: 'no content type', body: '{"a":1}' },
    { name: 'form content type', body: 'a=1&b=2', contentType: 'application/x-www-form-urlencoded' },
    { name: 'multipart content type', body: '--x\r\n\r\n--x--', contentType: 'multipart/form-data; boundary=x' },
    { name: 'yaml content type', body: 'a: [1, {b: c}]\n', contentType: 'application/yaml' },
    { name: 'yaml alias bomb', body: yamlBomb(), contentType: 'application/yaml' },
    { name: 'deep yaml', body: 'a: ' + '['.repeat(5000) + ']'.repeat(5000), contentType: 'application/yaml' },
    { name: 'xml', body: '<a><b/></a>', contentType: 'application/xml' },
    {
      name: '50,000 keys',
      body: JSON.stringify(Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i]))),
      contentType: JSON_TYPE,
    },
    { name: '1 MiB string value', body: JSON.stringify({ title: 'x'.repeat(MiB) }), contentType: JSON_TYPE },
  ]
}

/**
 * Seven levels of nine aliases over 100-character strings: 4.8 million leaves and half a gigabyte
 * of JSON if anything expands it (the YAML parser itself refuses only from eight levels on).
 */
export function yamlBomb(
  tail = 'resource: {metadata: {title: t, author: a}, content: *g, check: *g}\nspace: *g\ntitle: *g\nmessages: *g\n',
): string {
  const lines = [
    `a: &a [${Array(9)
      .fill(JSON.stringify('lol'.repeat(34)))
      .join(',')}]`,
  ]
  for (let i = 1; i < 7; i++) {
    const prev = String.fromCharCode(96 + i)
    const cur = String.fromCharCode(97 + i)
    lines.push(`${cur}: &${cur} [${Array(9).fill(`*${prev}`).join(',')}]`)
  }
  return lines.join('\n') + '\n' + tail
}

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * The fields the walk mistypes: the top-level members the route's schema declares (or the sample
 * has), then one level into the sample's objects and into the first element of its object arrays.
 */
export function fieldPaths(schema: unknown, sample: unknown): string[] {
  const declared = (schema as { properties?: Record<string, unknown> } | undefined)?.properties
  const top = declared ? Object.keys(declared) : isPlain(sample) ? Object.keys(sample) : []
  const out = [...top]
  if (!isPlain(sample)) return out
  for (const k of top) {
    const v = sample[k]
    if (isPlain(v)) for (const k2 of Object.keys(v)) out.push(`${k}.${k2}`)
    if (Array.isArray(v) && isPlain(v[0])) for (const k2 of Object.keys(v[0])) out.push(`${k}.0.${k2}`)
  }
  return out
}

const MARK = '\u0000__hostile__\u0000'

/** `base` with the value at dotted `path` replaced by raw JSON text (which may be invalid on purpose). */
function withRawAt(base: Record<string, unknown>, path: string, raw: string): string {
  const copy = structuredClone(base) as Record<string, any>
  const parts = path.split('.')
  let node: any = copy
  for (const p of parts.slice(0, -1)) {
    if (typeof node[p] !== 'object' || node[p] === null) node[p] = {}
    node = node[p]
  }
  node[parts[parts.length - 1]] = MARK
  return JSON.stringify(copy).replace(JSON.stringify(MARK), () => raw)
}

/** Per-field bodies: `path` set to each wrong type, each unicode edge case, a 1 MiB string, deep nesting, prototype keys. */
export function fieldBodies(base: Record<string, unknown>, path: string): HostileBody[] {
  const at = (raw: string) => withRawAt(base, path, raw)
  const out: HostileBody[] = []
  const add = (name: string, body: string) => out.push({ name: `${path}: ${name}`, body, contentType: JSON_TYPE })
  for (const [name, raw] of WRONG_TYPES) add(name, at(raw))
  for (const [name, raw] of UNICODE_STRINGS) add(name, at(raw))
  add('1 MiB string', at(JSON.stringify('é'.repeat(MiB / 2))))
  add('10,000 nested arrays', at(deepArray(10_000)))
  add('2,000 nested objects', at(deepObject(2_000)))
  add('nesting just under the bound', at(deepObject(990)))
  add('bool queries just under the bound', at('{"bool":{"must":['.repeat(330) + '{"match_all":{}}' + ']}}'.repeat(330)))
  add('__proto__ object', at('{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}}'))
  if (!path.includes('.')) {
    // Duplicate keys: the last one wins in JSON.parse; the first carries the valid value.
    const dup = JSON.stringify(base).slice(0, -1)
    add('duplicate key', `${dup}${dup.length > 1 ? ',' : ''}${JSON.stringify(path)}:{"dup":[1]}}`)
  }
  return out
}

const HOSTILE_VALUES: unknown[] = [
  null,
  0,
  -1,
  1e308,
  true,
  '',
  '\u0000',
  '\ud800',
  '\u202e',
  'a'.repeat(4096),
  [],
  [null],
  {},
  { __proto__: null, constructor: { prototype: { polluted: 'yes' } } },
  Object.fromEntries([['__proto__', { polluted: 'yes' }]]),
  '../../etc/passwd',
  '*',
  '_all',
  '${jndi:ldap://x}',
  '<script>',
  "' OR 1=1 --",
]

/** Random mutations of a valid body: some values anywhere in the tree replaced by hostile ones. */
export function mutatedBodies(rng: Rng, base: unknown, count: number): HostileBody[] {
  const out: HostileBody[] = []
  for (let i = 0; i < count; i++) {
    const copy = structuredClone(base)
    const edits = 1 + rng.int(3)
    const done: string[] = []
    let root: unknown = copy
    for (let e = 0; e < edits; e++) {
      const [path, next] = mutateAt(rng, root)
      root = next
      done.push(path)
    }
    out.push({ name: `mutation #${i} (${done.join(', ')})`, body: JSON.stringify(root), contentType: JSON_TYPE })
  }
  return out
}

function mutateAt(rng: Rng, root: unknown): [string, unknown] {
  // A fresh copy each time (own `__proto__` keys survive a JSON round trip), so no two places share a node.
  const value = JSON.parse(JSON.stringify(rng.pick(HOSTILE_VALUES)))
  // Walk down a random branch; replace the node where the walk stops.
  const path: Array<string | number> = []
  let parent: any = undefined
  let key: string | number | undefined
  let node: any = root
  while (node && typeof node === 'object' && rng.next() < 0.7) {
    const keys: Array<string | number> = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node)
    if (keys.length === 0) break
    key = rng.pick(keys)
    path.push(key)
    parent = node
    node = node[key]
  }
  if (parent === undefined) return ['<root>', value]
  // Sometimes add a key next to it instead of replacing it.
  if (!Array.isArray(parent) && rng.next() < 0.2) {
    const extra = rng.pick(['__proto__', 'constructor', 'prototype', '', '\u0000', 'id', '_id', 'toString'])
    Object.defineProperty(parent, extra, { value, enumerable: true, configurable: true, writable: true })
    return [`${path.slice(0, -1).join('.')}+${JSON.stringify(extra)}`, root]
  }
  parent[key!] = value
  return [path.join('.'), root]
}

/** Path parameter values that must never reach a 5xx (already percent-encoded as they go in the URL). */
export const ODD_PARAMS: ReadonlyArray<[string, string]> = [
  ['NUL', '%00'],
  ['dot-dot slash', '..%2F..%2Fetc%2Fpasswd'],
  ['dot', '.'],
  ['dot-dot', '..'],
  ['10 KiB id', 'a'.repeat(10 * 1024)],
  ['unicode', '%E2%80%AE%F0%9F%98%80%C3%A9'],
  ['lone surrogate (CESU)', '%ED%A0%80'],
  ['invalid escape', '%ZZ%E0%A4%A'],
  ['space', '%20'],
  ['wildcard', '*'],
  ['_all', '_all'],
  ['comma list', 'a,b,c'],
  ['hash-like', '%23x'],
  ['__proto__', '__proto__'],
  ['constructor', 'constructor'],
]

/** Query strings (appended after `?`) with repeated, empty, huge and prototype-named parameters. */
export function oddQueries(names: readonly string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [
    ['empty query', ''],
    ['lonely ampersands', '&&&'],
    ['empty name', '=x'],
    ['__proto__', '__proto__=x&__proto__[polluted]=yes'],
    ['constructor', 'constructor=1&hasOwnProperty=2&toString=3'],
    ['huge unknown', `x=${'y'.repeat(6000)}`],
  ]
  for (const n of names) {
    out.push([`${n} repeated`, `${n}=draft&${n}=test&${n}=1`])
    out.push([`${n} empty`, `${n}=`])
    out.push([`${n} bare`, n])
    out.push([`${n} huge`, `${n}=${'9'.repeat(4000)}`])
    out.push([`${n} unicode`, `${n}=%F0%9F%98%80%00%ED%A0%80`])
    out.push([`${n} negative`, `${n}=-1`])
    out.push([`${n} bracketed`, `${n}[a]=1&${n}[b]=2`])
  }
  return out
}

/** Query names the plugin routes read (a few extra stay harmless). */
export const QUERY_NAMES = [
  'space',
  'category',
  'forced',
  'pre_packaged',
  'perform_permission_check',
  'size',
  'startIndex',
  'sortOrder',
  'sortString',
  'detector_id',
  'detectorType',
  'findingIds',
  'startTime',
  'endTime',
  'severity',
  'searchString',
  'refresh',
] as const

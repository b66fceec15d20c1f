/**
 * The index of a differential workload: a mapping with every field type the embedded store
 * supports (multi-fields, date formats, dynamic templates, `flat_object`), and documents with edge
 * values (unicode, very large and negative numbers, nulls, empty arrays, arrays of objects, missing
 * fields, deep objects).
 */
import type { Random } from './random'

/** The mapped leaves a query or aggregation may name, by what their values are. */
export const FIELDS = {
  keyword: ['kw', 'tags', 'msg.raw', 'user.name', 'items.code', 'dyn_label'],
  text: ['msg', 'title'],
  integral: ['seq', 'n_long', 'n_int', 'n_short', 'n_byte', 'user.age'],
  fractional: ['n_double', 'n_float', 'n_scaled'],
  date: ['ts', 'day', 'ts_nanos'],
  boolean: ['flag'],
  ip: ['addr'],
} as const

export const MAPPING = {
  dynamic_templates: [
    { labels_as_keywords: { match: 'dyn_*', match_mapping_type: 'string', mapping: { type: 'keyword' } } },
    { counts_as_integers: { match: '*_count', match_mapping_type: 'long', mapping: { type: 'integer' } } },
  ],
  properties: {
    seq: { type: 'long' },
    kw: { type: 'keyword' },
    tags: { type: 'keyword', ignore_above: 12 },
    msg: { type: 'text', fields: { raw: { type: 'keyword', ignore_above: 64 } } },
    title: { type: 'match_only_text' },
    n_long: { type: 'long' },
    n_int: { type: 'integer' },
    n_short: { type: 'short' },
    n_byte: { type: 'byte' },
    n_double: { type: 'double' },
    n_float: { type: 'float' },
    n_scaled: { type: 'scaled_float', scaling_factor: 100 },
    flag: { type: 'boolean' },
    ts: { type: 'date' },
    day: { type: 'date', format: 'yyyy-MM-dd||epoch_millis' },
    ts_nanos: { type: 'date_nanos' },
    addr: { type: 'ip' },
    loc: { type: 'geo_point' },
    labels: { type: 'flat_object' },
    user: { properties: { name: { type: 'keyword' }, age: { type: 'integer' } } },
    items: { properties: { code: { type: 'keyword' }, qty: { type: 'long' } } },
    kw_alias: { type: 'alias', path: 'kw' },
    n_alias: { type: 'alias', path: 'n_long' },
    msg_alias: { type: 'alias', path: 'msg' },
    ts_alias: { type: 'alias', path: 'ts' },
  },
}

/** The fields with an alias (in MAPPING), by the alias: queries and sorts name them either way. */
export const ALIAS_OF: Record<string, string> = { kw: 'kw_alias', n_long: 'n_alias', msg: 'msg_alias', ts: 'ts_alias' }

// Text without emoji and CJK: the embedded analyzer keeps `emoji😀` and `日本語` as one token each where
// Lucene's standard tokenizer splits them (README, "Differences between the modes"); keywords keep them.
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'error', 'login', 'failed', 'Zürich', 'naïve', 'Ωmega', 'quick', 'brown', 'fox']
const KEYWORDS = ['a', 'b', 'c', 'Δelta', 'x-y', 'UPPER', 'lower', 'with space', '😀', 'long-keyword-value']
const IPS = ['10.0.0.1', '10.0.0.42', '192.168.1.7', '::1', '2001:db8::8a2e:370:7334', '172.16.5.4']
const LONGS = [0, 1, -1, 42, -42, 2 ** 53 - 1, -(2 ** 53) + 1, 1e15, -1e15, 123456789]
const INTS = [0, 7, -7, 2147483647, -2147483648, 1000]
const SHORTS = [0, 32767, -32768, 12, -12]
const BYTES = [0, 127, -128, 5, -5]
const DOUBLES = [0, 0.5, -0.5, 1e300, -1e300, 3.25, -2.75, 1e-10, 1024.125]
const FLOATS = [0, 0.5, -1.25, 100.75, 65504, -3.5]
const SCALED = [0, 1.23, -4.56, 99.99, 1000.01]
/** Instants around DST changes and midnights, where time zones and offsets move buckets. */
const BASE = Date.UTC(2024, 2, 28, 22, 30)

export function sentence(r: Random, min = 1, max = 6): string {
  return Array.from({ length: r.int(min, max) }, () => r.pick(WORDS)).join(' ')
}

function instant(r: Random): number {
  return BASE + r.int(-3 * 24, 10 * 24) * 3_600_000 + r.pick([0, 17, 59]) * 60_000
}

/** A value or, now and then, a null, an empty array or nothing (the field is left out). */
function sometimes<T>(r: Random, value: () => T): T | null | [] | undefined {
  const x = r.next()
  if (x < 0.06) return null
  if (x < 0.1) return []
  if (x < 0.18) return undefined
  return value()
}

function deep(r: Random, depth: number): Record<string, unknown> {
  if (depth === 0) return { leaf: r.pick(KEYWORDS), n: r.pick(INTS) }
  return { [`level${depth}`]: deep(r, depth - 1), ...(r.chance(0.3) ? { side: r.pick(WORDS) } : {}) }
}

export function document(r: Random, seq: number): Record<string, unknown> {
  const d: Record<string, unknown> = {
    seq,
    kw: sometimes(r, () => (r.chance(0.2) ? r.some(KEYWORDS, 1, 3) : r.pick(KEYWORDS))),
    tags: sometimes(r, () => r.some(KEYWORDS, 1, 3)),
    msg: sometimes(r, () => sentence(r)),
    title: sometimes(r, () => sentence(r, 1, 3)),
    n_long: sometimes(r, () => r.pick(LONGS)),
    n_int: sometimes(r, () => r.pick(INTS)),
    n_short: sometimes(r, () => r.pick(SHORTS)),
    n_byte: sometimes(r, () => r.pick(BYTES)),
    n_double: sometimes(r, () => r.pick(DOUBLES)),
    n_float: sometimes(r, () => r.pick(FLOATS)),
    n_scaled: sometimes(r, () => r.pick(SCALED)),
    flag: sometimes(r, () => r.chance(0.5)),
    ts: sometimes(r, () => new Date(instant(r)).toISOString()),
    day: sometimes(r, () => (r.chance(0.3) ? instant(r) : new Date(instant(r)).toISOString().slice(0, 10))),
    ts_nanos: sometimes(r, () =>
      new Date(instant(r))
        .toISOString()
        .replace('Z', `${r.int(100, 999)}123Z`)
        .replace(/\.\d{3}/, '.000'),
    ),
    addr: sometimes(r, () => r.pick(IPS)),
    loc: sometimes(r, () => ({ lat: r.int(-8000, 8000) / 100, lon: r.int(-17000, 17000) / 100 })),
    labels: sometimes(r, () => ({ env: r.pick(KEYWORDS), nested: { code: r.pick(INTS), ok: r.chance(0.5) } })),
    user: sometimes(r, () => ({ name: r.pick(KEYWORDS), ...(r.chance(0.7) ? { age: r.int(0, 99) } : {}) })),
    items: sometimes(r, () => Array.from({ length: r.int(1, 3) }, () => ({ code: r.pick(KEYWORDS), qty: r.pick(LONGS) }))),
  }
  if (r.chance(0.3)) d.dyn_label = r.pick(KEYWORDS)
  if (r.chance(0.3)) d.hit_count = r.int(0, 1000)
  if (r.chance(0.2)) d.free_text = sentence(r, 1, 3)
  if (r.chance(0.2)) d.deep = deep(r, r.int(2, 8))
  for (const k of Object.keys(d)) if (d[k] === undefined) delete d[k]
  return d
}

/** Values present in the documents, for queries that match something. */
export function valuesOf(docs: Record<string, unknown>[], path: string): unknown[] {
  const out: unknown[] = []
  const walk = (v: unknown, parts: string[]): void => {
    if (v === null || v === undefined) return
    if (Array.isArray(v)) return v.forEach((x) => walk(x, parts))
    if (parts.length === 0) return void out.push(v)
    if (typeof v === 'object') walk((v as Record<string, unknown>)[parts[0]], parts.slice(1))
  }
  for (const d of docs) walk(d, path === 'msg.raw' ? ['msg'] : path.split('.'))
  return out
}

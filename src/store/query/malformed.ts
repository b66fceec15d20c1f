/**
 * Whether a leaf value fits its field's type, and what it indexes as: the one rule a write
 * (mapping.ts, which refuses the document or, with `ignore_malformed`, skips the value) and a
 * read (`_ignored`, which lists the fields a document's values were skipped from) share.
 */
import { type FieldSpec, kindOf } from './field-spec'
import type { ExceptionCause } from '../errors'
import { parseDate } from './dates'
import { DEFAULT_DATE_FORMAT, dateFieldFailure } from './date-pattern'
import { type FieldPath, fieldPath } from './doc'
import { parseIp } from './ip'

/** A value its field's type cannot read; `cause` is OpenSearch's words for why, when it gives some (and what caused that). */
export class Malformed {
  constructor(
    readonly cause?: string,
    readonly causedBy?: ExceptionCause,
  ) {}
}

const INT_RANGE: Record<string, [number, number]> = {
  byte: [-128, 127],
  short: [-32768, 32767],
  integer: [-2147483648, 2147483647],
  long: [Number.MIN_SAFE_INTEGER * 1024, Number.MAX_SAFE_INTEGER * 1024],
  unsigned_long: [0, Number.MAX_SAFE_INTEGER * 2048],
}

/** Field types whose `ignore_malformed` OpenSearch honours. */
export const MALFORMED_IGNORABLE = new Set(['number', 'date', 'ip'])

/**
 * The key a leaf indexes as for a field of this kind (numbers and dates as numbers, booleans as
 * 1/0; undefined for kinds indexed as text), or Malformed.
 */
export function parseLeaf(kind: string, type: string, v: unknown, format?: string): number | Malformed | undefined {
  switch (kind) {
    case 'number': {
      const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN
      if (!Number.isFinite(n)) return new Malformed()
      const range = INT_RANGE[type]
      if (range && (n < range[0] || n > range[1]))
        return new Malformed(`Value [${v}] is out of range for ${type === 'integer' ? 'an integer' : `a ${type}`}`)
      return n
    }
    case 'date': {
      // A mapping without a format reads OpenSearch's default, strictly.
      const ms = parseDate(v, format ?? DEFAULT_DATE_FORMAT)
      if (ms !== undefined) return ms
      const why = dateFieldFailure(typeof v === 'string' ? v : JSON.stringify(v), format)
      return new Malformed(why.reason, why.caused_by)
    }
    case 'boolean':
      if (v !== true && v !== false && v !== 'true' && v !== 'false' && v !== '')
        return new Malformed(`Failed to parse value [${v}] as only [true] or [false] are allowed.`)
      return v === true || v === 'true' ? 1 : 0
    case 'ip':
      return typeof v === 'string' && parseIp(v) !== undefined ? undefined : new Malformed(`'${String(v)}' is not an IP string literal.`)
    default:
      return undefined
  }
}

/** Integer types keep whole numbers: a cast of a mapped integer value truncates. */
export const isIntegerType = (type: string): boolean => INT_RANGE[type] !== undefined

/** The fields of each mapping that skip malformed values, listed once per mapping. */
const skipping = new WeakMap<ReadonlyMap<string, FieldSpec>, Array<[string, FieldSpec, FieldPath]>>()

/**
 * OpenSearch's `_ignored` of a document: the fields (mapped `ignore_malformed`) some value of
 * which its type could not read, so the write skipped it. Read from the source each time, by the
 * rule the write used.
 */
export function ignoredFields(source: Record<string, unknown>, specs: ReadonlyMap<string, FieldSpec>): string[] {
  let fields = skipping.get(specs)
  if (fields === undefined)
    skipping.set(
      specs,
      (fields = [...specs].filter(([, s]) => s.ignore_malformed && s.path === undefined).map(([name, s]) => [name, s, fieldPath(name)])),
    )
  const out: string[] = []
  for (const [name, spec, path] of fields) if (path.collect(source).some((v) => isMalformed(v, spec))) out.push(name)
  return out.length < 2 ? out : hashSetOrder(out)
}

/** A leaf value of a field that its type cannot read. */
export const isMalformed = (v: unknown, spec: FieldSpec): boolean =>
  v !== null && typeof v !== 'object' && parseLeaf(kindOf(spec.type), spec.type, v, spec.format) instanceof Malformed

/**
 * Names in the order OpenSearch lists `_ignored`: its parser collects them in a Java HashSet,
 * whose iteration follows the buckets of the names' String.hashCode (spread, masked by the table
 * size: 16, doubled past three quarters full), and insertion order within a bucket.
 */
function hashSetOrder(names: string[]): string[] {
  let size = 16
  while (names.length > size * 0.75) size *= 2
  const bucket = (name: string) => {
    let h = 0
    for (let i = 0; i < name.length; i++) h = (Math.imul(31, h) + name.charCodeAt(i)) | 0
    return (h ^ (h >>> 16)) & (size - 1)
  }
  return names
    .map((name, i) => ({ name, i, b: bucket(name) }))
    .sort((x, y) => x.b - y.b || x.i - y.i)
    .map((x) => x.name)
}

/**
 * The IoCs of an `IOC_UPLOAD` source (reference 3.2): the peer's upload payload (`iocs` of STIX2
 * IoC objects `{id?, name?, type, value, severity?, ...}`) or a STIX2 bundle (`{type:"bundle",
 * objects:[...]}`, its indicators' patterns `[ipv4-addr:value = '...']`, `[file:hashes.MD5 = '...']`
 * and the cyber-observables themselves), each validated against its type: `ipv4-addr` and
 * `ipv6-addr` (a CIDR range allowed) of their own family, `domain-name`, `hashes` of MD5, SHA-1 or
 * SHA-256 length, and `url`. An upload with any invalid IoC is refused whole, naming the first ones.
 */
import { ApiError } from '../../http/errors'
import { isObject } from '../../json'
import { sha256Hex } from '../../content/hash'
import { type IocType, isIocType, normalizeDomain, normalizeUrl, parseIp } from './ioc-types'

/** The IoC as kept in a source (the peer's STIX2 IoC fields). */
export interface UploadedIoc {
  id: string
  name: string
  type: IocType
  value: string
  severity: string | null
  created: string | null
  modified: string | null
  description: string | null
  labels: string[]
  spec_version: string | null
}

/** IoCs per upload: a bound on the memory one request can add to the index. */
export const MAX_UPLOAD_IOCS = 200_000
const MAX_NAMED_ERRORS = 5

const HASH_LENGTHS = new Set([32, 40, 64])

/** Why a value is not an IoC of the type, or undefined when it is. */
export function invalidValue(type: IocType, value: string): string | undefined {
  if (type === 'ipv4-addr' || type === 'ipv6-addr') {
    const ip = parseIp(value)
    if (!ip || value.includes('[') || /^[\d.]+:\d+$/.test(value.trim())) return `not an IP address or CIDR range`
    if ((ip.family === 4) !== (type === 'ipv4-addr')) return `not an ${type === 'ipv4-addr' ? 'IPv4' : 'IPv6'} address`
    return undefined
  }
  if (type === 'domain-name') return normalizeDomain(value) ? undefined : 'not a domain name'
  if (type === 'url') return normalizeUrl(value) ? undefined : 'not a URL'
  const h = value.trim()
  return /^[0-9a-f]+$/i.test(h) && HASH_LENGTHS.has(h.length) ? undefined : 'not an MD5, SHA-1 or SHA-256 hash'
}

const str = (v: unknown) => (typeof v === 'string' ? v : null)
/** STIX2 hash keys the index matches. */
const HASH_KEYS = /^'?(md5|sha-?1|sha-?256)'?$/i

/** (type, value) pairs of a STIX2 pattern: `[a:value = 'x' OR file:hashes.'SHA-256' = 'y']`. */
function patternValues(pattern: string): Array<{ type: string; value: string }> {
  const out: Array<{ type: string; value: string }> = []
  const re = /([a-z0-9-]+):([A-Za-z0-9_.'-]+)\s*=\s*'((?:[^'\\]|\\.)*)'/g
  for (let m = re.exec(pattern); m; m = re.exec(pattern)) {
    const [, object, path, raw] = m
    const value = raw.replace(/\\(.)/g, '$1')
    if (object === 'file' && path.startsWith('hashes.') && HASH_KEYS.test(path.slice(7))) out.push({ type: 'hashes', value })
    else if (path === 'value') out.push({ type: object, value })
  }
  return out
}

/** The raw IoCs of one STIX2 object (an indicator may name several; unknown objects none). */
function fromStix(o: Record<string, unknown>): Array<Record<string, unknown>> {
  const common = {
    id: o.id,
    name: o.name,
    created: o.created,
    modified: o.modified,
    description: o.description,
    labels: o.labels,
    spec_version: o.spec_version,
  }
  if (o.type === 'indicator' && typeof o.pattern === 'string')
    return patternValues(o.pattern).map((p, i, all) => ({ ...common, ...p, id: all.length > 1 ? `${String(o.id)}#${i}` : o.id }))
  if (o.type === 'file' && isObject(o.hashes))
    return Object.entries(o.hashes)
      .filter(([k]) => HASH_KEYS.test(k))
      .map(([, v]) => ({ ...common, type: 'hashes', value: v }))
  if (typeof o.value === 'string' || typeof o.type !== 'string') return [o]
  return []
}

/** The raw entries of an upload: the payload's list, or the IoCs a bundle's objects carry. */
function entriesOf(iocs: unknown): unknown[] {
  if (Array.isArray(iocs)) return iocs.flatMap((x) => (isObject(x) && typeof x.value !== 'string' ? fromStix(x) : [x]))
  if (isObject(iocs) && iocs.type === 'bundle' && Array.isArray(iocs.objects))
    return iocs.objects.flatMap((x) => (isObject(x) ? fromStix(x) : [x]))
  throw new ApiError(400, 'source.ioc_upload.iocs must be a list of IoCs or a STIX2 bundle')
}

/**
 * The validated IoCs of an upload, their ids unique within the source (a value listed twice is one
 * IoC). `allowed` (the source's `ioc_types`, when given) bounds the types.
 */
export function parseUpload(iocs: unknown, allowed: string[] | undefined): UploadedIoc[] {
  const entries = entriesOf(iocs)
  if (entries.length > MAX_UPLOAD_IOCS) throw new ApiError(400, `An upload holds at most ${MAX_UPLOAD_IOCS} IoCs (${entries.length} given)`)
  const types = allowed?.map((t) => t.toLowerCase())
  const errors: string[] = []
  const out = new Map<string, UploadedIoc>()
  entries.forEach((raw, i) => {
    if (!isObject(raw) || typeof raw.type !== 'string' || typeof raw.value !== 'string') {
      errors.push(`iocs[${i}]: an IoC has a type and a value`)
      return
    }
    const type = raw.type.toLowerCase()
    if (!isIocType(type)) return void errors.push(`iocs[${i}]: unsupported IoC type [${raw.type}]`)
    if (types && !types.includes(type)) return void errors.push(`iocs[${i}]: type [${type}] is not in the source's ioc_types`)
    const why = invalidValue(type, raw.value)
    if (why) return void errors.push(`iocs[${i}]: [${raw.value}] is ${why}`)
    const value = raw.value.trim()
    const id = typeof raw.id === 'string' && raw.id ? raw.id : sha256Hex(`${type}\0${value}`).slice(0, 32)
    out.set(id, {
      id,
      name: str(raw.name) ?? value,
      type,
      value,
      severity: str(raw.severity),
      created: str(raw.created),
      modified: str(raw.modified),
      description: str(raw.description),
      labels: Array.isArray(raw.labels) ? raw.labels.filter((l): l is string => typeof l === 'string') : [],
      spec_version: str(raw.spec_version),
    })
  })
  if (errors.length > 0)
    throw new ApiError(
      400,
      `Invalid IoCs (${errors.length}): ${errors.slice(0, MAX_NAMED_ERRORS).join('; ')}${errors.length > MAX_NAMED_ERRORS ? '; ...' : ''}`,
    )
  return [...out.values()]
}

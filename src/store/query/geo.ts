/**
 * `geo_point` values and the `geo_distance` / `geo_bounding_box` queries, as OpenSearch reads
 * them: a point is `{lat, lon}`, `"lat,lon"`, `[lon, lat]`, a geohash or `POINT (lon lat)`;
 * distances take OpenSearch's units (default meters) and are arc (haversine) distances on the
 * mean Earth radius, or `plane` (equirectangular) ones.
 */
import { ParsingError } from '../errors'
import { isObject } from './doc'

export interface GeoPoint {
  lat: number
  lon: number
}

export const EARTH_MEAN_RADIUS = 6371008.7714

const BASE32 = '0123456789bcdefghjkmnpqrstuvwxyz'

function decodeGeohash(hash: string): GeoPoint | undefined {
  let latLo = -90
  let latHi = 90
  let lonLo = -180
  let lonHi = 180
  let even = true
  for (const c of hash.toLowerCase()) {
    const v = BASE32.indexOf(c)
    if (v < 0) return undefined
    for (let bit = 4; bit >= 0; bit--) {
      const on = (v >> bit) & 1
      if (even) {
        const mid = (lonLo + lonHi) / 2
        if (on) lonLo = mid
        else lonHi = mid
      } else {
        const mid = (latLo + latHi) / 2
        if (on) latLo = mid
        else latHi = mid
      }
      even = !even
    }
  }
  // Its cell's lower left corner, as OpenSearch reads a geohash (`u173zq` is `u173zq000000`).
  return { lat: latLo, lon: lonLo }
}

function num(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v)
  return undefined
}

/** One point as given, or undefined when it is not a point. */
export function parseGeoPoint(v: unknown): GeoPoint | undefined {
  if (isObject(v)) {
    const lat = num(v.lat)
    const lon = num(v.lon)
    if (lat !== undefined && lon !== undefined) return { lat, lon }
    if (v.type === 'Point' && Array.isArray(v.coordinates)) return parseGeoPoint(v.coordinates)
    return undefined
  }
  if (Array.isArray(v)) {
    if ((v.length === 2 || v.length === 3) && v.every((x) => typeof x === 'number')) return { lon: v[0] as number, lat: v[1] as number }
    return undefined
  }
  if (typeof v === 'string') {
    const s = v.trim()
    const wkt = /^POINT\s*\(\s*(\S+)\s+(\S+)(?:\s+\S+)?\s*\)$/i.exec(s)
    if (wkt) {
      const lon = num(wkt[1])
      const lat = num(wkt[2])
      return lat !== undefined && lon !== undefined ? { lat, lon } : undefined
    }
    const parts = s.split(',')
    if (parts.length === 2 || parts.length === 3) {
      const lat = num(parts[0])
      const lon = num(parts[1])
      return lat !== undefined && lon !== undefined ? { lat, lon } : undefined
    }
    if (/^[0-9b-hjkmnp-z]{1,12}$/i.test(s)) return decodeGeohash(s)
  }
  return undefined
}

/** Every point a source value holds (one point, or an array of points). */
export function geoPointsOf(v: unknown): GeoPoint[] {
  if (v === undefined || v === null) return []
  const one = parseGeoPoint(v)
  if (one) return [one]
  if (Array.isArray(v)) return v.flatMap(geoPointsOf)
  return []
}

/** True for what a geo_point field takes: a point, null, or an array of those. */
export function isGeoValue(v: unknown, depth = 0): boolean {
  if (v === null || v === undefined || parseGeoPoint(v)) return true
  return Array.isArray(v) && depth < 3 && v.every((x) => isGeoValue(x, depth + 1))
}

/** The raw value(s) at a dotted path of a source, arrays of objects walked, arrays of numbers kept whole. */
export function rawValuesAt(source: unknown, path: string): unknown[] {
  const out: unknown[] = []
  const walk = (node: unknown, parts: string[]) => {
    if (parts.length === 0) {
      out.push(node)
      return
    }
    if (Array.isArray(node)) {
      for (const x of node) walk(x, parts)
      return
    }
    if (!isObject(node)) return
    for (let i = parts.length; i >= 1; i--) {
      const key = parts.slice(0, i).join('.')
      if (Object.hasOwn(node, key)) walk(node[key], parts.slice(i))
    }
  }
  walk(source, path.split('.'))
  return out
}

const UNITS: Array<[RegExp, number]> = [
  [/^(mi|miles?)$/, 1609.344],
  [/^(yd|yards?)$/, 0.9144],
  [/^(ft|feet)$/, 0.3048],
  [/^(in|inch|inches)$/, 0.0254],
  [/^(km|kilometers?)$/, 1000],
  [/^(m|meters?)$/, 1],
  [/^(cm|centimeters?)$/, 0.01],
  [/^(mm|millimeters?)$/, 0.001],
  [/^(NM|nmi|nauticalmiles?)$/, 1852],
]

/** Meters in one `unit` (`km`, `mi`, `NM`...), or undefined for a name OpenSearch does not know. */
export function unitMeters(unit: string): number | undefined {
  for (const [re, factor] of UNITS) if (re.test(unit)) return factor
  return undefined
}

/** A distance (`"12km"`, `"1.5mi"`, a number of meters) in meters. */
export function parseDistance(v: unknown, query = 'geo_distance'): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v
  if (typeof v !== 'string') throw new ParsingError(`[${query}] requires a distance`)
  const m = /^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z]*)\s*$/.exec(v)
  if (!m) throw new ParsingError(`failed to parse [${v}] as a distance`)
  const n = Number(m[1])
  if (m[2] === '') return n
  const factor = unitMeters(m[2])
  if (factor !== undefined) return n * factor
  throw new ParsingError(`failed to parse [${v}] as a distance: unknown distance unit [${m[2]}]`)
}

/** Java's Math.toRadians (one multiplication: the last bit of a distance depends on it). */
const rad = (d: number) => d * 0.017453292519943295

const HALF_BITS = new Float64Array(1)
const HALF_WORDS = new Uint32Array(HALF_BITS.buffer)

/**
 * The haversine (arc) distance between two points, in meters, as OpenSearch measures it (Lucene's
 * SloppyMath.haversinMeters, with exact cosines where Lucene reads a table): in `1 - cos` form,
 * with the key's last three bits cleared, so points a few millimeters apart are 0 there and here.
 */
export function arcDistance(a: GeoPoint, b: GeoPoint): number {
  const x1 = rad(a.lat)
  const x2 = rad(b.lat)
  HALF_BITS[0] = 1 - Math.cos(x1 - x2) + Math.cos(x1) * Math.cos(x2) * (1 - Math.cos(rad(a.lon - b.lon)))
  HALF_WORDS[0] &= 0xfffffff8
  return EARTH_MEAN_RADIUS * 2 * Math.asin(Math.min(1, Math.sqrt(HALF_BITS[0] * 0.5)))
}

/**
 * The plane (equirectangular) distance, cheaper and less exact far from the equator. As
 * OpenSearch's GeoUtils.planeDistance, the longitude difference is not wrapped at the dateline:
 * 179 and -179 are 358 degrees apart on the plane.
 */
export function planeDistance(a: GeoPoint, b: GeoPoint): number {
  const x = rad(b.lon - a.lon) * Math.cos(rad((b.lat + a.lat) / 2))
  const y = rad(b.lat - a.lat)
  return Math.sqrt(x * x + y * y) * EARTH_MEAN_RADIUS
}

function checkPoint(p: GeoPoint, query: string, method: string): GeoPoint {
  if (method === 'IGNORE_MALFORMED' || method === 'COERCE') {
    if (method === 'COERCE') {
      let lat = p.lat
      let lon = ((((p.lon + 180) % 360) + 360) % 360) - 180
      if (lat > 90) lat = 180 - lat
      if (lat < -90) lat = -180 - lat
      return { lat, lon }
    }
    return p
  }
  if (p.lat < -90 || p.lat > 90) throw new ParsingError(`illegal latitude value [${p.lat}] for ${query}`)
  if (p.lon < -180 || p.lon > 180) throw new ParsingError(`illegal longitude value [${p.lon}] for ${query}`)
  return p
}

const DISTANCE_KEYS = new Set(['distance', 'distance_type', 'validation_method', '_name', 'boost', 'ignore_unmapped', 'unit'])

export interface GeoDistanceQuery {
  field: string
  center: GeoPoint
  meters: number
  ignoreUnmapped: boolean
  name?: string
}

export function parseGeoDistance(body: unknown): GeoDistanceQuery {
  if (!isObject(body)) throw new ParsingError('[geo_distance] malformed query')
  const fields = Object.keys(body).filter((k) => !DISTANCE_KEYS.has(k))
  if (fields.length !== 1)
    throw new ParsingError(
      fields.length === 0 ? '[geo_distance] requires a field and a point' : '[geo_distance] query doesnt support multiple fields',
    )
  if (body.distance === undefined) throw new ParsingError("geo_distance requires 'distance' to be specified")
  const method = String(body.validation_method ?? 'STRICT').toUpperCase()
  const given = parseGeoPoint(body[fields[0]])
  if (!given) throw new ParsingError(`[geo_distance] failed to parse the point of field [${fields[0]}]`)
  const meters = parseDistance(
    typeof body.distance === 'number' && typeof body.unit === 'string' ? `${body.distance}${body.unit}` : body.distance,
  )
  if (!(meters > 0) && meters !== 0) throw new ParsingError(`[geo_distance] invalid distance [${String(body.distance)}]`)
  // Read and checked, not used: OpenSearch's query measures arcs whatever the type.
  const type = String(body.distance_type ?? 'arc')
  if (type !== 'arc' && type !== 'plane') throw new ParsingError(`No geo distance for [${type}]`)
  const out: GeoDistanceQuery = {
    field: fields[0],
    center: checkPoint(given, 'geo_distance', method),
    meters,
    ignoreUnmapped: body.ignore_unmapped === true,
  }
  if (typeof body._name === 'string') out.name = body._name
  return out
}

export interface GeoBoxQuery {
  field: string
  top: number
  bottom: number
  left: number
  right: number
  ignoreUnmapped: boolean
  name?: string
}

const BOX_KEYS = new Set(['validation_method', '_name', 'boost', 'ignore_unmapped', 'type'])

export function parseGeoBoundingBox(body: unknown): GeoBoxQuery {
  if (!isObject(body)) throw new ParsingError('[geo_bbox] malformed query')
  const fields = Object.keys(body).filter((k) => !BOX_KEYS.has(k))
  if (fields.length !== 1) throw new ParsingError('[geo_bbox] query requires exactly one field')
  const spec = body[fields[0]]
  const method = String(body.validation_method ?? 'STRICT').toUpperCase()
  let top: number | undefined
  let bottom: number | undefined
  let left: number | undefined
  let right: number | undefined
  if (isObject(spec)) {
    if (typeof spec.wkt === 'string') {
      const m = /^BBOX\s*\(\s*([^,]+),\s*([^,]+),\s*([^,]+),\s*([^)]+)\)$/i.exec(spec.wkt.trim())
      if (!m) throw new ParsingError(`failed to parse WKT bounding box [${spec.wkt}]`)
      ;[left, right, top, bottom] = [m[1], m[2], m[3], m[4]].map(Number)
    }
    const corner = (k: string) => (spec[k] === undefined ? undefined : parseGeoPoint(spec[k]))
    const tl = corner('top_left')
    const br = corner('bottom_right')
    const tr = corner('top_right')
    const bl = corner('bottom_left')
    if (tl) ((top = tl.lat), (left = tl.lon))
    if (br) ((bottom = br.lat), (right = br.lon))
    if (tr) ((top = tr.lat), (right = tr.lon))
    if (bl) ((bottom = bl.lat), (left = bl.lon))
    for (const [k, set] of [
      ['top', (v: number) => (top = v)],
      ['bottom', (v: number) => (bottom = v)],
      ['left', (v: number) => (left = v)],
      ['right', (v: number) => (right = v)],
    ] as const) {
      const v = num(spec[k])
      if (v !== undefined) set(v)
    }
  }
  if (
    top === undefined ||
    bottom === undefined ||
    left === undefined ||
    right === undefined ||
    [top, bottom, left, right].some(Number.isNaN)
  )
    throw new ParsingError(
      `failed to parse bounding box. Conflicting definition found using well-known text and explicit corners, or corners missing`,
    )
  if (method === 'STRICT') {
    for (const lat of [top, bottom]) if (lat < -90 || lat > 90) throw new ParsingError(`illegal latitude value [${lat}] for [geo_bbox]`)
    for (const lon of [left, right]) if (lon < -180 || lon > 180) throw new ParsingError(`illegal longitude value [${lon}] for [geo_bbox]`)
    if (top < bottom) throw new ParsingError(`top is below bottom corner: ${top} vs. ${bottom}`)
  }
  const out: GeoBoxQuery = { field: fields[0], top, bottom, left, right, ignoreUnmapped: body.ignore_unmapped === true }
  if (typeof body._name === 'string') out.name = body._name
  return out
}

export function inBox(p: GeoPoint, b: GeoBoxQuery): boolean {
  if (p.lat > b.top || p.lat < b.bottom) return false
  // A box whose left edge is east of its right edge crosses the dateline.
  return b.left <= b.right ? p.lon >= b.left && p.lon <= b.right : p.lon >= b.left || p.lon <= b.right
}

const LAT_DECODE = 180 / 2 ** 32
const LON_DECODE = 360 / 2 ** 32
/** The largest encoded coordinate: 90 and 180 are encoded as the double below them. */
const MAX_ENCODED = 2 ** 31 - 1

const encodeLat = (lat: number): number => (lat === 90 ? MAX_ENCODED : Math.floor(lat / LAT_DECODE))
const encodeLon = (lon: number): number => (lon === 180 ? MAX_ENCODED : Math.floor(lon / LON_DECODE))

/**
 * A point as OpenSearch's doc values hold it (Lucene's GeoEncodingUtils): each coordinate as a
 * 32-bit integer, and the coordinates decoded from it, which aggregations and sorts read.
 */
export interface StoredPoint extends GeoPoint {
  latBits: number
  lonBits: number
}

export function docValuePoint(p: GeoPoint): StoredPoint | undefined {
  if (!(p.lat >= -90 && p.lat <= 90 && p.lon >= -180 && p.lon <= 180)) return undefined
  const latBits = encodeLat(p.lat)
  const lonBits = encodeLon(p.lon)
  return { latBits, lonBits, lat: latBits * LAT_DECODE, lon: lonBits * LON_DECODE }
}

/** Every point a document's source holds at `path`, as doc values hold them (out-of-range points left out). */
export function docValuePoints(source: unknown, path: string): StoredPoint[] {
  const out: StoredPoint[] = []
  for (const v of rawValuesAt(source, path))
    for (const p of geoPointsOf(v)) {
      const s = docValuePoint(p)
      if (s) out.push(s)
    }
  return out
}

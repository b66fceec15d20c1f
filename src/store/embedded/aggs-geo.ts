/**
 * Aggregations over `geo_point` fields, as OpenSearch answers them (what map visualizations ask):
 * `geo_bounds`, `geo_centroid`, the `geotile_grid` and `geohash_grid` cells, and `geo_distance`
 * rings around an origin. Points are read as doc values hold them (docValuePoints), so bounds and
 * centroids answer OpenSearch's digits (40.1 reads 40.099999965168536) and cells its keys.
 */
import { FieldParseError, IllegalArgument } from '../errors'
import { type DocView, isObject } from '../query/doc'
import {
  arcDistance,
  docValuePoints,
  type GeoPoint,
  parseDistance,
  parseGeoPoint,
  planeDistance,
  type StoredPoint,
  unitMeters,
} from '../query/geo'
import {
  type Agg,
  type Aggs,
  type AggSpec,
  type BucketBudget,
  collectInRanges,
  defineCheckedAgg,
  fieldParam,
  instantiate,
  keyedBuckets,
  results,
  type TargetCtx,
} from './aggs'
import { CompensatedSum } from './compensated-sum'
import { javaDouble } from './java-double'

/**
 * The points of field `field` in a document, in doc-values order (by latitude, then longitude,
 * encoded); undefined for an index where the field is unmapped, an error where it is not a geo_point.
 */
class GeoReader {
  private readonly paths = new Map<string, string | undefined>()
  constructor(
    private readonly field: string,
    private readonly aggType: string,
  ) {}

  points(d: DocView, t: TargetCtx): StoredPoint[] {
    let path = this.paths.get(t.name)
    if (!this.paths.has(t.name)) {
      const spec = t.specs?.get(this.field)
      if (spec && spec.type !== 'geo_point')
        throw new IllegalArgument(`Field [${this.field}] of type [${spec.type}] is not supported for aggregation [${this.aggType}]`)
      path = spec ? (spec.path ?? this.field) : t.specs ? undefined : this.field
      this.paths.set(t.name, path)
    }
    if (path === undefined) return []
    const out = docValuePoints(d.source, path)
    if (out.length > 1) out.sort((a, b) => a.latBits - b.latBits || a.lonBits - b.lonBits)
    return out
  }
}

/** `geo_bounds`: the box around every point; with `wrap_longitude`, the narrower of the boxes across or not across the dateline. */
class GeoBoundsAgg implements Agg {
  private readonly reader: GeoReader
  private readonly wrap: boolean
  private top = -Infinity
  private bottom = Infinity
  private posLeft = Infinity
  private posRight = -Infinity
  private negLeft = Infinity
  private negRight = -Infinity

  constructor(spec: AggSpec) {
    this.reader = new GeoReader(fieldParam(spec.type, spec.params), spec.type)
    this.wrap = spec.params.wrap_longitude !== false && spec.params.wrap_longitude !== 'false'
  }

  collect(d: DocView, t: TargetCtx): void {
    for (const { lat, lon } of this.reader.points(d, t)) {
      this.top = Math.max(this.top, lat)
      this.bottom = Math.min(this.bottom, lat)
      if (lon >= 0) {
        this.posLeft = Math.min(this.posLeft, lon)
        this.posRight = Math.max(this.posRight, lon)
      } else {
        this.negLeft = Math.min(this.negLeft, lon)
        this.negRight = Math.max(this.negRight, lon)
      }
    }
  }

  result(): Record<string, unknown> {
    if (this.top === -Infinity) return {}
    let [left, right] = [this.negLeft, this.posRight]
    if (this.posLeft === Infinity) right = this.negRight
    else if (this.negLeft === Infinity) left = this.posLeft
    else if (this.wrap && this.posRight - this.negLeft > 180 - this.posLeft - (-180 - this.negRight))
      [left, right] = [this.posLeft, this.negRight]
    return { bounds: { top_left: { lat: this.top, lon: left }, bottom_right: { lat: this.bottom, lon: right } } }
  }
}

/** `geo_centroid`: the mean of every point (Kahan sums in doc-values order), and how many points. */
class GeoCentroidAgg implements Agg {
  private readonly reader: GeoReader
  private readonly lat = new CompensatedSum()
  private readonly lon = new CompensatedSum()
  private count = 0

  constructor(spec: AggSpec) {
    this.reader = new GeoReader(fieldParam(spec.type, spec.params), spec.type)
  }

  collect(d: DocView, t: TargetCtx): void {
    for (const p of this.reader.points(d, t)) {
      this.count++
      this.lat.add(p.lat)
      this.lon.add(p.lon)
    }
  }

  result(): Record<string, unknown> {
    if (this.count === 0) return { count: 0 }
    return { location: { lat: this.lat.value / this.count, lon: this.lon.value / this.count }, count: this.count }
  }
}

/** A grid's cell: its key and what orders equal counts (OpenSearch's long hash, compared as its parts). */
interface Cell {
  key: string
  order: number[]
}

interface GridBucket extends Cell {
  count: number
  subs: Map<string, Agg>
}

const positiveInt = (spec: AggSpec, what: 'size' | 'shard_size'): number | undefined => {
  const v = spec.params[what]
  if (v === undefined) return undefined
  const n = Number(v)
  if (!Number.isInteger(n)) throw new IllegalArgument(`[${what}] must be an integer, found [${String(v)}]`)
  if (n <= 0) throw new FieldParseError(spec.type, what, `[${what}] must be greater than 0. Found [${n}] in [${spec.name}]`)
  return n
}

/** `geotile_grid` and `geohash_grid`: documents per cell of their points, the most populated first. */
abstract class GridAgg implements Agg {
  private readonly reader: GeoReader
  private readonly buckets = new Map<string, GridBucket>()
  private readonly size: number
  private readonly box?: { top: number; left: number; bottom: number; right: number }
  /** The sub-aggregations' definitions, parsed once. */
  private readonly subs: Aggs

  constructor(
    private readonly spec: AggSpec,
    private readonly budget?: BucketBudget,
  ) {
    this.reader = new GeoReader(fieldParam(spec.type, spec.params), spec.type)
    this.subs = spec.subs()
    const p = spec.params
    this.size = positiveInt(spec, 'size') ?? 10_000
    positiveInt(spec, 'shard_size')
    if (p.bounds !== undefined) {
      const corners = isObject(p.bounds) ? [parseGeoPoint(p.bounds.top_left), parseGeoPoint(p.bounds.bottom_right)] : []
      if (!corners[0] || !corners[1]) throw new IllegalArgument(`[bounds] of [${spec.name}] must hold [top_left] and [bottom_right] points`)
      this.box = { top: corners[0].lat, left: corners[0].lon, bottom: corners[1].lat, right: corners[1].lon }
    }
  }

  protected abstract cell(p: StoredPoint): Cell

  private inBox(p: StoredPoint): boolean {
    const b = this.box
    if (!b) return true
    if (p.lat > b.top || p.lat < b.bottom) return false
    return b.left <= b.right ? p.lon >= b.left && p.lon <= b.right : p.lon >= b.left || p.lon <= b.right
  }

  collect(d: DocView, t: TargetCtx): void {
    const seen = new Set<string>()
    for (const p of this.reader.points(d, t)) {
      if (!this.inBox(p)) continue
      const c = this.cell(p)
      if (seen.has(c.key)) continue
      seen.add(c.key)
      let b = this.buckets.get(c.key)
      if (!b) {
        if (this.subs.size === 0) this.budget?.candidate()
        else this.budget?.add()
        this.buckets.set(c.key, (b = { ...c, count: 0, subs: instantiate(this.subs, this.budget) }))
      }
      b.count++
      for (const sub of b.subs.values()) sub.collect(d, t)
    }
  }

  result(): Record<string, unknown> {
    const later = (a: GridBucket, b: GridBucket) => {
      for (let i = 0; i < a.order.length; i++) if (a.order[i] !== b.order[i]) return b.order[i] - a.order[i]
      return 0
    }
    const shown = [...this.buckets.values()].sort((a, b) => b.count - a.count || later(a, b)).slice(0, this.size)
    if (this.subs.size === 0) this.budget?.add(shown.length)
    return { buckets: shown.map((b) => ({ key: b.key, doc_count: b.count, ...results(b.subs) })) }
  }
}

const MAX_ZOOM = 29

class GeotileGridAgg extends GridAgg {
  private readonly zoom: number
  constructor(spec: AggSpec, budget?: BucketBudget) {
    super(spec, budget)
    this.zoom = precisionOf(spec, 7, 0, MAX_ZOOM, (n) => `Invalid geotile_grid precision of ${n}. Must be between 0 and ${MAX_ZOOM}.`)
  }

  /** GeoTileUtils: x from the longitude, y from the latitude's Web Mercator projection, both clipped to the grid. */
  protected cell(p: StoredPoint): Cell {
    const tiles = 2 ** this.zoom
    const clip = (n: number) => Math.min(tiles - 1, Math.max(0, n))
    const x = p.lon === -180 ? 0 : clip(Math.floor(((p.lon + 180) / 360) * tiles))
    const sin = Math.sin((p.lat * Math.PI) / 180)
    const y = clip(Math.floor((0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI)) * tiles))
    return { key: `${this.zoom}/${x}/${y}`, order: [x, y] }
  }
}

const BASE32 = '0123456789bcdefghjkmnpqrstuvwxyz'
const EARTH_EQUATOR = 2 * Math.PI * 6378137.0
const EARTH_POLAR_DISTANCE = Math.PI * 6356752.314245

/** GeoUtils.geoHashLevelsForPrecision: the level whose cells are no larger than `meters` across. */
function geohashLevelFor(meters: number): number {
  if (meters === 0) return 12
  const ratio = 1 + EARTH_POLAR_DISTANCE / EARTH_EQUATOR
  const part = Math.ceil(EARTH_EQUATOR / Math.sqrt((meters * meters) / (ratio * ratio)))
  if (part === 1) return 1
  const bits = Math.ceil(Math.log(part) / Math.log(2))
  const full = Math.floor(bits / 5)
  const left = bits - full * 5
  return full + (left > 0 ? 1 : 0) + full + (left > 3 ? 1 : 0)
}

class GeohashGridAgg extends GridAgg {
  private readonly level: number
  constructor(spec: AggSpec, budget?: BucketBudget) {
    super(spec, budget)
    const p = spec.params.precision
    // A distance names the level whose cells are that small.
    const given = typeof p === 'string' && !/^\s*\d+\s*$/.test(p) ? { ...spec, params: { ...spec.params, precision: levelOf(p) } } : spec
    this.level = precisionOf(given, 5, 1, 12, (n) => `Invalid geohash aggregation precision of ${n}. Must be between 1 and 12.`)
  }

  /** The geohash of the point's encoded coordinates: their bits from the highest, longitude first, five to a character. */
  protected cell(p: StoredPoint): Cell {
    let lon = p.lonBits + 2 ** 31
    let lat = p.latBits + 2 ** 31
    let key = ''
    let ch = 0
    for (let bit = 0; bit < this.level * 5; bit++) {
      let on: number
      if (bit % 2 === 0) {
        on = lon >= 2 ** 31 ? 1 : 0
        lon = (lon % 2 ** 31) * 2
      } else {
        on = lat >= 2 ** 31 ? 1 : 0
        lat = (lat % 2 ** 31) * 2
      }
      ch = ch * 2 + on
      if (bit % 5 === 4) {
        key += BASE32[ch]
        ch = 0
      }
    }
    // OpenSearch orders equal counts by the cell's signed 64-bit hash: at level 12 a first character from `h` on sets its sign bit.
    const order = [...key].map((c) => BASE32.indexOf(c))
    if (this.level === 12 && order[0] >= 16) order[0] -= 32
    return { key, order }
  }
}

function levelOf(distance: string): number {
  try {
    return geohashLevelFor(parseDistance(distance, 'geohash_grid'))
  } catch {
    throw new IllegalArgument(`failed to build [precision] from [${distance}]`)
  }
}

function precisionOf(spec: AggSpec, dflt: number, min: number, max: number, message: (n: number) => string): number {
  const v = spec.params.precision
  if (v === undefined) return dflt
  const n = Number(v)
  if (!Number.isInteger(n)) throw new IllegalArgument(`[precision] must be an integer, found [${String(v)}]`)
  if (n < min || n > max) throw new FieldParseError(spec.type, 'precision', message(n))
  return n
}

interface Ring {
  key: string
  from?: number
  to?: number
  count: number
  subs: Map<string, Agg>
}

/** `geo_distance`: documents per ring of distances from `origin` (from inclusive, to exclusive), in `unit`. */
class GeoDistanceAgg implements Agg {
  private readonly reader: GeoReader
  private readonly origin: GeoPoint
  private readonly unit: number
  private readonly plane: boolean
  private readonly keyed: boolean
  private readonly rings: Ring[]

  constructor(spec: AggSpec, budget?: BucketBudget) {
    const p = spec.params
    if (p.origin === undefined) throw new IllegalArgument(`Aggregation [${spec.name}] must define an [origin].`)
    this.reader = new GeoReader(fieldParam(spec.type, p), spec.type)
    const origin = parseGeoPoint(p.origin)
    if (!origin) throw new IllegalArgument(`[origin] of [${spec.name}] is not a geo point: [${JSON.stringify(p.origin)}]`)
    this.origin = origin
    const unit = p.unit === undefined ? 1 : unitMeters(String(p.unit))
    if (unit === undefined) throw new FieldParseError('geo_distance', 'unit', `No distance unit match [${String(p.unit)}]`)
    this.unit = unit
    const type = p.distance_type === undefined ? 'arc' : String(p.distance_type).toLowerCase()
    if (type !== 'arc' && type !== 'plane')
      throw new FieldParseError('geo_distance', 'distance_type', `No geo distance for [${String(p.distance_type)}]`)
    this.plane = type === 'plane'
    this.keyed = p.keyed === true
    if (!Array.isArray(p.ranges) || p.ranges.length === 0)
      throw new IllegalArgument(`No [ranges] specified for the [${spec.name}] aggregation`)
    const subs = spec.subs()
    this.rings = p.ranges.map((r: unknown) => {
      if (!isObject(r)) throw new IllegalArgument(`[ranges] of [${spec.name}] must hold objects`)
      budget?.add()
      const bound = (v: unknown, what: string) => {
        if (v === undefined || v === null) return undefined
        const n = Number(v)
        if (!Number.isFinite(n)) throw new IllegalArgument(`[${what}] of a range of [${spec.name}] must be a number`)
        return n
      }
      const from = bound(r.from, 'from')
      const to = bound(r.to, 'to')
      const key =
        typeof r.key === 'string' ? r.key : `${from === undefined ? '*' : javaDouble(from)}-${to === undefined ? '*' : javaDouble(to)}`
      return { key, from, to, count: 0, subs: instantiate(subs, budget) }
    })
  }

  collect(d: DocView, t: TargetCtx): void {
    const dist = this.plane ? planeDistance : arcDistance
    collectInRanges(
      this.rings,
      this.reader.points(d, t).map((p) => dist(this.origin, p) / this.unit),
      d,
      t,
    )
  }

  result(): Record<string, unknown> {
    const buckets = this.rings.map((r) => ({
      key: r.key,
      from: r.from ?? 0,
      ...(r.to !== undefined ? { to: r.to } : {}),
      doc_count: r.count,
      ...results(r.subs),
    }))
    return keyedBuckets(buckets, this.keyed)
  }
}

defineCheckedAgg('geo_bounds', (spec) => new GeoBoundsAgg(spec))
defineCheckedAgg('geo_centroid', (spec) => new GeoCentroidAgg(spec))
defineCheckedAgg('geotile_grid', (spec, budget) => new GeotileGridAgg(spec, budget))
defineCheckedAgg('geohash_grid', (spec, budget) => new GeohashGridAgg(spec, budget))
defineCheckedAgg('geo_distance', (spec, budget) => new GeoDistanceAgg(spec, budget))

/**
 * The `_geo_distance` sort: each document by its distance from the request's point(s), as
 * OpenSearch sorts it. Distances are measured from the points doc values hold (docValuePoints) to
 * every origin given, in `unit` (meters by default), arc or plane; a document holding several
 * points (or sorted against several origins) takes the least (`mode: min`, ascending's default),
 * the greatest (`max`, descending's), their mean (`avg`) or `median`. A document without the field
 * is infinitely far; a field not mapped at all is an error unless `ignore_unmapped`.
 */
import { IllegalArgument, ParsingError } from '../errors'
import { type DocView, isObject } from '../query/doc'
import { arcDistance, docValuePoints, type GeoPoint, parseGeoPoint, planeDistance, unitMeters } from '../query/geo'
import type { FieldSpec } from '../query/compile'

export interface GeoSort {
  field: string
  origins: GeoPoint[]
  /** Meters per unit of the sort values. */
  unit: number
  plane: boolean
  mode?: 'min' | 'max' | 'avg' | 'median'
  ignoreUnmapped: boolean
}

const OPTIONS = new Set(['order', 'unit', 'mode', 'distance_type', 'ignore_unmapped', 'validation_method', 'nested'])

export function parseGeoSort(body: Record<string, unknown>): GeoSort {
  let field: string | undefined
  let origins: GeoPoint[] = []
  for (const [k, v] of Object.entries(body)) {
    if (OPTIONS.has(k)) continue
    if (typeof v !== 'string' && !Array.isArray(v) && !isObject(v)) throw new ParsingError(`[_geo_distance] does not support [${k}]`)
    if (field !== undefined) throw new ParsingError(`Trying to reset fieldName to [${k}], already set to [${field}].`)
    field = k
    origins = originsOf(v)
  }
  if (field === undefined || origins.length === 0) throw new IllegalArgument('No geo points specified for the [_geo_distance] sort')
  if (body.nested !== undefined) throw new ParsingError('[_geo_distance] does not support [nested] here')
  const unit = body.unit === undefined ? 1 : unitMeters(String(body.unit))
  if (unit === undefined) throw new IllegalArgument(`No distance unit match [${String(body.unit)}]`)
  const type = body.distance_type === undefined ? 'arc' : String(body.distance_type).toLowerCase()
  if (type !== 'arc' && type !== 'plane') throw new IllegalArgument(`No geo distance for [${String(body.distance_type)}]`)
  const mode = body.mode === undefined ? undefined : String(body.mode).toLowerCase()
  if (mode !== undefined && mode !== 'min' && mode !== 'max' && mode !== 'avg' && mode !== 'median')
    throw new IllegalArgument(`sort_mode [${mode}] isn't supported for sorting by geo distance`)
  return { field, origins, unit, plane: type === 'plane', mode, ignoreUnmapped: body.ignore_unmapped === true }
}

/** One origin, or an array of them (a `[lon, lat]` pair is one point). */
function originsOf(v: unknown): GeoPoint[] {
  const one = parseGeoPoint(v)
  if (one) return [one]
  if (Array.isArray(v))
    return v.map((x) => {
      const p = parseGeoPoint(x)
      if (!p) throw new ParsingError(`[_geo_distance] cannot read [${JSON.stringify(x)}] as a geo point`)
      return p
    })
  throw new ParsingError(`[_geo_distance] cannot read [${JSON.stringify(v)}] as a geo point`)
}

/** The sort value of each document of an index mapped by `specs`: its distance, or undefined (none). */
export function geoSortReader(
  geo: GeoSort,
  order: 1 | -1,
  specs: ReadonlyMap<string, FieldSpec> | undefined,
): (d: DocView) => number | undefined {
  const spec = specs?.get(geo.field)
  if (specs && spec?.type !== 'geo_point') {
    if (geo.ignoreUnmapped && !spec) return () => undefined
    if (!spec) throw new IllegalArgument(`failed to find mapper for [${geo.field}] for geo distance based sort`)
    throw new IllegalArgument(
      `field [${geo.field}] of type [${spec.type}] is not a geo_point and cannot be used for geo distance based sort`,
    )
  }
  const path = spec?.path ?? geo.field
  const distance = geo.plane ? planeDistance : arcDistance
  const mode = geo.mode ?? (order === 1 ? 'min' : 'max')
  return (d) => {
    const all: number[] = []
    for (const stored of docValuePoints(d.source, path)) for (const o of geo.origins) all.push(distance(o, stored) / geo.unit)
    // No point: OpenSearch's value is Infinity, last ascending and first descending (answered as null).
    if (all.length === 0) return Infinity
    if (all.length === 1) return all[0]
    // Loops, not spreads: a document may hold more points than a call takes arguments.
    if (mode === 'min') return all.reduce((a, b) => (b < a ? b : a))
    if (mode === 'max') return all.reduce((a, b) => (b > a ? b : a))
    if (mode === 'avg') return all.reduce((a, b) => a + b, 0) / all.length
    all.sort((a, b) => a - b)
    const mid = all.length >> 1
    return all.length % 2 === 1 ? all[mid] : (all[mid - 1] + all[mid]) / 2
  }
}

/** Whether a sort entry is a `_geo_distance` one (its body an object). */
export const isGeoSort = (field: string, v: unknown): boolean => field === '_geo_distance' && isObject(v)

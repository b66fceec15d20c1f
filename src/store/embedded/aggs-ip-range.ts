/**
 * `ip_range`: buckets of addresses between `from` (inclusive) and `to` (exclusive), or in a
 * `mask` (CIDR), as OpenSearch answers them: bounds written as addresses, keys `from-to` (`*`
 * for an open end) or the mask.
 */
import { FieldParseError, IllegalArgument, ParsingError } from '../errors'
import { type DocView, isObject } from '../query/doc'
import { formatIp, parseCidr, parseIp } from '../query/ip'
import {
  type Agg,
  type AggSpec,
  type Aggs,
  type BucketBudget,
  collectInRanges,
  defineCheckedAgg,
  FieldAgg,
  fieldParam,
  instantiate,
  keyedBuckets,
  results,
  type TargetCtx,
} from './aggs'

const ADDRESSES = 1n << 128n

interface IpRange {
  key: string
  from?: bigint
  to?: bigint
  count: number
  subs: Map<string, Agg>
}

class IpRangeAgg extends FieldAgg implements Agg {
  private readonly ranges: IpRange[]
  private readonly keyed: boolean

  constructor(spec: AggSpec, budget?: BucketBudget) {
    super(fieldParam('ip_range', spec.params), 'ip_range')
    const p = spec.params
    this.keyed = p.keyed === true
    if (!Array.isArray(p.ranges) || p.ranges.length === 0)
      throw new IllegalArgument(`No [ranges] specified for the [${spec.name}] aggregation`)
    const subs = spec.subs()
    this.ranges = p.ranges.map((r: unknown) => ipRange(r, subs, budget))
    // OpenSearch answers the ranges by from, then to (an open end first, an open end last).
    const order = (a?: bigint, b?: bigint, open = -1) => (a === b ? 0 : a === undefined ? open : b === undefined ? -open : a < b ? -1 : 1)
    this.ranges.sort((a, b) => order(a.from, b.from) || order(a.to, b.to, 1))
  }

  collect(d: DocView, t: TargetCtx): void {
    const ips: bigint[] = []
    for (const v of this.read(d, t)) {
      const ip = typeof v.key === 'string' ? parseIp(v.key) : undefined
      if (ip !== undefined) ips.push(ip)
    }
    collectInRanges(this.ranges, ips, d, t)
  }

  result(): Record<string, unknown> {
    const buckets = this.ranges.map((r) => ({
      key: r.key,
      ...(r.from !== undefined ? { from: formatIp(r.from) } : {}),
      ...(r.to !== undefined ? { to: formatIp(r.to) } : {}),
      doc_count: r.count,
      ...results(r.subs),
    }))
    return keyedBuckets(buckets, this.keyed)
  }
}

/** One range of the request: from/to addresses or a mask, its key given or made. */
function ipRange(r: unknown, subs: Aggs, budget?: BucketBudget): IpRange {
  if (!isObject(r)) throw new ParsingError('[ranges] must hold objects')
  budget?.add()
  const address = (v: unknown): bigint | undefined => {
    if (v === undefined || v === null) return undefined
    const ip = typeof v === 'string' ? parseIp(v) : undefined
    if (ip === undefined) throw new FieldParseError('ip_range', 'ranges', `'${String(v)}' is not an IP string literal.`)
    return ip
  }
  let from = address(r.from)
  let to = address(r.to)
  let key = typeof r.key === 'string' ? r.key : undefined
  if (r.mask !== undefined) {
    const cidr = typeof r.mask === 'string' && r.mask.includes('/') ? parseCidr(r.mask) : undefined
    if (!cidr) throw new FieldParseError('ip_range', 'ranges', `Expected [ip/prefix] but was [${String(r.mask)}]`)
    from = cidr[0] === 0n ? undefined : cidr[0]
    to = cidr[1] + 1n === ADDRESSES ? undefined : cidr[1] + 1n
    key ??= r.mask as string
  }
  key ??= `${from === undefined ? '*' : formatIp(from)}-${to === undefined ? '*' : formatIp(to)}`
  return { key, from, to, count: 0, subs: instantiate(subs, budget) }
}

defineCheckedAgg('ip_range', (spec, budget) => new IpRangeAgg(spec, budget))

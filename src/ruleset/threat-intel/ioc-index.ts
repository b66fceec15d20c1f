/**
 * The synced IoC set in memory, for matching event values at the speed of a detection run: exact
 * values in hash maps per type, IPv4/IPv6 networks in one hash map per prefix length (a lookup
 * probes only the lengths present, at most 33 or 129), domains by label suffix (a listed domain
 * matches its sub-domains), hashes and URLs exact. It holds only what a match needs, the IoC ids
 * by key, plus per IoC what finds its key again on removal (the key itself, shared with the type's
 * map, or for an IPv4 listing a number: no string of its own): a finding reads the rest of the IoC
 * from the store, and matches are rare next to lookups. Near 200 bytes per IoC at a million.
 *
 * Changes arrive per IoC (`put`, `remove`); the sync applies a change batch with `apply` and never
 * rebuilds the set for it.
 */
import { IocFilter } from './ioc-filter'
import { type IocType, iocTypeOf, maskV4, maskV6, normalizeDomain, normalizeHash, normalizeUrl, parseIp, probeKeys } from './ioc-types'

/** One IoC id, or several when feeds list the same value more than once. */
type Ids = string | string[]

/** Removal keys: an IPv4 listing packed as address * 64 + prefix length (exact in a double). */
const packV4 = (addr: number, bits: number) => addr * 64 + bits

/** Adds `id` under `key`: true when the key is new. */
function addId<K>(map: Map<K, Ids>, key: K, id: string): boolean {
  const had = map.get(key)
  if (had === undefined) map.set(key, id)
  else if (typeof had === 'string') {
    if (had !== id) map.set(key, [had, id])
  } else if (!had.includes(id)) had.push(id)
  return had === undefined
}

/** Removes `id` from under `key`: true when the key is gone with it. */
function dropId<K>(map: Map<K, Ids>, key: K, id: string): boolean {
  const had = map.get(key)
  if (had === undefined) return false
  if (typeof had === 'string') return had === id && map.delete(key)
  const rest = had.filter((x) => x !== id)
  if (rest.length === 0) return map.delete(key)
  map.set(key, rest.length === 1 ? rest[0] : rest)
  return false
}

const pushIds = (out: string[], ids: Ids | undefined) => {
  if (ids === undefined) return
  if (typeof ids === 'string') out.push(ids)
  else out.push(...ids)
}

/** Networks of one family by prefix length, the lengths present kept sorted (longest first). */
class PrefixTable<A extends number | string> {
  private readonly byBits = new Map<number, Map<A, Ids>>()
  private lengths: number[] = []

  constructor(private readonly mask: (addr: A, bits: number) => A) {}

  /** True when (addr, bits) is a new key. */
  add(addr: A, bits: number, id: string): boolean {
    let m = this.byBits.get(bits)
    if (!m) {
      this.byBits.set(bits, (m = new Map()))
      this.lengths = [...this.byBits.keys()].sort((a, b) => b - a)
    }
    return addId(m, addr, id)
  }

  /** True when (addr, bits) is no longer a key. */
  drop(addr: A, bits: number, id: string): boolean {
    const m = this.byBits.get(bits)
    if (!m) return false
    const gone = dropId(m, addr, id)
    if (m.size === 0) {
      this.byBits.delete(bits)
      this.lengths = this.lengths.filter((b) => b !== bits)
    }
    return gone
  }

  *keys(): Generator<[A, number]> {
    for (const [bits, m] of this.byBits) for (const addr of m.keys()) yield [addr, bits]
  }

  /** Ids of every listed address or network holding `addr`. */
  match(addr: A, out: string[]): false {
    for (const bits of this.lengths) pushIds(out, this.byBits.get(bits)!.get(this.mask(addr, bits)))
    return false
  }

  get size(): number {
    let n = 0
    for (const m of this.byBits.values()) n += m.size
    return n
  }
}

/** The fields of a stored IoC the index needs: its id, feed type and value (`document.name`). */
export interface IocEntry {
  id: string
  type: string
  value: string
}

export class IocIndex {
  /** Its keys, for the evaluator thread (ioc-filter.ts): replaced by a larger one as the index grows. */
  filter = new IocFilter(0)
  private readonly v4 = new PrefixTable<number>(maskV4)
  private readonly v6 = new PrefixTable<string>(maskV6)
  private readonly domains = new Map<string, Ids>()
  private readonly hashes = new Map<string, Ids>()
  private readonly urls = new Map<string, Ids>()
  /** id -> its key, per type: how a removal finds the key again (IPv6 keeps the value as listed). */
  private readonly keyOf: Record<IocType, Map<string, number | string>> = {
    'ipv4-addr': new Map(),
    'ipv6-addr': new Map(),
    'domain-name': new Map(),
    hashes: new Map(),
    url: new Map(),
  }
  private readonly exact: Record<'domain-name' | 'hashes' | 'url', Map<string, Ids>> = {
    'domain-name': this.domains,
    hashes: this.hashes,
    url: this.urls,
  }

  get size(): number {
    let n = 0
    for (const m of Object.values(this.keyOf)) n += m.size
    return n
  }

  /** Adds or replaces an IoC; false when its type or value is not one the index matches (it is then absent). */
  put(entry: IocEntry): boolean {
    this.remove(entry.id)
    const type = iocTypeOf(entry.type, entry.value)
    if (!type) return false
    const { id, value } = entry
    if (type === 'ipv4-addr' || type === 'ipv6-addr') {
      const ip = parseIp(value)!
      if (ip.family === 4) {
        if (this.v4.add(ip.addr, ip.bits, id)) this.filter.addV4(ip.addr, ip.bits)
        this.keyOf['ipv4-addr'].set(id, packV4(ip.addr, ip.bits))
      } else {
        if (this.v6.add(ip.addr, ip.bits, id)) this.filter.addV6(ip.addr, ip.bits)
        this.keyOf['ipv6-addr'].set(id, value)
      }
    } else {
      const key = type === 'domain-name' ? normalizeDomain(value)! : type === 'hashes' ? normalizeHash(value)! : normalizeUrl(value)!
      if (addId(this.exact[type], key, id)) this.filter.addExact(type, key)
      this.keyOf[type].set(id, key)
    }
    if (this.filter.full) this.filter = this.filterOfKeys()
    return true
  }

  /** A filter of the keys listed now, with room for as many again. */
  private filterOfKeys(): IocFilter {
    const counts = Object.values(this.counts())
    const filter = new IocFilter(2 * counts.reduce((a, b) => a + b, 0))
    for (const [addr, bits] of this.v4.keys()) filter.addV4(addr, bits)
    for (const [addr, bits] of this.v6.keys()) filter.addV6(addr, bits)
    for (const [type, map] of Object.entries(this.exact))
      for (const key of map.keys()) filter.addExact(type as 'domain-name' | 'hashes' | 'url', key)
    return filter
  }

  remove(id: string): void {
    for (const type of Object.keys(this.keyOf) as IocType[]) {
      const key = this.keyOf[type].get(id)
      if (key === undefined) continue
      this.keyOf[type].delete(id)
      if (type === 'ipv4-addr') {
        const packed = key as number
        if (this.v4.drop(Math.floor(packed / 64), packed % 64, id)) this.filter.drop()
      } else if (type === 'ipv6-addr') {
        const ip = parseIp(key as string)!
        if (this.v6.drop(ip.addr as string, ip.bits, id)) this.filter.drop(ip.bits)
      } else if (dropId(this.exact[type], key as string, id)) this.filter.drop()
      return
    }
  }

  /** A change batch: each id's new state, null for a deletion. */
  apply(changes: Iterable<[string, IocEntry | null]>): void {
    for (const [id, entry] of changes) {
      if (entry) this.put(entry)
      else this.remove(id)
    }
  }

  clear(): void {
    for (const m of Object.values(this.keyOf)) for (const id of [...m.keys()]) this.remove(id)
  }

  /**
   * Ids of the IoCs an event value matches as the given type: an address (either family, whatever
   * the field's declared type) against listed addresses and networks, a host name against listed
   * domains and their parents, a hash or URL exactly. Empty for a value that is not of the type.
   */
  match(type: IocType, value: string): string[] {
    const out: string[] = []
    probeKeys(type, value, {
      v4: (addr) => this.v4.match(addr, out),
      v6: (hex) => this.v6.match(hex, out),
      exact: (kind, key, start) => {
        pushIds(out, this.exact[kind].get(start === 0 ? key : key.slice(start)))
        return false
      },
    })
    return out
  }

  /** How many distinct keys each type holds (an operator's view; the bench reports it). */
  counts(): Record<IocType, number> {
    return {
      'ipv4-addr': this.v4.size,
      'ipv6-addr': this.v6.size,
      'domain-name': this.domains.size,
      hashes: this.hashes.size,
      url: this.urls.size,
    }
  }
}

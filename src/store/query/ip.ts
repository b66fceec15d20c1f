/** IPv4/IPv6 parsing for `ip` fields; both become 128-bit numbers (IPv4 as IPv4-mapped IPv6). */
export function parseIp(s: string): bigint | undefined {
  if (s.includes(':')) return parseV6(s)
  const v4 = parseV4(s)
  return v4 === undefined ? undefined : 0xffff00000000n | BigInt(v4)
}

function parseV4(s: string): number | undefined {
  const parts = s.split('.')
  if (parts.length !== 4) return undefined
  let n = 0
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined
    n = n * 256 + Number(p)
  }
  return n
}

function parseV6(s: string): bigint | undefined {
  const zone = s.indexOf('%')
  if (zone >= 0) s = s.slice(0, zone)
  const lastColon = s.lastIndexOf(':')
  if (s.slice(lastColon + 1).includes('.')) {
    // An embedded IPv4 tail (::ffff:1.2.3.4) is two more 16-bit groups.
    const v4 = parseV4(s.slice(lastColon + 1))
    if (v4 === undefined) return undefined
    s = `${s.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`
  }
  const halves = s.split('::')
  if (halves.length > 2) return undefined
  const head = halves[0] ? halves[0].split(':') : []
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : []
  const groups: number[] = []
  for (const g of [...head, ...rest]) {
    if (!/^[0-9a-f]{1,4}$/i.test(g)) return undefined
  }
  const fill = 8 - head.length - rest.length
  if (halves.length === 1 ? fill !== 0 : fill < 1) return undefined
  for (const g of head) groups.push(parseInt(g, 16))
  for (let i = 0; i < (halves.length === 2 ? fill : 0); i++) groups.push(0)
  for (const g of rest) groups.push(parseInt(g, 16))
  let n = 0n
  for (const g of groups) n = (n << 16n) | BigInt(g)
  return n
}

/** `10.0.0.0/8`, `fe80::/10` or a single address -> inclusive [lo, hi]. */
export function parseCidr(s: string): [bigint, bigint] | undefined {
  const slash = s.indexOf('/')
  const addr = parseIp(slash < 0 ? s : s.slice(0, slash))
  if (addr === undefined) return undefined
  if (slash < 0) return [addr, addr]
  let bits = Number(s.slice(slash + 1))
  if (!Number.isInteger(bits) || bits < 0) return undefined
  if (!s.slice(0, slash).includes(':')) bits += 96
  if (bits > 128) return undefined
  const host = (1n << BigInt(128 - bits)) - 1n
  return [addr & ~host, addr | host]
}

/** A test of one field value against a network (`fe80::/10`, `10.0.0.0/8`, an address); undefined for a bad network. */
export function cidrMatcher(network: string): ((value: unknown) => boolean) | undefined {
  const range = parseCidr(network)
  if (!range) return undefined
  return (v) => {
    const ip = typeof v === 'string' ? parseIp(v) : undefined
    return ip !== undefined && ip >= range[0] && ip <= range[1]
  }
}

/** An address as OpenSearch writes it: IPv4 (and IPv4-mapped) dotted, IPv6 with the longest run of zero groups (two or more) as `::`. */
export function formatIp(n: bigint): string {
  if (n >> 32n === 0xffffn) return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 0xffn)).join('.')
  const groups = Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(112 - 16 * i)) & 0xffffn))
  let best = -1
  let bestLen = 1
  for (let i = 0; i < 8;) {
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > bestLen) [best, bestLen] = [i, j - i]
    i = j === i ? i + 1 : j
  }
  const hex = groups.map((g) => g.toString(16))
  if (best < 0) return hex.join(':')
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`
}

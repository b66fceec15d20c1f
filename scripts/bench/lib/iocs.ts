/** Synthetic IoCs of the CTI feed's kinds, deterministic, for the IoC benchmarks. */
import type { IocEntry } from '../../../src/ruleset/threat-intel/ioc-index'

const hex = (i: number, len: number) => Bun.hash(String(i)).toString(16).padStart(16, '0').repeat(8).slice(0, len)
// Never in 10.0.0.0/8, where the bench events' addresses are: a feed lists public addresses, and a
// generated network over 10/8 matched 9% of the events, where the detector bench means 50 to match.
const firstOctet = (i: number) => (((i >>> 24) & 255 || 1) === 10 ? 11 : (i >>> 24) & 255 || 1)
const v4 = (i: number) => `${firstOctet(i)}.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`

/** IoC i, of a kind by its rank (shares near a CTI feed's: addresses and URLs first); `gen` varies the value. */
export function benchIoc(i: number, gen = 0): IocEntry {
  const id = `ioc-${i}`
  const k = i % 20
  const n = i * 7919 + gen * 104729
  if (k < 6) return { id, type: 'ip:port', value: `${v4(n)}:${1024 + (i % 5000)}` }
  if (k < 8) return { id, type: 'ip', value: v4(n) }
  if (k < 9) return { id, type: 'cidr', value: `${v4(n)}/${16 + (i % 13)}` }
  if (k < 10) return { id, type: 'ip', value: `2001:db8:${(n >>> 16).toString(16)}::${(n & 0xffff).toString(16)}` }
  if (k < 13) return { id, type: 'domain', value: `h${n.toString(36)}.example${i % 97}.net` }
  if (k < 14) return { id, type: 'md5_hash', value: hex(n, 32) }
  if (k < 15) return { id, type: 'sha1_hash', value: hex(n, 40) }
  if (k < 17) return { id, type: 'sha256_hash', value: hex(n, 64) }
  return { id, type: 'url', value: `http://h${n.toString(36)}.example/p/${i}.bin` }
}

/**
 * Whether a channel URL may be reached: `plugins.notifications.http.host_allow_list` (when set,
 * the only hosts allowed) and OpenSearch's `opensearch.notifications.core.http.host_deny_list`
 * (default empty, as the peer's). Entries are host names, addresses or CIDR ranges; addresses and
 * ranges are checked against every address the host resolves to, so a name cannot smuggle in a
 * denied address. Resolution is bounded by the connection timeout.
 */
import { lookup } from 'node:dns/promises'
import { connect } from 'node:net'
import { cidrMatcher, parseIp } from '../store/query/ip'

export class DestinationRefused extends Error {}

export interface HostPolicy {
  allow: string[]
  deny: string[]
  connectTimeoutMs: number
}

export const hostList = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean)

/** Resolves the URL's host and checks it against the lists; throws `DestinationRefused` when refused. */
export async function checkDestination(url: URL, policy: HostPolicy): Promise<void> {
  if (policy.allow.length === 0 && policy.deny.length === 0) return
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase()
  const addresses = await resolve(host, policy.connectTimeoutMs)
  const hits = (entry: string) => {
    if (entry === host) return true
    const match = cidrMatcher(entry)
    return match !== undefined && addresses.some((a) => match(a))
  }
  if (policy.allow.length > 0 && !policy.allow.some(hits)) throw new DestinationRefused(`Host [${host}] is not in the allow list`)
  const denied = policy.deny.find(hits)
  if (denied !== undefined) throw new DestinationRefused(`Host [${host}] is denied by the host deny list`)
}

async function resolve(host: string, timeoutMs: number): Promise<string[]> {
  if (parseIp(host) !== undefined) return [host]
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`resolving [${host}] took more than ${timeoutMs} ms`)), timeoutMs)
  })
  try {
    const found = await Promise.race([lookup(host, { all: true }), timeout])
    return found.map((a) => a.address)
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Whether the channel's host accepts a TCP connection within `timeoutMs`: the connection timeout,
 * which the fetch that follows has no separate bound for (its total timeout covers the rest). A
 * host that drops packets fails here in seconds, not at the end of the socket timeout.
 */
export function connectWithin(url: URL, timeoutMs: number): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80))
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port })
    const done = (error?: Error) => {
      clearTimeout(timer)
      socket.destroy()
      if (error) reject(error)
      else resolve()
    }
    const timer = setTimeout(() => done(new Error(`could not connect within ${timeoutMs} ms`)), timeoutMs)
    socket.once('connect', () => done())
    socket.once('error', (e) => done(new Error(`could not connect: ${e.message}`)))
  })
}

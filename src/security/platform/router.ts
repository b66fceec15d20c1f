/**
 * The request handler of a platform-mode node. Only what is ours stays here: the plugin routes of
 * the three extensions, authinfo, and our keys of `_cluster/settings`; the rest is forwarded.
 */
import type { Logger } from '../../http/log'
import { platformClusterSettings } from './cluster-settings'
import type { PlatformEndpoint } from './endpoint'
import { forwardToPlatform } from './forward'

// `/_prometheus/metrics` is this node's own metrics (the platform's are scraped from the platform).
// Notifications are ours too: the channels alerts are delivered through live with our alerts.
const OURS = [
  '/_plugins/_setup',
  '/_plugins/_security_analytics',
  '/_plugins/_content_manager',
  '/_plugins/_notifications',
  '/_plugins/_security/authinfo',
  '/_prometheus/metrics',
]

/** A detector's monitor run now: the monitor ids are ours, whether or not the platform has Alerting. */
const MONITOR_EXECUTE = /^\/_plugins\/_alerting\/monitors\/[^/]+\/_execute\/?$/

/** Paths answered by this node alone in platform mode. */
export function servedLocally(pathname: string): boolean {
  return OURS.some((p) => pathname === p || pathname.startsWith(p + '/')) || MONITOR_EXECUTE.test(pathname)
}

const isClusterSettings = (pathname: string) => pathname === '/_cluster/settings' || pathname === '/_cluster/settings/'

/**
 * The request handler of a platform-mode node: our routes locally (`local`), `_cluster/settings`
 * split between us and the platform, everything else streamed to the platform.
 */
export function platformRouter(endpoint: PlatformEndpoint, log: Logger, local: (request: Request) => Promise<Response>) {
  return (request: Request): Promise<Response> => {
    const pathname = new URL(request.url).pathname
    if (servedLocally(pathname)) return local(request)
    if (isClusterSettings(pathname)) return platformClusterSettings(endpoint, request, local, log)
    return forwardToPlatform(endpoint, request, log)
  }
}

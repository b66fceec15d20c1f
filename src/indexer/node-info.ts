/**
 * What the node reports about itself: its id, file descriptors, disk and uptime (for `_cat/nodes`,
 * `_nodes`, `_nodes/stats` and `_cluster/stats`).
 */
import { totalmem } from 'node:os'
import type { RequestContext } from './context'

/** A stable node id from the cluster and node names (22 base64url characters, like OpenSearch's). */
export function nodeIdOf(ctx: RequestContext): string {
  return nodeIdFrom(ctx.deps.node.values)
}

/** nodeIdOf, from the node's settings (what the index router holds before a request has a context). */
export function nodeIdFrom(values: ReadonlyMap<string, unknown>): string {
  return new Bun.CryptoHasher('sha256')
    .update(`${values.get('cluster.name')}/${values.get('node.name')}`)
    .digest('base64url')
    .slice(0, 22)
}

/** Open file descriptors of this process (Linux), or -1 where that cannot be read, as OpenSearch reports on Windows. */
export async function fileDescriptors(): Promise<{ current: number; max: number }> {
  try {
    const { readdirSync, readFileSync } = await import('node:fs')
    const current = readdirSync('/proc/self/fd').length
    const limits = readFileSync('/proc/self/limits', 'utf8')
    const m = /Max open files\s+(\d+)/.exec(limits)
    return { current, max: m ? Number(m[1]) : -1 }
  } catch {
    return { current: -1, max: -1 }
  }
}

/** Disk figures of the data directory's file system. */
export async function disk(path: string): Promise<{ total: number; avail: number } | undefined> {
  try {
    const { statfs } = await import('node:fs/promises')
    const s = await statfs(path)
    return { total: s.blocks * s.bsize, avail: s.bavail * s.bsize }
  } catch {
    return undefined
  }
}

/** When this process started serving (uptime). */
export const STARTED_AT = Date.now()

/**
 * The JavaScript heap as OpenSearch reports the JVM's. Bun's `heapTotal` is JavaScriptCore's
 * current capacity, which `heapUsed` passes between collections, and it grows on demand: there is
 * no `-Xmx`. So the committed heap is the larger of the two, and the maximum the memory the heap
 * may grow into (the machine's), never below what is committed. Reported against `heapTotal`, a
 * quiet node read 100-115% heap, what monitors take for a node out of memory.
 */
export function heapFigures(): { used: number; committed: number; max: number; percent: number } {
  const { heapUsed, heapTotal } = process.memoryUsage()
  const committed = Math.max(heapTotal, heapUsed)
  const max = Math.max(totalmem(), committed, 1)
  return { used: heapUsed, committed, max, percent: Math.round((100 * heapUsed) / max) }
}

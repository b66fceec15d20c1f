/**
 * The platform's nodes (`storage.platform.url`: one URL or several), sticky with failover: every
 * request goes to the node the last one reached; a node that cannot be reached hands the next
 * requests to the following node of the list, in turn. Sticky rather than round-robin so that a
 * node's connections stay warm and a lost node costs one failed attempt, not one in every N.
 *
 * The failed request itself goes to the next node only when sending it again cannot apply it
 * twice: the connection was never made (refused, no route, no such host: nothing was sent), or it
 * is a read (GET, HEAD). A write whose connection broke or timed out after it was sent may have
 * been applied (a create-only lock or a bulk would then conflict with itself or double): it fails
 * as the platform being unavailable, and its caller's own policy decides (the spec's 503).
 */

/** Failures before anything reached the node: resending is safe whatever the request. */
const NEVER_SENT = /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|ConnectionRefused/

const READS = new Set(['GET', 'HEAD'])

function describe(e: unknown): string {
  const { name, code, message } = (e ?? {}) as { name?: unknown; code?: unknown; message?: unknown }
  return `${String(name)} ${String(code)} ${String(message)}`
}

/** Whether `e` says the node could not be reached, so a request may be resent elsewhere. */
function failedToReach(e: unknown, method: string, unreachable: (e: unknown) => boolean): 'resend' | 'fail' | 'other' {
  if (!unreachable(e)) return 'other'
  return NEVER_SENT.test(describe(e)) || READS.has(method.toUpperCase()) ? 'resend' : 'fail'
}

export class PlatformNodes<T> {
  private current = 0

  /**
   * @param nodes one entry per platform node (a URL, or a client bound to one)
   * @param unreachable whether an error of `attempt` means the node could not be reached (or its
   *   connection broke), as opposed to an answer of the platform
   */
  constructor(
    readonly nodes: readonly T[],
    private readonly unreachable: (e: unknown) => boolean,
  ) {
    if (nodes.length === 0) throw new Error('no platform node to connect to')
  }

  /** The node requests go to now. */
  get preferred(): T {
    return this.nodes[this.current]
  }

  /** `attempt` on the current node, then on the next ones while a failure allows resending. */
  async run<R>(method: string, attempt: (node: T) => Promise<R>): Promise<R> {
    const start = this.current
    for (let i = 0; ; i++) {
      const index = (start + i) % this.nodes.length
      try {
        return await attempt(this.nodes[index])
      } catch (e) {
        const verdict = failedToReach(e, method, this.unreachable)
        if (verdict === 'other') throw e
        // Later requests start at the next node (unless another request moved on already).
        if (this.current === index) this.current = (index + 1) % this.nodes.length
        if (verdict === 'fail' || i + 1 >= this.nodes.length) throw e
      }
    }
  }
}

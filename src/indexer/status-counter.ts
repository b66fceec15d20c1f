/**
 * `_nodes/stats`' `indices.status_counter` (OpenSearch 3.4): the outcomes of this node's
 * document writes (each bulk item counts) and searches, by class of HTTP status: success (below
 * 400), user_error (4xx) and system_failure (5xx).
 */
type Outcomes = { success: number; user_error: number; system_failure: number }

const outcomes = (): Outcomes => ({ success: 0, user_error: 0, system_failure: 0 })

/** Which counter a route's answers go to. */
export type Counted = 'doc' | 'search'

export class StatusCounter {
  private readonly doc = outcomes()
  private readonly search = outcomes()

  note(kind: Counted, status: number): void {
    const o = kind === 'doc' ? this.doc : this.search
    if (status >= 500) o.system_failure++
    else if (status >= 400) o.user_error++
    else o.success++
  }

  figures(): { doc_status: Outcomes; search_response_status: Outcomes } {
    return { doc_status: { ...this.doc }, search_response_status: { ...this.search } }
  }
}

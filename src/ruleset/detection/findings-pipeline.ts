/**
 * The path from matches to the findings stream, bounded by the enrichment settings:
 * `enriched_findings_bulk_size` documents per bulk, at most `enriched_findings_max_in_flight`
 * bulks at once, and at most `correlation.max_pending_findings` findings accepted but not yet
 * written across every detector of this node — beyond that, new findings are shed (counted and
 * logged, never queued without bound), as the spec says. `enriched_findings_index_enabled=false`
 * turns the writing off entirely.
 *
 * Each finding carries a deterministic id (detector, rule, event index, event id, event
 * `_seq_no`), so re-running a batch after a crash between "written" and "checkpoint saved" finds
 * the earlier copies (a create conflict) instead of writing duplicates.
 */
import type { SettingsSnapshot } from '../../config/cluster-settings'
import type { Logger } from '../../http/log'
import type { Store } from '../../store/port'
import { SlicedCalls } from '../../store/sliced-calls'
import { type AppendedFinding, appendFindings, type FindingInput } from '../findings/writer'
import { FINDINGS_SECURITY_STREAM } from '../../setup/indices/names'

export const FINDINGS_SETTINGS = {
  bulkSize: 'plugins.security_analytics.enriched_findings_bulk_size',
  batchSize: 'plugins.security_analytics.enriched_findings_enrich_batch_size',
  flushInterval: 'plugins.security_analytics.enriched_findings_flush_interval',
  maxInFlight: 'plugins.security_analytics.enriched_findings_max_in_flight',
  indexEnabled: 'plugins.security_analytics.enriched_findings_index_enabled',
  maxPending: 'plugins.security_analytics.correlation.max_pending_findings',
} as const

export interface SubmitResult {
  written: number
  duplicates: number
  shed: number
  /** Findings the stream refused (mapping errors and the like): retrying would fail again. */
  failed: number
  /** Findings not written because the store could not take them now: retry later. */
  unavailable: number
  errors: string[]
}

export class FindingsPipeline {
  private pending = 0
  /** Writes in slices of about 10 ms of this thread, shared by every detector of the node. */
  private readonly slices = new SlicedCalls()

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly stream = FINDINGS_SECURITY_STREAM,
  ) {}

  /** Findings accepted and not yet written (all detectors of this node). */
  get inFlight(): number {
    return this.pending
  }

  async submit(findings: Array<FindingInput & { id: string }>, settings: SettingsSnapshot): Promise<SubmitResult> {
    const out: SubmitResult = { written: 0, duplicates: 0, shed: 0, failed: 0, unavailable: 0, errors: [] }
    if (findings.length === 0 || !settings.bool(FINDINGS_SETTINGS.indexEnabled)) return out
    const room = Math.max(0, settings.num(FINDINGS_SETTINGS.maxPending) - this.pending)
    const accepted = findings.slice(0, room)
    out.shed = findings.length - accepted.length
    if (out.shed > 0) this.log.warn('findings shed: too many pending findings', { shed: out.shed, pending: this.pending })
    this.pending += accepted.length
    {
      const bulkSize = settings.num(FINDINGS_SETTINGS.bulkSize)
      const chunks: Array<typeof accepted> = []
      for (let i = 0; i < accepted.length; i += bulkSize) chunks.push(accepted.slice(i, i + bulkSize))
      const workers = Math.min(settings.num(FINDINGS_SETTINGS.maxInFlight), chunks.length)
      let next = 0
      await Promise.all(
        Array.from({ length: workers }, async () => {
          while (next < chunks.length) {
            const chunk = chunks[next++]
            try {
              const items = await this.write(chunk, bulkSize)
              for (const item of items) {
                if (item.status === 201 || item.status === 200) out.written++
                else if (item.status === 409) out.duplicates++
                else {
                  if (item.status === 429 || item.status >= 500) out.unavailable++
                  else out.failed++
                  const reason = item.error ?? `status ${item.status}`
                  if (out.errors.length < 5 && !out.errors.includes(reason)) out.errors.push(reason)
                }
              }
            } catch (e) {
              out.unavailable += chunk.length
              if (out.errors.length < 5) out.errors.push((e as Error).message)
            } finally {
              this.pending -= chunk.length
            }
          }
        }),
      )
    }
    return out
  }

  /**
   * One bulk's findings, in slices that hold this thread about 10 ms each. Durable with the run's
   * checkpoint, written (durably) after them: not each on its own. Deferred: the embedded store
   * commits the slices of a quarter second at once, instead of rewriting the pages they share
   * (the findings stream's field-value index) at every slice.
   */
  private write(chunk: Array<FindingInput & { id: string }>, bulkSize: number): Promise<AppendedFinding[]> {
    return this.slices.run(chunk, bulkSize, (slice) =>
      appendFindings(this.store, slice, { stream: this.stream, bulkSize, refresh: true, durability: 'deferred' }),
    )
  }
}

/** A stable id for one (detector, rule, event version) finding. */
export function findingId(detectorId: string, ruleId: string, index: string, docId: string, seqNo: number): string {
  const h = new Bun.CryptoHasher('sha256')
  h.update(`${detectorId}\u0000${ruleId}\u0000${index}\u0000${docId}\u0000${seqNo}`)
  return h.digest('base64url').slice(0, 32)
}

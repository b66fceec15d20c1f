/**
 * Delivers what outboxes owe (see outbox-model.ts), at least once: a due delivery is first claimed
 * (its `next_at` pushed past the longest an attempt can take, written conditionally on the
 * document's sequence number, so two dispatchers never send the same attempt), then sent with its
 * idempotency key, then its outcome recorded on the document. A crash after the send and before
 * the record sends again after the claim runs out, with the same key. Failures are retried with
 * exponential back-off and full jitter; after `delivery.max_retries` retries the delivery is a dead
 * letter: on the document, in the log (error) and in the metrics. Throttled actions are recorded,
 * not sent.
 */
import type { ClusterSettings, SettingsSnapshot } from '../config/cluster-settings'
import type { Logger } from '../http/log'
import { AlreadyExists, DocumentMissing, IndexNotFound, VersionConflict } from '../store/errors'
import type { SearchHit, Store } from '../store/port'
import type { Channels } from './configs'
import type { DeliveryMetrics } from './metrics'
import { outboxOf, type OutboxDocument, type PendingDelivery } from './outbox-model'
import { deliver, type Delivery } from './send'

/** Where documents with outboxes live: detector and correlation alerts, case notifications. */
export const OUTBOX_INDICES = ['.opensearch-sap-*-alerts*', '.svc-notifications-outbox']
export const CASE_OUTBOX_INDEX = '.svc-notifications-outbox'
const THROTTLE_INDEX = '.svc-notifications-throttle'
/** Documents claimed per pass; the rest wait for the next pass (which comes at once when this one was full). */
const PAGE = 50
const MAX_RECORD_TRIES = 5
/** Documents being delivered at once by this node (so at most this many sent and not yet recorded when it dies). */
export const DELIVERY_CONCURRENCY = 8

export interface DispatcherDeps {
  store: Store
  settings: ClusterSettings
  log: Logger
  now: () => number
  channels: Channels
  metrics: DeliveryMetrics
}

export class Dispatcher {
  private timer?: ReturnType<typeof setTimeout>
  private running?: Promise<unknown>
  private readonly inFlight = new Set<Promise<void>>()
  private readonly throttleTurns = new Map<string, Promise<void>>()
  private again = false
  private stopped = true
  private readonly abort = new AbortController()
  /** Passes run so far (searches for due deliveries), for tests and diagnostics. */
  passes = 0

  constructor(private readonly d: DispatcherDeps) {}

  start(): void {
    this.stopped = false
    this.kick()
  }

  /** Runs a pass now (new deliveries were just written), or right after the one under way. */
  kick(): void {
    if (this.stopped) return
    if (this.running) {
      this.again = true
      return
    }
    clearTimeout(this.timer)
    this.running = this.pass()
      .catch((e) => this.d.log.warn('notification dispatch pass failed; trying again', { error: e as Error }))
      .finally(async () => {
        this.running = undefined
        if (this.stopped) return
        const settings = await this.d.settings.snapshot().catch(() => undefined)
        const wait = this.again ? 0 : (settings?.num('plugins.notifications.delivery.poll_interval_millis') ?? 1000)
        this.again = false
        this.timer = setTimeout(() => this.kick(), wait)
      })
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    this.abort.abort()
    await this.running
    await Promise.all([...this.inFlight])
  }

  /** One pass over the due deliveries; answers how many it claimed (sent in the background). */
  async pass(): Promise<number> {
    this.passes++
    const settings = await this.d.settings.snapshot()
    const now = this.d.now()
    let hits: SearchHit[]
    try {
      const r = await this.d.store.search({
        index: OUTBOX_INDICES,
        ignore_unavailable: true,
        expand_wildcards: 'all',
        body: {
          size: PAGE,
          query: { bool: { filter: [{ term: { 'svc_outbox.pending': true } }, { range: { 'svc_outbox.next_at': { lte: now } } }] } },
          sort: [{ 'svc_outbox.next_at': { order: 'asc' } }],
          seq_no_primary_term: true,
        },
      })
      hits = r.hits.hits
    } catch (e) {
      if (e instanceof IndexNotFound) return 0
      throw e
    }
    // Claimed here, sent in the background, at most DELIVERY_CONCURRENCY documents at once: a channel that
    // hangs until its socket timeout holds one slot, and the next pass (at once when a slot frees or
    // new alerts come) serves the others. With every slot taken, the pass ends without asking for
    // another: the slot that frees asks (no search loop while channels hang).
    let claimed = 0
    let full = false
    for (const hit of hits) {
      if (this.abort.signal.aborted) break
      if (this.inFlight.size >= DELIVERY_CONCURRENCY) {
        full = true
        break
      }
      const due = await this.claim(hit, settings)
      if (due.length === 0) continue
      claimed += due.length
      const sending: Promise<void> = this.send(hit._id, due, settings)
        .catch((e) =>
          this.d.log.warn('notification delivery could not be recorded; retried once its claim runs out', {
            document: hit._id,
            error: e as Error,
          }),
        )
        .finally(() => {
          this.inFlight.delete(sending)
          this.kick()
        })
      this.inFlight.add(sending)
    }
    // A full page may have more due behind it.
    if (hits.length === PAGE && !full) this.again = true
    return claimed
  }

  /** Claims the document's due deliveries (their `next_at` pushed past the longest an attempt may take). */
  private async claim(hit: SearchHit, settings: SettingsSnapshot): Promise<PendingDelivery[]> {
    const doc = hit._source as unknown as OutboxDocument
    const now = this.d.now()
    const due = (doc.svc_outbox?.deliveries ?? []).filter((x) => x.state === 'pending' && x.next_at <= now)
    if (due.length === 0) return []
    // Twice the longest attempt, plus a second: a claim that ran out while its attempt was still
    // being recorded (a stalled node) would let another pass send the same alert again. A crashed
    // node's deliveries wait that much longer before they are sent again.
    const claimMillis =
      2 *
        (settings.num('opensearch.notifications.core.http.socket_timeout') +
          settings.num('opensearch.notifications.core.http.connection_timeout')) +
      1000
    const claimed = structuredClone(doc)
    for (const x of claimed.svc_outbox!.deliveries) if (x.state === 'pending' && x.next_at <= now) x.next_at = now + claimMillis
    claimed.svc_outbox = outboxOf(claimed.svc_outbox!.deliveries)
    try {
      await this.d.store.index({
        index: hit._index,
        id: hit._id,
        body: claimed,
        if_seq_no: hit._seq_no,
        if_primary_term: hit._primary_term,
        refresh: true,
      })
    } catch (e) {
      // Another dispatcher claimed it, or it moved (acknowledged): the next pass sees it again.
      if (e instanceof VersionConflict || e instanceof DocumentMissing) return []
      throw e
    }
    return due
  }

  private async send(id: string, due: PendingDelivery[], settings: SettingsSnapshot): Promise<void> {
    for (const x of due) {
      const outcome = await this.attempt(x, settings)
      await this.record(id, x, outcome, settings)
    }
  }

  private attempt(x: PendingDelivery, settings: SettingsSnapshot): Promise<(Delivery & { throttled?: false }) | { throttled: true }> {
    if (!x.throttle) return this.attemptNow(x, settings)
    // Deliveries of one throttled action take turns on this node, so alerts of one run sent at once
    // cannot all pass the check before the first send is noted.
    const scope = x.throttle.scope
    const turn = (this.throttleTurns.get(scope) ?? Promise.resolve()).then(() => this.attemptNow(x, settings))
    const settledTurn = turn.then(
      () => {},
      () => {},
    )
    this.throttleTurns.set(scope, settledTurn)
    void settledTurn.then(() => {
      if (this.throttleTurns.get(scope) === settledTurn) this.throttleTurns.delete(scope)
    })
    return turn
  }

  private async attemptNow(
    x: PendingDelivery,
    settings: SettingsSnapshot,
  ): Promise<(Delivery & { throttled?: false }) | { throttled: true }> {
    if (x.throttle && (await this.throttled(x.throttle, settings))) return { throttled: true }
    const channel = await this.d.channels.stored(x.destination_id)
    if (!channel)
      return { ok: false, status_code: '404', status_text: `Notification channel [${x.destination_id}] not found`, retryable: false }
    const outcome = await deliver(channel, x.message, settings, { idempotencyKey: x.key, signal: this.abort.signal })
    this.d.metrics.attempts.inc({ outcome: outcome.ok ? 'delivered' : 'failed', channel_type: channel.config.config_type })
    if (outcome.ok && x.throttle) await this.sent(x.throttle.scope)
    return outcome
  }

  /** Writes the attempt's outcome on the document wherever it is now (acknowledged alerts move to history). */
  private async record(id: string, x: PendingDelivery, outcome: Awaited<ReturnType<Dispatcher['attemptNow']>>, settings: SettingsSnapshot) {
    const now = this.d.now()
    const maxRetries = settings.num('plugins.notifications.delivery.max_retries')
    const base = settings.num('plugins.notifications.delivery.backoff_base_millis')
    for (let tries = 0; ; tries++) {
      const found = await this.locate(id)
      if (!found) return
      const doc = found._source as unknown as OutboxDocument
      const delivery = doc.svc_outbox?.deliveries.find((d) => d.key === x.key)
      if (!delivery) return
      let result = doc.action_execution_results.find((r) => r.action_id === x.action_id)
      if (!result) {
        result = { action_id: x.action_id, last_execution_time: null, throttled_count: 0, delivery_state: 'pending', attempts: [] }
        doc.action_execution_results.push(result)
      }
      if (outcome.throttled) {
        delivery.state = 'throttled'
        result.throttled_count += 1
        result.delivery_state = 'throttled'
        this.d.metrics.attempts.inc({ outcome: 'throttled', channel_type: 'any' })
      } else {
        delivery.attempts += 1
        result.last_execution_time = now
        result.attempts.push({ time: now, status_code: outcome.status_code, status_text: outcome.status_text })
        if (outcome.ok) {
          delivery.state = 'delivered'
          doc.last_notification_time = now
        } else if (!outcome.retryable || delivery.attempts > maxRetries) {
          delivery.state = 'dead_letter'
        } else {
          // Full jitter over an exponentially growing window: retries of many alerts spread out.
          const window = base * 2 ** (delivery.attempts - 1)
          delivery.next_at = now + Math.round(window / 2 + Math.random() * (window / 2))
        }
        result.delivery_state = delivery.state
      }
      doc.svc_outbox = outboxOf(doc.svc_outbox!.deliveries)
      try {
        await this.d.store.index({
          index: found._index,
          id,
          body: doc,
          if_seq_no: found._seq_no,
          if_primary_term: found._primary_term,
          refresh: true,
        })
      } catch (e) {
        if ((e instanceof VersionConflict || e instanceof DocumentMissing) && tries < MAX_RECORD_TRIES) continue
        throw e
      }
      if (delivery.state === 'dead_letter') {
        this.d.metrics.attempts.inc({ outcome: 'dead_letter', channel_type: 'any' })
        this.d.log.error('notification dead-lettered: no more retries', {
          document: id,
          action: x.action_id,
          channel: x.destination_id,
          attempts: delivery.attempts,
          last_status: outcome.throttled ? undefined : outcome.status_code,
        })
      } else if (!outcome.throttled && !outcome.ok)
        this.d.log.warn('notification delivery failed; retrying', {
          document: id,
          action: x.action_id,
          channel: x.destination_id,
          attempt: delivery.attempts,
          status: outcome.status_code,
          retry_in_millis: delivery.next_at - now,
        })
      return
    }
  }

  private async locate(id: string): Promise<SearchHit | undefined> {
    try {
      const r = await this.d.store.search({
        index: OUTBOX_INDICES,
        ignore_unavailable: true,
        expand_wildcards: 'all',
        body: { size: 1, query: { ids: { values: [id] } }, seq_no_primary_term: true },
      })
      return r.hits.hits[0]
    } catch (e) {
      if (e instanceof IndexNotFound) return undefined
      throw e
    }
  }

  private async throttled(t: { minutes: number; scope: string }, _settings: SettingsSnapshot): Promise<boolean> {
    try {
      const got = await this.d.store.get({ index: THROTTLE_INDEX, id: t.scope })
      const last = got.found ? (got._source as { last_sent_at?: number }).last_sent_at : undefined
      return last !== undefined && this.d.now() - last < t.minutes * 60_000
    } catch (e) {
      if (e instanceof IndexNotFound) return false
      throw e
    }
  }

  private async sent(scope: string): Promise<void> {
    try {
      await this.d.store.index({ index: THROTTLE_INDEX, id: scope, body: { last_sent_at: this.d.now() }, refresh: true })
    } catch (e) {
      if (!(e instanceof IndexNotFound || e instanceof AlreadyExists)) throw e
    }
  }
}

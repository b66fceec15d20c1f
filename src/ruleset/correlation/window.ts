/**
 * The per-group sliding window, a pure function of the group's events so that arrival order,
 * restarts and a second node cannot change the answer:
 *
 * - Events are ordered by (time, key); an event's window is every event of the group at most
 *   `timespan` older than it, up to and including itself (sliding, never aligned to clock
 *   boundaries, as the specification asks).
 * - Each event is a candidate anchor: the correlation fires at it when the type's measure over its
 *   window satisfies the condition, and no finding of this group was already anchored within
 *   `timespan` of it (one finding per burst rather than one per further event).
 * - Only anchors whose window can hold a newly added event are re-examined, so a late event
 *   (within the retained window) fires exactly where it would have fired had it come in order.
 *   An event more than `timespan` older than the group's newest one is dropped.
 */
import { type CorrelationRule, holds } from './document'

export interface WindowEvent {
  /** Event time, epoch millis. */
  t: number
  /** Unique, stable key of the event (index + id, or a finding id for chained correlations). */
  k: string
  /** Which referenced rule matched (position in `CorrelationRule.refs`). */
  r: number
  /** `value_count`: the counted value (several fields: their values joined), if present. */
  v?: string
  /** Link to the base finding, when one exists. */
  f?: string
  /** Event index and id, for the finding's links. */
  i: string
  d: string
}

export interface GroupWindow {
  events: WindowEvent[]
  /** Anchors that produced a finding (time and key), kept while they can suppress others. */
  emitted: Array<{ t: number; k: string }>
}

/** At most this many events are kept per group; beyond it the oldest are dropped (bounded state). */
export const MAX_GROUP_EVENTS = 10_000

const before = (a: WindowEvent, b: WindowEvent) => a.t < b.t || (a.t === b.t && a.k < b.k)
const byTimeKey = (a: WindowEvent, b: WindowEvent) => (before(a, b) ? -1 : before(b, a) ? 1 : 0)

/** The measure of the window `events[from..to)` that the condition is applied to. */
export function measure(rule: CorrelationRule, events: WindowEvent[], from = 0, to = events.length): number {
  switch (rule.type) {
    case 'event_count':
      return to - from
    case 'value_count': {
      const seen = new Set<string>()
      for (let i = from; i < to; i++) if (events[i].v !== undefined) seen.add(events[i].v!)
      return seen.size
    }
    case 'temporal': {
      const seen = new Set<number>()
      for (let i = from; i < to; i++) seen.add(events[i].r)
      return seen.size
    }
    case 'temporal_ordered': {
      // Longest prefix of `rules` found in order (greedy earliest match is optimal for subsequences).
      let next = 0
      for (let i = from; i < to; i++) if (events[i].r === next && ++next === rule.refs.length) break
      return next
    }
  }
}

export interface Fired {
  anchor: WindowEvent
  window: WindowEvent[]
}

/**
 * Adds `incoming` to the group (duplicates by key ignored), answers the findings that now fire,
 * and prunes what can no longer matter. Mutates `state`.
 */
export function advance(rule: CorrelationRule, state: GroupWindow, incoming: WindowEvent[]): Fired[] {
  const span = rule.timespanMs
  const known = new Set(state.events.map((e) => e.k))
  // The group keeps one timespan behind its newest event: anything older is a replay of a page
  // already processed or too late for any window that can still fire, and is dropped.
  const horizon = state.events.length > 0 ? state.events[state.events.length - 1].t - span : -Infinity
  const fresh: WindowEvent[] = []
  for (const e of incoming) {
    if (known.has(e.k) || e.t < horizon) continue
    known.add(e.k)
    fresh.push(e)
  }
  if (fresh.length === 0) return []
  const events = [...state.events, ...fresh].sort(byTimeKey)
  let lo = Infinity
  let hi = -Infinity
  for (const e of fresh) {
    lo = Math.min(lo, e.t)
    hi = Math.max(hi, e.t)
  }
  const emittedKeys = new Set(state.emitted.map((e) => e.k))
  const fired: Fired[] = []
  let start = 0
  for (let i = 0; i < events.length; i++) {
    const anchor = events[i]
    while (events[start].t < anchor.t - span) start++
    if (anchor.t < lo || anchor.t > hi + span || emittedKeys.has(anchor.k)) continue
    if (!holds(rule.condition, measure(rule, events, start, i + 1))) continue
    if (state.emitted.some((f) => Math.abs(f.t - anchor.t) <= span)) continue
    state.emitted.push({ t: anchor.t, k: anchor.k })
    emittedKeys.add(anchor.k)
    fired.push({ anchor, window: events.slice(start, i + 1) })
  }
  // Keep what a later event (or a late one within the window) can still need.
  const newest = events[events.length - 1].t
  let kept = events.filter((e) => e.t >= newest - span)
  if (kept.length > MAX_GROUP_EVENTS) kept = kept.slice(kept.length - MAX_GROUP_EVENTS)
  state.events = kept
  state.emitted = state.emitted.filter((f) => f.t >= newest - 2 * span)
  return fired
}

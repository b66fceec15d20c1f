/**
 * Lucene's interval iterators (org.apache.lucene.queries.intervals), on one document: each is made
 * for the document and is then positioned on it, as Lucene's are after `advance` (its `reset`
 * done). Before the first `nextInterval` an iterator is at -1; past its last interval at NO_MORE.
 * The algorithms are Lucene's own, step for step, so that the intervals (minimal ones, in
 * Lucene's order) and hence the matches and the scores are the same.
 */
import { Heap } from '../lucene-queue'

/** Lucene's IntervalIterator.NO_MORE_INTERVALS (Integer.MAX_VALUE). */
export const NO_MORE = 2147483647

export abstract class IntervalIterator {
  abstract start(): number
  abstract end(): number
  abstract gaps(): number
  abstract nextInterval(): number
  width(): number {
    return this.end() - this.start() + 1
  }
}

/** An iterator over spans of its sub-iterators: where the current span begins, ends and what it leaves out. */
export abstract class SpanIterator extends IntervalIterator {
  protected begin = -1
  protected finish = -1
  protected slop = -1

  start(): number {
    return this.begin
  }

  end(): number {
    return this.finish
  }

  gaps(): number {
    return this.slop
  }
}

/** A term's positions in the document. */
export class TermIterator extends IntervalIterator {
  private pos = -1
  private next = 0

  constructor(private readonly positions: readonly number[]) {
    super()
  }

  start(): number {
    return this.pos
  }

  end(): number {
    return this.pos
  }

  gaps(): number {
    return 0
  }

  nextInterval(): number {
    if (this.next >= this.positions.length) return (this.pos = NO_MORE)
    return (this.pos = this.positions[this.next++])
  }
}

/** Placeholders of DisjunctionIntervalIterator: before the first interval, and after the last. */
const EMPTY = { start: () => -1, end: () => -1, gaps: () => 0 }
const EXHAUSTED = { start: () => NO_MORE, end: () => NO_MORE, gaps: () => 0 }

/** Any of the iterators' intervals, by end, leaving out those containing one already returned. */
export class DisjunctionIterator extends IntervalIterator {
  private readonly queue = new Heap<IntervalIterator>((a, b) => a.end() < b.end() || (a.end() === b.end() && a.start() >= b.start()))
  private current: Pick<IntervalIterator, 'start' | 'end' | 'gaps'> = EMPTY

  constructor(iterators: readonly IntervalIterator[]) {
    super()
    for (const it of iterators) {
      it.nextInterval()
      this.queue.add(it)
    }
  }

  start(): number {
    return this.current.start()
  }

  end(): number {
    return this.current.end()
  }

  gaps(): number {
    return this.current.gaps()
  }

  nextInterval(): number {
    if (this.current === EMPTY || this.current === EXHAUSTED) {
      if (this.queue.size() > 0) this.current = this.queue.top()
      return this.current.start()
    }
    const start = this.current.start()
    const end = this.current.end()
    while (this.queue.size() > 0 && contains(this.queue.top(), start, end)) {
      const it = this.queue.pop()!
      if (it.nextInterval() !== NO_MORE) this.queue.add(it)
    }
    if (this.queue.size() === 0) {
      this.current = EXHAUSTED
      return NO_MORE
    }
    this.current = this.queue.top()
    return this.current.start()
  }
}

function contains(it: IntervalIterator, start: number, end: number): boolean {
  return start >= it.start() && start <= it.end() && end >= it.start() && end <= it.end()
}

/** ExtendedIntervalIterator: each interval widened by `before` and `after` positions. */
export class ExtendedIterator extends IntervalIterator {
  private positioned = false

  constructor(
    private readonly inner: IntervalIterator,
    private readonly before: number,
    private readonly after: number,
  ) {
    super()
  }

  start(): number {
    if (!this.positioned) return -1
    const start = this.inner.start()
    return start === NO_MORE ? NO_MORE : Math.max(0, start - this.before)
  }

  end(): number {
    if (!this.positioned) return -1
    const end = this.inner.end()
    if (end === NO_MORE) return NO_MORE
    // Java's int overflow, clamped as Lucene clamps it.
    return end + this.after >= NO_MORE ? NO_MORE - 1 : end + this.after
  }

  gaps(): number {
    return this.inner.gaps()
  }

  nextInterval(): number {
    this.positioned = true
    this.inner.nextInterval()
    return this.start()
  }
}

/** OffsetIntervalsSource's iterator: the position just before (or just after) each interval. */
export class OffsetIterator extends IntervalIterator {
  constructor(
    private readonly inner: IntervalIterator,
    private readonly before: boolean,
  ) {
    super()
  }

  start(): number {
    if (this.before) {
      const pos = this.inner.start()
      if (pos === -1) return -1
      return pos === NO_MORE ? NO_MORE : Math.max(0, pos - 1)
    }
    const pos = this.inner.end() + 1
    if (pos === 0) return -1
    if (pos > NO_MORE) return NO_MORE
    return pos === NO_MORE ? NO_MORE - 1 : pos
  }

  end(): number {
    return this.start()
  }

  gaps(): number {
    return 0
  }

  nextInterval(): number {
    this.inner.nextInterval()
    return this.start()
  }
}

/** IntervalFilter: the intervals `accept` lets through (FilteredIntervalsSource's MAXGAPS). */
export class FilterIterator extends IntervalIterator {
  constructor(
    private readonly inner: IntervalIterator,
    private readonly accept: (it: IntervalIterator) => boolean,
  ) {
    super()
  }

  start(): number {
    return this.inner.start()
  }

  end(): number {
    return this.inner.end()
  }

  gaps(): number {
    return this.inner.gaps()
  }

  nextInterval(): number {
    let next: number
    do next = this.inner.nextInterval()
    while (next !== NO_MORE && !this.accept(this.inner))
    return next
  }
}

/**
 * RepeatingIntervalsSource's DuplicateIntervalIterator: `copies` consecutive intervals of one
 * iterator, spanning them all (a term repeated in an ordered or unordered source). Its width is
 * Lucene's, start minus end plus one per copy, as Lucene computes it.
 */
export class DuplicateIterator extends IntervalIterator {
  private readonly cache: number[]
  private base = 0
  private started = false
  private exhausted = false

  constructor(
    private readonly inner: IntervalIterator,
    private readonly copies: number,
  ) {
    super()
    this.cache = new Array<number>(copies * 2).fill(-1)
  }

  start(): number {
    return this.exhausted ? NO_MORE : this.cache[(this.base % this.copies) * 2]
  }

  end(): number {
    return this.exhausted ? NO_MORE : this.cache[((this.base + this.copies - 1) % this.copies) * 2 + 1]
  }

  override width(): number {
    let width = 0
    for (let i = 0; i < this.copies; i++) {
      const pos = (this.base + i) % this.copies
      width += this.cache[pos * 2] - this.cache[pos * 2 + 1] + 1
    }
    return width
  }

  gaps(): number {
    return super.width() - this.width()
  }

  nextInterval(): number {
    if (this.exhausted) return NO_MORE
    if (!this.started) {
      for (let i = 0; i < this.copies; i++) if (this.cacheNext(i) === NO_MORE) return NO_MORE
      this.base = 0
      this.started = true
      return this.start()
    }
    const insert = (this.base + this.copies) % this.copies
    this.base = (this.base + 1) % this.copies
    return this.cacheNext(insert)
  }

  private cacheNext(line: number): number {
    if (this.inner.nextInterval() === NO_MORE) {
      this.exhausted = true
      return NO_MORE
    }
    this.cache[line * 2] = this.inner.start()
    this.cache[line * 2 + 1] = this.inner.end()
    return this.start()
  }
}

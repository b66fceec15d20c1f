/**
 * Lucene's iterators over several sub-iterators on one document (see iterators.ts): ordered,
 * unordered and phrase (block) conjunctions, the containing/contained-by/overlapping filters, and
 * the not-containing/not-contained-by/non-overlapping differences. Each is made once its
 * sub-iterators are on the document and does Lucene's `reset` in its constructor.
 */
import { Heap } from '../lucene-queue'
import { IntervalIterator, NO_MORE, SpanIterator } from './iterators'

/** OrderedIntervalsSource's iterator: minimal intervals holding one interval of each sub-iterator, in order, none overlapping. */
export class OrderedIterator extends SpanIterator {
  private i = 1

  constructor(private readonly subs: readonly IntervalIterator[]) {
    super()
    subs[0].nextInterval()
  }

  nextInterval(): number {
    const subs = this.subs
    this.begin = this.finish = this.slop = NO_MORE
    let lastStart = NO_MORE
    let minimizing = false
    for (;;) {
      for (;;) {
        if (subs[this.i - 1].end() >= lastStart) return this.begin
        if (this.i === subs.length || (minimizing && subs[this.i].start() > subs[this.i - 1].end())) break
        do {
          if (subs[this.i].end() >= lastStart || subs[this.i].nextInterval() === NO_MORE) return this.begin
        } while (subs[this.i].start() <= subs[this.i - 1].end())
        this.i++
      }
      this.begin = subs[0].start()
      if (this.begin === NO_MORE) return (this.finish = NO_MORE)
      this.finish = subs[subs.length - 1].end()
      this.slop = this.finish - this.begin + 1
      for (const s of subs) this.slop -= s.width()
      lastStart = subs[subs.length - 1].start()
      this.i = 1
      if (subs[0].nextInterval() === NO_MORE) return this.begin
      minimizing = true
    }
  }
}

/** UnorderedIntervalsSource's iterator: minimal intervals holding one interval of each sub-iterator, overlaps allowed. */
export class UnorderedIterator extends SpanIterator {
  private readonly queue = new Heap<IntervalIterator>((a, b) => a.start() < b.start() || (a.start() === b.start() && a.end() >= b.end()))
  protected override slop = 0
  private queueEnd = -1

  constructor(private readonly subs: readonly IntervalIterator[]) {
    super()
    for (const it of subs) {
      if (it.nextInterval() === NO_MORE) break
      this.queue.add(it)
      this.updateRightExtreme(it)
    }
  }

  private updateRightExtreme(it: IntervalIterator): void {
    if (it.end() > this.queueEnd) this.queueEnd = it.end()
  }

  private advanceTop(): void {
    const it = this.queue.pop()
    if (it && it.nextInterval() !== NO_MORE) {
      this.queue.add(it)
      this.updateRightExtreme(it)
    }
  }

  nextInterval(): number {
    const n = this.subs.length
    while (this.queue.size() === n && this.queue.top().start() === this.begin) this.advanceTop()
    if (this.queue.size() < n) return (this.begin = this.finish = NO_MORE)
    do {
      this.begin = this.queue.top().start()
      this.finish = this.queueEnd
      this.slop = this.width()
      for (const it of this.subs) this.slop -= it.width()
      if (this.queue.top().end() === this.finish) return this.begin
      this.advanceTop()
    } while (this.queue.size() === n && this.finish === this.queueEnd)
    return this.begin
  }
}

/** BlockIntervalsSource's iterator (a phrase): the sub-iterators' intervals exactly one after another. */
export class BlockIterator extends IntervalIterator {
  private begin = -1
  private finish = -1

  constructor(private readonly subs: readonly IntervalIterator[]) {
    super()
  }

  start(): number {
    return this.begin
  }

  end(): number {
    return this.finish
  }

  gaps(): number {
    return 0
  }

  nextInterval(): number {
    const subs = this.subs
    if (subs[0].nextInterval() === NO_MORE) return (this.begin = this.finish = NO_MORE)
    let i = 1
    while (i < subs.length) {
      while (subs[i].start() <= subs[i - 1].end()) if (subs[i].nextInterval() === NO_MORE) return (this.begin = this.finish = NO_MORE)
      if (subs[i].start() === subs[i - 1].end() + 1) i++
      else {
        if (subs[0].nextInterval() === NO_MORE) return (this.begin = this.finish = NO_MORE)
        i = 1
      }
    }
    this.begin = subs[0].start()
    this.finish = subs[subs.length - 1].end()
    return this.begin
  }
}

export type Relation = 'containing' | 'contained_by' | 'overlapping'

/**
 * FilteringIntervalIterator: the intervals of `a` that contain, are contained by, or overlap an
 * interval of `b` (Lucene's CONTAINING, CONTAINED_BY and OVERLAPPING).
 */
export class FilteringIterator extends IntervalIterator {
  private bpos: boolean

  constructor(
    private readonly a: IntervalIterator,
    private readonly b: IntervalIterator,
    private readonly relation: Relation,
  ) {
    super()
    this.bpos = b.nextInterval() !== NO_MORE
  }

  start(): number {
    return this.bpos ? this.a.start() : NO_MORE
  }

  end(): number {
    return this.bpos ? this.a.end() : NO_MORE
  }

  gaps(): number {
    return this.a.gaps()
  }

  nextInterval(): number {
    if (!this.bpos) return NO_MORE
    const { a, b } = this
    while (a.nextInterval() !== NO_MORE) {
      while (this.behind()) {
        if (b.nextInterval() === NO_MORE) {
          this.bpos = false
          return NO_MORE
        }
      }
      if (this.holds()) return a.start()
    }
    // Lucene's containing iterator leaves bpos set here; nothing reads it after NO_MORE.
    if (this.relation !== 'containing') this.bpos = false
    return NO_MORE
  }

  private behind(): boolean {
    return behind(this.relation, this.a, this.b)
  }

  private holds(): boolean {
    const { a, b } = this
    if (this.relation === 'containing') return a.start() <= b.start() && a.end() >= b.end()
    if (this.relation === 'contained_by') return b.start() <= a.start()
    return b.start() <= a.end()
  }
}

export type Difference = 'not_containing' | 'not_contained_by' | 'non_overlapping'

/** The relation whose negation a difference is: both advance b alike. */
const POSITIVE: Record<Difference, Relation> = {
  not_containing: 'containing',
  not_contained_by: 'contained_by',
  non_overlapping: 'overlapping',
}

/** Whether b must move on before it can relate to a's current interval. */
function behind(relation: Relation, a: IntervalIterator, b: IntervalIterator): boolean {
  if (relation === 'containing') return b.start() < a.start() && b.end() < a.end()
  if (relation === 'contained_by') return b.end() < a.end()
  return b.end() < a.start()
}

/**
 * RelativeIterator: the intervals of the minuend `a` that do not contain, are not contained by, or
 * do not overlap any interval of the subtrahend `b` (b is on every document here: an iterator with
 * no interval there reads as exhausted at once, which is what Lucene's "not on this document" gives).
 */
export class DifferenceIterator extends IntervalIterator {
  private bpos = true

  constructor(
    private readonly a: IntervalIterator,
    private readonly b: IntervalIterator,
    private readonly difference: Difference,
  ) {
    super()
  }

  start(): number {
    return this.a.start()
  }

  end(): number {
    return this.a.end()
  }

  gaps(): number {
    return this.a.gaps()
  }

  nextInterval(): number {
    const { a, b } = this
    if (!this.bpos) return a.nextInterval()
    while (a.nextInterval() !== NO_MORE) {
      while (this.behind()) {
        if (b.nextInterval() === NO_MORE) {
          // Lucene's not-contained-by iterator keeps bpos (b then reads NO_MORE, which lets every interval by).
          if (this.difference !== 'not_contained_by') this.bpos = false
          return a.start()
        }
      }
      if (this.clear()) return a.start()
    }
    return NO_MORE
  }

  private behind(): boolean {
    return behind(POSITIVE[this.difference], this.a, this.b)
  }

  private clear(): boolean {
    const { a, b } = this
    if (this.difference === 'not_containing') return b.start() > a.end()
    if (this.difference === 'not_contained_by') return a.start() < b.start()
    return b.start() > a.end()
  }
}

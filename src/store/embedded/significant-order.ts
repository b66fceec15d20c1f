/**
 * The order of significant buckets as OpenSearch's final reduce leaves them: it gathers the
 * buckets in a Java HashMap keyed by the key's text, then pushes them, in that map's iteration
 * order, through a Lucene PriorityQueue of `size` ordered by score alone and pops it from the
 * end. Equal scores (common: every term of a small sample scores alike) come out in the order
 * those two structures give them, which is reproduced here rather than broken by key.
 */

export interface Scored {
  score: number
  /** The key as OpenSearch writes it in text (its HashMap key). */
  text: string
}

/** The best `size` of `buckets` (given in the shard's order), in the order OpenSearch's reduce answers them. */
export function reduceOrder<T extends Scored>(buckets: T[], size: number, keep: (b: T) => boolean): T[] {
  return bestOf(hashMapOrder(buckets), Math.min(size, buckets.length), keep)
}

/** The best `size` of the kept `buckets` by score, through a Lucene PriorityQueue fed in their order. */
export function bestOf<T extends Scored>(buckets: T[], size: number, keep: (b: T) => boolean = () => true): T[] {
  const queue = new LuceneQueue<T>(size)
  for (const b of buckets) if (keep(b)) queue.insertWithOverflow(b)
  const out: T[] = new Array<T>(queue.size)
  for (let i = queue.size - 1; i >= 0; i--) out[i] = queue.pop()
  return out
}

/** Java's String.hashCode over UTF-16 code units. */
function javaHash(s: string): number {
  let h = 0
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0
  return h
}

/** A java.util.HashMap's iteration order after inserting these keys in turn (bins by spread hash, then insertion). */
function hashMapOrder<T extends Scored>(buckets: T[]): T[] {
  let capacity = 16
  while (buckets.length > capacity * 0.75) capacity *= 2
  const bins = new Map<number, T[]>()
  for (const b of buckets) {
    const h = javaHash(b.text)
    const bin = (h ^ (h >>> 16)) & (capacity - 1)
    let list = bins.get(bin)
    if (!list) bins.set(bin, (list = []))
    list.push(b)
  }
  return [...bins.keys()].sort((a, b) => a - b).flatMap((bin) => bins.get(bin)!)
}

/** org.apache.lucene.util.PriorityQueue (a 1-based binary min-heap), with BucketSignificancePriorityQueue's lessThan. */
class LuceneQueue<T extends Scored> {
  private readonly heap: T[] = []
  size = 0
  constructor(private readonly max: number) {}

  private less(a: T, b: T): boolean {
    return a.score < b.score
  }

  insertWithOverflow(e: T): void {
    if (this.size < this.max) {
      this.heap[++this.size] = e
      this.upHeap(this.size)
    } else if (this.size > 0 && !this.less(e, this.heap[1])) {
      this.heap[1] = e
      this.downHeap(1)
    }
  }

  pop(): T {
    const top = this.heap[1]
    this.heap[1] = this.heap[this.size]
    this.size--
    this.downHeap(1)
    return top
  }

  private upHeap(from: number): void {
    let i = from
    const node = this.heap[i]
    let j = i >>> 1
    while (j > 0 && this.less(node, this.heap[j])) {
      this.heap[i] = this.heap[j]
      i = j
      j >>>= 1
    }
    this.heap[i] = node
  }

  private downHeap(from: number): void {
    let i = from
    const node = this.heap[i]
    let j = this.smallerChild(i)
    while (j <= this.size && this.less(this.heap[j], node)) {
      this.heap[i] = this.heap[j]
      i = j
      j = this.smallerChild(i)
    }
    this.heap[i] = node
  }

  private smallerChild(i: number): number {
    const j = i << 1
    const k = j + 1
    return k <= this.size && this.less(this.heap[k], this.heap[j]) ? k : j
  }
}

/**
 * The order of significant buckets as OpenSearch's final reduce leaves them: it gathers the
 * buckets in a Java HashMap keyed by the key's text, then pushes them, in that map's iteration
 * order, through a Lucene PriorityQueue of `size` ordered by score alone and pops it from the
 * end. Equal scores (common: every term of a small sample scores alike) come out in the order
 * those two structures give them, which is reproduced here rather than broken by key.
 */
import { Heap } from '../query/lucene-queue'

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
  // BucketSignificancePriorityQueue: by score alone.
  const queue = new Heap<T>((a, b) => a.score < b.score, size)
  for (const b of buckets) if (keep(b)) queue.insertWithOverflow(b)
  const out: T[] = new Array<T>(queue.size())
  for (let i = queue.size() - 1; i >= 0; i--) out[i] = queue.pop()!
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

/**
 * Lucene's PriorityQueue (a binary heap, least element on top by `lessThan`), ported as it is:
 * the interval iterators pop and re-add sub-iterators, and a significant_terms reduce keeps its
 * best buckets in one; which of two equal elements comes out first follows its sift order, which
 * OpenSearch's answers show.
 */
export class Heap<T> {
  private readonly heap: Array<T | undefined> = [undefined]
  private count = 0

  constructor(
    private readonly lessThan: (a: T, b: T) => boolean,
    /** Lucene's maxSize, for insertWithOverflow. */
    private readonly maxSize = Infinity,
  ) {}

  size(): number {
    return this.count
  }

  top(): T {
    return this.heap[1] as T
  }

  add(element: T): void {
    this.heap[++this.count] = element
    this.upHeap(this.count)
  }

  /** Adds `element` while there is room, else puts it in place of the top if the top is less. */
  insertWithOverflow(element: T): void {
    if (this.count < this.maxSize) this.add(element)
    else if (this.count > 0 && !this.lessThan(element, this.heap[1] as T)) {
      this.heap[1] = element
      this.downHeap(1)
    }
  }

  pop(): T | undefined {
    if (this.count === 0) return undefined
    const result = this.heap[1]
    this.heap[1] = this.heap[this.count]
    this.heap[this.count--] = undefined
    this.downHeap(1)
    return result
  }

  private upHeap(origPos: number): void {
    let i = origPos
    const node = this.heap[i] as T
    let j = i >>> 1
    while (j > 0 && this.lessThan(node, this.heap[j] as T)) {
      this.heap[i] = this.heap[j]
      i = j
      j = j >>> 1
    }
    this.heap[i] = node
  }

  private downHeap(from: number): void {
    let i = from
    const node = this.heap[i] as T
    let j = this.smallerChild(i)
    while (j <= this.count && this.lessThan(this.heap[j] as T, node)) {
      this.heap[i] = this.heap[j]
      i = j
      j = this.smallerChild(i)
    }
    this.heap[i] = node
  }

  private smallerChild(i: number): number {
    const j = i << 1
    const k = j + 1
    return k <= this.count && this.lessThan(this.heap[k] as T, this.heap[j] as T) ? k : j
  }
}

/**
 * Where a detector run evaluates its events. Stored texts go to the evaluator thread in one buffer
 * (evaluator-worker.ts): it parses and evaluates a batch while this thread reads the next one,
 * writes findings and serves requests, so a run uses both cores and the node stays responsive.
 * Parsed sources (a platform store's hits), or a node whose thread cannot start, are evaluated
 * here with the same indexed rule set, yielding every few milliseconds. Both give the same
 * matches: the thread runs THE evaluator on the same compiled rules.
 */
import type { Logger } from '../../http/log'
import type { FieldTypes } from '../../store/query'
import { type CompiledSigmaRule, ruleSet, warmRuleSet } from '../sigma'
import { contentKey } from '../sigma/compile-cache'
import { type EvaluatorReply, type EvaluatorRequest, eventAt, type TextBatch, type WireRule } from './evaluator-protocol'

/**
 * The thread's entry point. In the compiled executable it is an entry point of its own
 * (scripts/build.ts), addressed from the bundle's root (src/); run from source, the file beside this.
 */
const WORKER = import.meta.url.includes('$bunfs')
  ? './ruleset/detection/evaluator-worker.ts'
  : new URL('./evaluator-worker.ts', import.meta.url).href

/** Longest wait for the thread's answer to one message (a batch takes milliseconds). */
export const ANSWER_MILLIS = 60_000

/** Longest stretch of in-thread evaluation before pending requests get their turn. */
export const SLICE_MILLIS = 10

/** A macrotask turn, so pending requests (socket reads) run before the run continues. */
export const yieldToEventLoop = () => new Promise<void>((resolve) => setTimeout(resolve, 0))

/** Yields once work has held the event loop for SLICE_MILLIS. */
export class Pacer {
  private last = performance.now()
  due(): boolean {
    return performance.now() - this.last > SLICE_MILLIS
  }
  async yield(): Promise<void> {
    await yieldToEventLoop()
    this.resumed()
  }
  /** The work was waiting (requests had their turn): its next slice starts now. */
  resumed(): void {
    this.last = performance.now()
  }
}

/** Events as stored (a batch crosses to the thread in one buffer), or as parsed sources. */
export type EventBatch = TextBatch | Array<Record<string, unknown>>

const sizeOf = (events: EventBatch) => (Array.isArray(events) ? events.length : events.ends.length)

/** One rule set ready for batches: (event position, rule position) pairs per batch. */
export interface PreparedRules {
  refused: Array<{ rule: CompiledSigmaRule; error: string }>
  /** Matches of a batch of events, given as stored texts or as parsed sources. */
  evaluate(events: EventBatch): Promise<Int32Array>
}

/** Evaluates in this thread, yielding between slices. */
export async function inThread(rules: CompiledSigmaRule[], fieldTypes: FieldTypes | undefined): Promise<PreparedRules> {
  // Compiling a large set takes a while: it yields as the evaluation does.
  await warmRuleSet(rules, fieldTypes, yieldToEventLoop, SLICE_MILLIS)
  const set = ruleSet(rules, fieldTypes)
  return {
    refused: set.refused,
    async evaluate(events) {
      const pacer = new Pacer()
      const pairs: number[] = []
      for (let at = 0; at < sizeOf(events); at++) {
        for (const m of set.evaluate(Array.isArray(events) ? events[at] : eventAt(events, at))) pairs.push(at, m.at)
        if (pacer.due()) await pacer.yield()
      }
      return Int32Array.from(pairs)
    },
  }
}

/** The evaluator thread of this process, started on first use and never keeping the process alive. */
export class EvaluatorThread {
  private worker?: Worker
  private broken = false
  private started = false
  private nextId = 1
  private readonly waiting = new Map<number, { resolve: (r: EvaluatorReply) => void; reject: (e: Error) => void }>()

  constructor(
    private readonly log?: Logger,
    /** Test seams: the thread's entry point and how long to wait for an answer. */
    private readonly opts: { entry?: string; answerMillis?: number } = {},
  ) {}

  /**
   * The rules on the thread; in this thread instead when the thread is unavailable. The set is sent
   * once per run and indexed there once (the thread keeps recent sets by content).
   */
  async prepare(rules: CompiledSigmaRule[], fieldTypes: FieldTypes | undefined): Promise<PreparedRules> {
    if (this.broken) return inThread(rules, fieldTypes)
    const key = setKey(rules, fieldTypes)
    const wire: WireRule[] = rules.map(({ document: _document, ...rule }) => rule)
    let reply: EvaluatorReply
    try {
      reply = await this.call({ kind: 'set', id: 0, key, rules: wire, fieldTypes })
    } catch (e) {
      this.fail(e as Error)
      return inThread(rules, fieldTypes)
    }
    if (!this.started) {
      this.started = true
      this.log?.info('detection evaluator thread started')
    }
    const refused = (reply.refused ?? []).map(({ at, error }) => ({ rule: rules[at], error }))
    let local: Promise<PreparedRules> | undefined
    return {
      refused,
      evaluate: async (events) => {
        // Parsed sources have no text to hand over; a failed thread falls back for the rest of the run.
        if (!this.broken && !Array.isArray(events)) {
          try {
            const r = await this.call({ kind: 'evaluate', id: 0, key, ...copyOf(events) })
            if (r.matches) return r.matches
            // The thread dropped the set (it keeps a few): send it again once.
            await this.call({ kind: 'set', id: 0, key, rules: wire, fieldTypes })
            const again = await this.call({ kind: 'evaluate', id: 0, key, ...copyOf(events) })
            if (again.matches) return again.matches
            throw new Error(again.error ?? 'no matches answered')
          } catch (e) {
            this.fail(e as Error)
          }
        }
        return (await (local ??= inThread(rules, fieldTypes))).evaluate(events)
      },
    }
  }

  /** Stops the thread (the node is stopping); later runs evaluate in this thread. */
  stop(): void {
    this.broken = true
    this.worker?.terminate()
    this.worker = undefined
    for (const w of this.waiting.values()) w.reject(new Error('evaluator thread stopped'))
    this.waiting.clear()
  }

  private call(request: EvaluatorRequest): Promise<EvaluatorReply> {
    const worker = this.start()
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      // A thread that stops answering (stuck, or gone without an error event) must not hold a
      // run forever: past the deadline it is given up and the run evaluates here.
      const wait = this.opts.answerMillis ?? ANSWER_MILLIS
      const deadline = setTimeout(() => this.fail(new Error(`no answer within ${wait} ms`)), wait)
      deadline.unref?.()
      this.waiting.set(id, {
        resolve: (r) => {
          clearTimeout(deadline)
          if (r.error !== undefined && request.kind === 'set') reject(new Error(r.error))
          else resolve(r)
        },
        reject: (e) => {
          clearTimeout(deadline)
          reject(e)
        },
      })
      // A batch's buffers move to the thread instead of being cloned.
      worker.postMessage({ ...request, id }, request.kind === 'evaluate' ? [request.sources.buffer, request.ends.buffer] : [])
    })
  }

  private start(): Worker {
    if (this.worker) return this.worker
    const worker = new Worker(this.opts.entry ?? WORKER)
    worker.unref()
    worker.onmessage = (e: MessageEvent<EvaluatorReply>) => {
      const w = this.waiting.get(e.data.id)
      this.waiting.delete(e.data.id)
      w?.resolve(e.data)
    }
    worker.onerror = (e) => this.fail(new Error(e.message))
    worker.addEventListener('close', () => {
      if (this.worker === worker) this.fail(new Error('the thread exited'))
    })
    this.worker = worker
    return worker
  }

  /** The thread failed: every pending batch is told, and runs go on in this thread. */
  private fail(error: Error): void {
    if (this.broken) return
    this.log?.error('detection evaluator thread failed; evaluating on the main thread', { error })
    this.stop()
  }
}

/** A batch's own buffers, to hand over to the thread (the run keeps reading its matched events). */
const copyOf = (b: TextBatch): TextBatch => ({ sources: b.sources.slice(), ends: b.ends.slice() })

/**
 * The thread's name for a rule set: the rules' compile-cache keys and the mapping, so every run of
 * an unchanged detector reuses the set indexed on the thread; rules compiled outside the cache get
 * a name of their own each time.
 */
let unique = 0
function setKey(rules: CompiledSigmaRule[], fieldTypes: FieldTypes | undefined): string {
  const keys = rules.map(contentKey)
  if (keys.some((k) => k === undefined)) return `u${++unique}`
  const types = fieldTypes instanceof Map ? [...fieldTypes] : fieldTypes
  const h = new Bun.CryptoHasher('sha256')
  h.update(JSON.stringify(types ?? null))
  for (const k of keys) h.update(`\u0000${k}`)
  return h.digest('base64url')
}

/**
 * The detection evaluator thread. When the store has a file (the embedded store), a detector run
 * hands its indexed rule set to the thread once, and the thread reads each batch from the file on
 * a connection of its own, parses and evaluates it, and answers with the matches and the matched
 * events (evaluator-worker.ts): the node thread only writes findings, so a run uses both cores and
 * the node stays responsive. A store without a file, or a thread that cannot start or stops
 * answering, leaves the run scanning here (scan.ts) with the same answer.
 */
import { resolve } from 'node:path'
import type { Logger } from '../../http/log'
import type { FieldTypes } from '../../store/query'
import type { CompiledSigmaRule } from '../sigma'
import { contentKey } from '../sigma/compile-cache'
import type { EvaluatorReply, EvaluatorRequest, WireRule } from './evaluator-protocol'
import { pageOf, type Scanner, scanHere, type ScanRequest } from './scan'

/**
 * The thread's entry point. In the compiled executable it is an entry point of its own
 * (scripts/build.ts), addressed from the bundle's root (src/); run from source, the file beside this.
 */
const WORKER = import.meta.url.includes('$bunfs')
  ? './ruleset/detection/evaluator-worker.ts'
  : new URL('./evaluator-worker.ts', import.meta.url).href

/** Longest wait for the thread's answer to one message (a batch takes milliseconds). */
export const ANSWER_MILLIS = 60_000

/** The evaluator thread of this process, started on first use and never keeping the process alive. */
export class EvaluatorThread {
  private worker?: Worker
  private broken = false
  private started = false
  private nextId = 1
  private readonly waiting = new Map<number, { resolve: (r: EvaluatorReply) => void; reject: (e: Error) => void }>()
  /** The IoC filter the thread holds (see shareFilter). */
  private filter?: { buffer: SharedArrayBuffer; generation: number }
  /** Rule sets sent to the thread, and scans that found theirs still there. */
  readonly sets = { sent: 0, reused: 0 }

  constructor(
    private readonly log?: Logger,
    /** Test seams: the thread's entry point and how long to wait for an answer. */
    private readonly opts: { entry?: string; answerMillis?: number } = {},
  ) {}

  /**
   * A scan of `index` with `rules`: on the thread when the store has a file the thread can read,
   * here otherwise. The set is sent once per scan and indexed there once (the thread keeps recent
   * sets by content, so an unchanged detector's next run finds it built).
   */
  async scanner(scan: ScanRequest): Promise<Scanner> {
    const { store, index, rules, fieldTypes, iocFields, iocFilter } = scan
    const found = this.broken ? undefined : await store.seqSource?.(index)
    if (!found) return scanHere(scan)
    const source = { ...found, file: resolve(found.file) }
    const { key, slot } = setKey(index, rules, fieldTypes)
    const send = () => {
      this.sets.sent++
      const wire = rules.map(({ document: _document, ...rule }): WireRule => rule)
      return this.call({ kind: 'set', id: 0, key, slot, rules: wire, fieldTypes })
    }
    let reply: EvaluatorReply
    try {
      // An unchanged detector's set is still on the thread from its last run: only its name is sent.
      reply = await this.call({ kind: 'use', id: 0, key })
      if (reply.error === undefined) this.sets.reused++
      else reply = await send()
    } catch (e) {
      this.fail(e as Error)
      return scanHere(scan)
    }
    if (!this.started) {
      this.started = true
      this.log?.info('detection evaluator thread started')
    }
    // Once the thread fails, or cannot read a batch, the rest of this scan goes on here.
    let local: Promise<Scanner> | undefined
    return {
      refused: (reply.refused ?? []).map(({ at, error }) => ({ rule: rules[at], error })),
      next: async (after) => {
        if (!local && !this.broken) {
          try {
            const iocs = iocFields ? { iocFields, iocFilter: iocFilter && this.shareFilter(iocFilter()) } : {}
            const scan = () => this.call({ kind: 'scan', id: 0, key, after, ...source, ...iocs })
            let r = await scan()
            // The thread dropped the set (it keeps a few): it is sent again once.
            if (r.error?.startsWith('unknown rule set')) {
              await send()
              r = await scan()
            }
            if (r.scanned) return pageOf(index, r.scanned)
            this.log?.warn('the detection thread could not read a batch; this scan goes on in the node thread', { index, error: r.error })
          } catch (e) {
            this.fail(e as Error)
          }
        }
        return (await (local ??= scanHere(scan))).next(after)
      },
      close: () => {
        if (!this.broken) this.worker?.postMessage({ kind: 'close', id: 0, file: source.file } satisfies EvaluatorRequest)
      },
    }
  }

  /**
   * The generation the thread knows `buffer` (the IoC index's filter) by: given to it before the
   * scan that first needs it (messages arrive in order), then named by each scan request.
   */
  private shareFilter(buffer: SharedArrayBuffer): number {
    const worker = this.start()
    if (this.filter?.buffer !== buffer) {
      this.filter = { buffer, generation: (this.filter?.generation ?? 0) + 1 }
      worker.postMessage({ kind: 'ioc-filter', id: 0, ...this.filter } satisfies EvaluatorRequest)
    }
    return this.filter.generation
  }

  /** Stops the thread (the node is stopping); later runs scan in this thread. */
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
      // run forever: past the deadline it is given up and the run scans here.
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
      worker.postMessage({ ...request, id })
    })
  }

  private start(): Worker {
    if (this.worker) return this.worker
    const worker = new Worker(this.opts.entry ?? WORKER)
    this.filter = undefined
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

  /** The thread failed: every pending request is told, and runs go on in this thread. */
  private fail(error: Error): void {
    if (this.broken) return
    this.log?.error('detection evaluator thread failed; evaluating on the main thread', { error })
    this.stop()
  }
}

/**
 * The thread's name for a rule set: the rules' compile-cache keys and the mapping, so every run of
 * an unchanged detector reuses the set indexed on the thread; rules compiled outside the cache get
 * a name of their own each time. Its slot leaves the mapping out: once a source index's mapping
 * grows (a detector made before its first events), the set indexed under the old one is dropped
 * on the thread instead of staying beside the new one.
 */
let unique = 0
function setKey(index: string, rules: CompiledSigmaRule[], fieldTypes: FieldTypes | undefined): { key: string; slot?: string } {
  const keys = rules.map(contentKey)
  if (keys.some((k) => k === undefined)) return { key: `u${++unique}` }
  const h = new Bun.CryptoHasher('sha256')
  h.update(index)
  for (const k of keys) h.update(`\u0000${k}`)
  const slot = h.copy().digest('base64url')
  const types = fieldTypes instanceof Map ? [...fieldTypes] : fieldTypes
  h.update(`\u0001${JSON.stringify(types ?? null)}`)
  return { key: h.digest('base64url'), slot }
}

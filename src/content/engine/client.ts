// The five Engine calls the Content Manager makes (reference 3.3), with the success rules of 3.2
// and the mock answers of 3.5. Settings are plain values so tests build it without a server.
import type { Logger } from '../../http/log'
import { EngineRefused } from './errors'
import type { EngineResourceType, FullPolicy, IocState, LogtestRequest, LogtestResult } from './schemas'
import { exchange, type EngineReply } from './transport'

/** Only the logging calls the client makes, so any Logger (or a test recorder) fits. */
export type EngineLog = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>

/** Per-call limits in milliseconds; the policy load is bounded by `engine.reload_timeout_minutes`. */
export interface EngineTimeouts {
  resourceMs: number
  policyMs: number
  logtestMs: number
  iocMs: number
}

export interface EngineClientOptions {
  socketPath: string
  /** `engine.mock`: answer every call with the reference's mocked success instead of using the socket. */
  mock: boolean
  reloadTimeoutMinutes: number
  notReadyGraceMinutes: number
  log: EngineLog
  timeouts?: Partial<EngineTimeouts>
}

/** What logtest yields: the Engine's message and, when it answered with JSON, its `result`. */
export interface LogtestReply extends EngineReply {
  result: LogtestResult | undefined
}

export interface EngineClient {
  readonly options: Readonly<EngineClientOptions>
  /** 3.3.1: throws EngineRefused unless the Engine answers 200. */
  /** `timeoutCapMillis` lowers the time-out (creation keeps it below the lock's stale age). */
  validateResource(type: EngineResourceType, resource: Record<string, unknown>, timeoutCapMillis?: number): Promise<EngineReply>
  /** 3.3.2: validate (draft) or load (other spaces) a whole policy; 200 and 202 are success. */
  validatePolicy(space: string, fullPolicy: FullPolicy, loadInTester?: boolean): Promise<EngineReply>
  /** 3.3.3: throws EngineRefused with the Engine's status and reason on anything but 200. */
  logtest(request: LogtestRequest): Promise<LogtestReply>
  /** 3.3.4: whether the Engine is still loading a previous IoC export. */
  iocState(): Promise<IocState>
  /** 3.3.5: ask the Engine to load an NDJSON export it can read from its input root. */
  iocUpdate(path: string, hash: string): Promise<EngineReply>
}

// The Engine gives up on a logtest after 5 s itself; our limits leave room for its answer.
const defaultTimeouts = { resourceMs: 30_000, logtestMs: 15_000, iocMs: 30_000 }

const mockReply = (): EngineReply => ({ status: 200, message: 'OK', body: undefined })

export function createEngineClient(options: EngineClientOptions): EngineClient {
  const timeouts: EngineTimeouts = {
    ...defaultTimeouts,
    policyMs: options.reloadTimeoutMinutes * 60_000,
    ...options.timeouts,
  }

  async function call(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    timeoutMs: number,
    accepted: readonly number[],
  ): Promise<EngineReply> {
    if (options.mock) return mockReply()
    const reply = await exchange({ socketPath: options.socketPath, method, path, body, timeoutMs })
    if (!accepted.includes(reply.status)) throw new EngineRefused(reply.status, reply.message)
    return reply
  }

  return {
    options,

    validateResource: (type, resource, cap = Infinity) =>
      call('POST', '/content/validate/resource', { type, resource }, Math.min(timeouts.resourceMs, cap), [200]),

    validatePolicy: (space, fullPolicy, loadInTester = space !== 'draft') =>
      call(
        'POST',
        '/content/validate/policy',
        { load_in_tester: loadInTester, space, full_policy: fullPolicy },
        timeouts.policyMs,
        [200, 202],
      ),

    async logtest(request) {
      const reply = await call('POST', '/logtest', request, timeouts.logtestMs, [200])
      return { ...reply, result: resultOf(reply.body) }
    },

    async iocState() {
      if (options.mock) return { hash: '', updating: false }
      const reply = await call('GET', '/content/ioc/state', undefined, timeouts.iocMs, [200])
      const body = (reply.body ?? {}) as Partial<IocState>
      return { hash: typeof body.hash === 'string' ? body.hash : '', updating: body.updating === true }
    },

    iocUpdate: (path, hash) => call('POST', '/content/ioc/update', { path, hash }, timeouts.iocMs, [200]),
  }
}

function resultOf(body: unknown): LogtestResult | undefined {
  if (body === null || typeof body !== 'object') return undefined
  const result = (body as { result?: unknown }).result
  return result !== null && typeof result === 'object' ? (result as LogtestResult) : undefined
}

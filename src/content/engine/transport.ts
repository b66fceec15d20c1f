// One HTTP/1.1 exchange with the Engine over its Unix socket, reduced to (status, message) the way
// the reference plugin reads Engine answers (reference 3.1-3.2).
import { EngineError, EngineTimeout, EngineUnavailable } from './errors'

/** What a caller learns from an Engine answer; `body` is the parsed JSON when there was any. */
export interface EngineReply {
  status: number
  message: string
  body: unknown
}

export interface EngineExchange {
  socketPath: string
  method: 'GET' | 'POST'
  path: string
  body?: unknown
  timeoutMs: number
}

/** Sends one request (one connection, closed afterwards) and reads the whole answer. */
export async function exchange({ socketPath, method, path, body, timeoutMs }: EngineExchange): Promise<EngineReply> {
  let response: Response
  let text: string
  const signal = AbortSignal.timeout(timeoutMs)
  try {
    response = await fetch(`http://localhost${path}`, {
      unix: socketPath,
      method,
      headers: {
        accept: 'application/json',
        'content-type': 'application/json',
        connection: 'close',
      },
      // Bun's fetch refuses a body on GET; the Engine ignores the `{}` the reference sends there.
      body: method === 'GET' ? undefined : JSON.stringify(body ?? {}),
      signal,
    })
    text = await response.text()
  } catch (error) {
    throw localFailure(error, socketPath, timeoutMs)
  }
  return interpret(response.status, text)
}

/** Reference 3.2: `message`, else `error`, else `result` serialised, else the raw body. */
export function interpret(status: number, text: string): EngineReply {
  if (text.trim() === '') return { status, message: 'Empty body received from Engine', body: undefined }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return { status, message: text, body: undefined }
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { status, message: text, body }
  const fields = body as Record<string, unknown>
  const message =
    'message' in fields
      ? asText(fields.message)
      : 'error' in fields
        ? asText(fields.error)
        : 'result' in fields
          ? JSON.stringify(fields.result)
          : text
  return { status, message, body }
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

function localFailure(error: unknown, socketPath: string, timeoutMs: number): EngineError {
  const { name, code } = (error ?? {}) as { name?: string; code?: string }
  if (name === 'TimeoutError' || name === 'AbortError') return new EngineTimeout(timeoutMs)
  if (code === 'ENOENT' || code === 'ENOTDIR') return new EngineUnavailable(socketPath, 'absent')
  if (code === 'EACCES' || code === 'EPERM') return new EngineUnavailable(socketPath, 'denied')
  // A socket file left behind by a dead Engine: present but nobody answers.
  if (code === 'ECONNREFUSED' || code === 'ENOTSOCK') return new EngineUnavailable(socketPath, 'refused')
  if (typeof code === 'string') return new EngineError('Failed to communicate with the Engine.')
  return new EngineError('Unexpected error communicating with the Engine.')
}

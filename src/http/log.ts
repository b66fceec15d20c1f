/**
 * Structured logging: one JSON object per line on stdout. Field names that
 * look like secrets are masked wherever they appear, so a careless call site
 * cannot leak a password or token into the journal.
 */
export type Level = 'debug' | 'info' | 'warn' | 'error'
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 }
const SECRET_KEY = /pass(word)?|token|secret|authorization|hash|credential/i

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
  child(fields: Record<string, unknown>): Logger
}

function redact(value: unknown, depth = 0): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message }
  if (value === null || typeof value !== 'object' || depth > 4) return value
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEY.test(k) ? '<masked>' : redact(v, depth + 1)
  return out
}

export function createLogger(opts: { level?: Level; write?: (line: string) => void; base?: Record<string, unknown> } = {}): Logger {
  const min = ORDER[opts.level ?? 'info']
  const write = opts.write ?? ((line: string) => process.stdout.write(line + '\n'))
  const base = opts.base ?? {}
  const emit = (level: Level, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < min) return
    const record = { '@timestamp': new Date().toISOString(), level, msg, ...base, ...(fields ? (redact(fields) as object) : {}) }
    write(JSON.stringify(record))
  }
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger({ level: opts.level, write, base: { ...base, ...fields } }),
  }
}

/** A logger that drops everything: for unit tests that do not look at logs. */
export const silentLogger: Logger = createLogger({ write: () => {} })

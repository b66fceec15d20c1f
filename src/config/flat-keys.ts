/**
 * Settings are flat dotted keys; YAML files and JSON bodies may nest them. Keys are caller
 * input, so both directions write through `setOwn` (a `__proto__` key stays a key).
 */
import { own, setOwn } from '../store/own'

const isBranch = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

export function flattenKeys(obj: Record<string, unknown>, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k
    if (isBranch(v)) flattenKeys(v, key, out)
    else setOwn(out, key, v)
  }
  return out
}

export function nestKeys(flat: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(flat)) {
    const parts = key.split('.')
    let node = out
    for (const p of parts.slice(0, -1)) {
      const next = own(node, p)
      if (isBranch(next)) node = next
      else {
        const fresh: Record<string, unknown> = {}
        setOwn(node, p, fresh)
        node = fresh
      }
    }
    setOwn(node, parts[parts.length - 1], value)
  }
  return out
}

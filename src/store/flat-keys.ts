/**
 * Settings are flat dotted keys; YAML files and JSON bodies may nest them. Keys are caller
 * input, so both directions write through `setOwn` (a `__proto__` key stays a key).
 */
import { descend, isObject } from '../json'
import { own, setOwn } from './own'

export function flattenKeys(obj: Record<string, unknown>, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k
    if (isObject(v)) flattenKeys(v, key, out)
    else setOwn(out, key, v)
  }
  return out
}

export function nestKeys(flat: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(flat)) {
    const [node, last] = descend(out, key, (level, part) => {
      const below = own(level, part)
      if (isObject(below)) return below
      const fresh: Record<string, unknown> = {}
      setOwn(level, part, fresh)
      return fresh
    })
    setOwn(node, last, value)
  }
  return out
}

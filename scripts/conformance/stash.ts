/**
 * The stash and response paths of the YAML runner (upstream `Stash` and `ObjectPath`).
 */

export class Stash {
  private values = new Map<string, unknown>()

  clear(): void {
    this.values.clear()
  }

  set(name: string, value: unknown): void {
    this.values.set(name, value)
  }

  get(name: string): unknown {
    if (!this.values.has(name)) throw new Error(`stash has no value for [${name}]`)
    return this.values.get(name)
  }

  /**
   * `$name` as a whole string keeps the stashed value's type; `${name}` inside a longer
   * string is replaced textually. Maps (keys included) and lists are resolved recursively.
   */
  resolve<T>(value: T): T {
    if (typeof value === 'string') return this.resolveString(value) as T
    if (Array.isArray(value)) return value.map((v) => this.resolve(v)) as T
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(value)) out[this.resolveString(k) as string] = this.resolve(v)
      return out as T
    }
    return value
  }

  private resolveString(s: string): unknown {
    const whole = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(s)
    if (whole) return this.get(whole[1])
    const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(s)
    if (braced) return this.get(braced[1])
    return s.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name) => String(this.get(name)))
  }
}

/** Splits on dots that are not escaped with a backslash. */
export function splitPath(path: string): string[] {
  const parts: string[] = []
  let cur = ''
  for (let i = 0; i < path.length; i++) {
    const c = path[i]
    if (c === '\\' && path[i + 1] === '.') {
      cur += '.'
      i++
    } else if (c === '.') {
      parts.push(cur)
      cur = ''
    } else cur += c
  }
  parts.push(cur)
  return parts
}

/** Sentinel for "nothing at this path" (distinct from a JSON null only where it matters). */
export const ABSENT = undefined

/**
 * Evaluates a response path: `''` is the whole body, `$name` reads the stash (whole path or
 * one component), numeric components index lists, `_arbitrary_key_` takes any key of a map.
 */
export function evaluatePath(body: unknown, path: string, stash: Stash): unknown {
  if (path === '') return body
  if (path === '$body') return stash.get('body')
  const whole = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(path)
  if (whole) return stash.get(whole[1])
  let cur: unknown = body
  for (let part of splitPath(path)) {
    if (part.startsWith('$')) part = String(stash.resolve(part))
    if (cur === null || cur === undefined) return ABSENT
    if (Array.isArray(cur)) {
      if (!/^\d+$/.test(part)) return ABSENT
      cur = cur[Number(part)]
    } else if (typeof cur === 'object') {
      const map = cur as Record<string, unknown>
      if (part === '_arbitrary_key_') {
        const keys = Object.keys(map)
        if (keys.length === 0) return ABSENT
        cur = keys[0]
        continue
      }
      cur = Object.prototype.hasOwnProperty.call(map, part) ? map[part] : ABSENT
    } else return ABSENT
  }
  return cur
}

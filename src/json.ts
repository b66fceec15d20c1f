// Helpers over parsed JSON shared by every layer (this module imports nothing).

/** A JSON object: not null, not an array. `T` narrows to the caller's object shape. */
export function isObject<T extends object = Record<string, unknown>>(v: unknown): v is T {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * Field names are data: `__proto__`, `constructor` or `hasOwnProperty` are ordinary names to
 * OpenSearch. Reading a plain object by such a key finds inherited members, and assigning
 * `__proto__` replaces a prototype, so every lookup or write keyed by caller input goes through
 * these two (one process serves every request: a polluted prototype would reach all of them).
 */
export function own<T>(o: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return o !== undefined && o !== null && Object.hasOwn(o, key) ? o[key] : undefined
}

export function setOwn<T>(o: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true })
}

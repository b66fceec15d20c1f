/** Settings are flat dotted keys; YAML files and JSON bodies may nest them. */
export function flattenKeys(obj: Record<string, unknown>, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flattenKeys(v as Record<string, unknown>, key, out)
    else out[key] = v
  }
  return out
}

export function nestKeys(flat: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, any> = {}
  for (const [key, value] of Object.entries(flat)) {
    const parts = key.split('.')
    let cur = out
    for (const p of parts.slice(0, -1)) cur = cur[p] && typeof cur[p] === 'object' ? cur[p] : (cur[p] = {})
    cur[parts[parts.length - 1]] = value
  }
  return out
}

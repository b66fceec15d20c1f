/**
 * Rule metadata as the findings mapping takes it (`svc.rule.*`, strict, all keyword). Rules carry
 * it in several shapes — `mitre: {tactic: ["TA0001"]}` (id-only arrays), `{tactic: {id: [..],
 * name: [..]}}`, single strings, lists of `{id, name}` — and a finding must land whatever the
 * shape: everything becomes arrays of strings under the keys the mapping declares, and what the
 * mapping cannot hold is left out rather than failing the whole finding.
 */
import type { FindingRule } from './writer'

const MITRE_KEYS = ['tactic', 'technique', 'subtechnique'] as const
export const COMPLIANCE_KEYS = ['cmmc', 'fedramp', 'gdpr', 'hipaa', 'iso_27001', 'nis2', 'nist_800_171', 'nist_800_53', 'pci_dss', 'tsc']

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Strings (numbers written as text) from a value or list; `{value}` items (stored rule lists) too. */
export function strings(v: unknown): string[] {
  const out: string[] = []
  for (const x of Array.isArray(v) ? v : [v]) {
    if (typeof x === 'string' && x !== '') out.push(x)
    else if (typeof x === 'number' && Number.isFinite(x)) out.push(String(x))
    else if (isObject(x) && (typeof x.value === 'string' || typeof x.value === 'number')) out.push(String(x.value))
  }
  return out
}

type Names = { id?: string[]; name?: string[] }

/** One MITRE level in any of its shapes -> `{id: [...], name: [...]}` (only the non-empty lists). */
function names(v: unknown): Names | undefined {
  const id: string[] = []
  const name: string[] = []
  for (const x of Array.isArray(v) ? v : [v]) {
    if (isObject(x)) {
      id.push(...strings(x.id))
      name.push(...strings(x.name))
    } else id.push(...strings(x))
  }
  const out: Names = {}
  if (id.length) out.id = id
  if (name.length) out.name = name
  return id.length || name.length ? out : undefined
}

export function normalizeMitre(v: unknown): FindingRule['mitre'] | undefined {
  if (!isObject(v)) return undefined
  const out: NonNullable<FindingRule['mitre']> = {}
  for (const k of MITRE_KEYS) {
    const n = names(v[k])
    if (n) out[k] = n
  }
  return Object.keys(out).length ? out : undefined
}

export function normalizeCompliance(v: unknown): FindingRule['compliance'] | undefined {
  if (!isObject(v)) return undefined
  const out: Record<string, string[]> = {}
  for (const k of COMPLIANCE_KEYS) {
    const s = strings(v[k])
    if (s.length) out[k] = s
  }
  return Object.keys(out).length ? out : undefined
}

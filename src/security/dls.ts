/**
 * Document-level security filters as queries: role DLS texts (already with `${user.name}`
 * substituted) parsed once and cached, and combined the way the platform does: a document
 * visible through any restricting role is visible, so several filters are OR-ed.
 */
export class DlsFilters {
  private readonly parsed = new Map<string, Record<string, unknown>>()

  combine(queries: string[]): Record<string, unknown> | undefined {
    if (queries.length === 0) return undefined
    const parsed = queries.map((q) => this.parse(q))
    return parsed.length === 1 ? parsed[0] : { bool: { should: parsed, minimum_should_match: 1 } }
  }

  clear(): void {
    this.parsed.clear()
  }

  private parse(text: string): Record<string, unknown> {
    let q = this.parsed.get(text)
    if (!q) {
      q = JSON.parse(text) as Record<string, unknown>
      // Bounded: substituted texts differ per user.
      if (this.parsed.size > 10_000) this.parsed.clear()
      this.parsed.set(text, q)
    }
    // Callers may wrap or edit the query they get; the cached one stays intact.
    return structuredClone(q)
  }
}

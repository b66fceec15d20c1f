// Reference 4.6: what promoting a space would change in the next one. Resources are compared by
// `document.id` and stored hash; the policy by the content of its document.
import type { ContentRepository, Doc } from '../repository'
import { NEXT_SPACE, type SourceSpace } from './chain'
import { ALIAS, RESOURCE_LISTS, emptyChanges, type Changes } from './changes'

export async function previewPromotion(repo: ContentRepository, source: SourceSpace): Promise<Changes> {
  const target = NEXT_SPACE[source]
  const changes = emptyChanges()
  await Promise.all(
    RESOURCE_LISTS.map(async (list) => {
      const [from, to] = await Promise.all([hashes(repo, ALIAS[list], source), hashes(repo, ALIAS[list], target)])
      for (const [id, hash] of from) {
        const current = to.get(id)
        if (current === undefined) changes[list].push({ operation: 'add', id })
        else if (current !== hash) changes[list].push({ operation: 'update', id })
      }
      for (const id of to.keys()) if (!from.has(id)) changes[list].push({ operation: 'remove', id })
    }),
  )
  const [sourcePolicy, targetPolicy] = await Promise.all([repo.policy(source), repo.policy(target)])
  if (sourcePolicy && !(targetPolicy && sameJson(sourcePolicy.document, targetPolicy.document))) {
    changes.policy.push({ operation: 'update', id: String(sourcePolicy.document.id) })
  }
  return changes
}

async function hashes(repo: ContentRepository, alias: string, space: string): Promise<Map<string, string>> {
  const docs = await repo.list(alias, space, { source: ['document.id', 'hash.sha256', 'space.name'] })
  return new Map(docs.map((d) => [String(d.document.id), d.hash]))
}

/** Deep equality of JSON values; key order does not count ("differ in any field"). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]))
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false
  const ka = Object.keys(a as Doc)
  const kb = Object.keys(b as Doc)
  return ka.length === kb.length && ka.every((k) => k in (b as Doc) && sameJson((a as Doc)[k], (b as Doc)[k]))
}

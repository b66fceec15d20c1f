// The changeset a promotion preview answers and a promotion request carries (reference 4.6/4.7):
// six lists, one per content type plus the policy, of `{operation, id}` where `id` is the
// resource's `document.id` (the logical id, the same in every space it has been promoted to).
import { t, type Static } from 'elysia'
import { CONTENT_ALIASES } from '../indices'

export const Operation = t.Union([t.Literal('add'), t.Literal('update'), t.Literal('remove')])
export type Operation = Static<typeof Operation>

export const Change = t.Object({ operation: Operation, id: t.String() })
export type Change = Static<typeof Change>

/** Resource lists in the order the spec applies them; deletes run in this same order. */
export const RESOURCE_LISTS = ['integrations', 'kvdbs', 'decoders', 'filters', 'rules'] as const
export type ResourceList = (typeof RESOURCE_LISTS)[number]

export const CHANGE_LISTS = ['policy', ...RESOURCE_LISTS] as const
export type ChangeList = (typeof CHANGE_LISTS)[number]

export const Changes = t.Object({
  policy: t.Array(Change),
  integrations: t.Array(Change),
  kvdbs: t.Array(Change),
  decoders: t.Array(Change),
  filters: t.Array(Change),
  rules: t.Array(Change),
})
export type Changes = Static<typeof Changes>

/** The preview answer: the only content-manager body without the `{message, status}` envelope. */
export const PreviewResponse = t.Object({ changes: Changes })
export type PreviewResponse = Static<typeof PreviewResponse>

export const ALIAS: Record<ChangeList, string> = {
  policy: CONTENT_ALIASES.policies,
  integrations: CONTENT_ALIASES.integrations,
  kvdbs: CONTENT_ALIASES.kvdbs,
  decoders: CONTENT_ALIASES.decoders,
  filters: CONTENT_ALIASES.filters,
  rules: CONTENT_ALIASES.rules,
}

/** What the Engine loads (reference 3.4): a changeset touching these needs the Engine's approval. */
export const ENGINE_LISTS = ['kvdbs', 'decoders', 'filters'] as const satisfies readonly ResourceList[]

export const emptyChanges = (): Changes => ({ policy: [], integrations: [], kvdbs: [], decoders: [], filters: [], rules: [] })

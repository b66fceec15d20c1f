// Step 1 of a promotion (spec "Promotion"; reference 4.7): resolve the requested changes against
// the source and target spaces, refuse what cannot be applied, and capture the pre-promotion
// snapshots every later step and the rollback work from. Reads only.
import { ApiError } from '../../http/errors'
import type { Source } from '../../store/port'
import type { FullPolicy } from '../engine'
import { isObject, type ContentRepository, type Doc, type Stored } from '../repository'
import { SPACES } from '../spaces'
import { NEXT_SPACE, type SourceSpace, type TargetSpace } from './chain'
import { ALIAS, ENGINE_LISTS, RESOURCE_LISTS, type ChangeList, type Operation, type ResourceList } from './changes'
import type { PromoteRequest } from './request'

/** One forward mutation of step 3 together with what undoes it. */
export interface Step {
  list: ChangeList
  /** `document.id`: the logical id, the same in source and target. */
  id: string
  operation: Operation
  /** `_id` of the document in the target space (existing, or a fresh one for a new copy). */
  targetId: string
  /** What is written for an add/update: the entire stored source with `space.name` replaced. */
  body?: Source
  /** The target version before the promotion: restored by the rollback; absent when there was none. */
  previous?: Source
}

export interface Plan {
  source: SourceSpace
  target: TargetSpace
  /** Adds and updates in the order policy, integrations, kvdbs, decoders, filters, rules. */
  applies: Step[]
  /** Removals in the order integrations, kvdbs, decoders, filters, rules. */
  removals: Step[]
  /** The target space as it stood when the plan was made, per list (the policy list holds at most one). */
  before: Record<ChangeList, Stored[]>
  /** The target space as it will stand after the promotion, per list (documents only). */
  after: Record<ChangeList, Doc[]>
  /** Reference 3.4: the changeset touches KVDBs, decoders or filters, or the target already holds some. */
  needsEngine: boolean
}

const byDocumentId = (docs: Stored[]) => new Map(docs.map((d) => [String(d.document.id), d]))

export async function planPromotion(repo: ContentRepository, request: PromoteRequest): Promise<Plan> {
  const { space: source, changes } = request
  const target = NEXT_SPACE[source]
  const load = async (list: ChangeList, space: string) =>
    list === 'policy' ? [await repo.policy(space)].filter((p): p is Stored => p !== undefined) : repo.list(ALIAS[list], space)
  const lists = ['policy', ...RESOURCE_LISTS] as const
  const loaded = await Promise.all(lists.map(async (list) => [list, await load(list, source), await load(list, target)] as const))

  const before = {} as Record<ChangeList, Stored[]>
  const applies: Step[] = []
  const removals: Step[] = []
  for (const [list, sourceDocs, targetDocs] of loaded) {
    before[list] = targetDocs
    const inSource = byDocumentId(sourceDocs)
    // The policy is matched by space, not id: a space has one policy whatever its logical id.
    const inTarget = list === 'policy' ? undefined : byDocumentId(targetDocs)
    for (const change of changes[list]) {
      const current = list === 'policy' ? targetDocs[0] : inTarget!.get(change.id)
      if (change.operation === 'remove') {
        if (!current) throw new ApiError(400, `Resource '${change.id}' does not exist in target space '${target}'.`)
        removals.push({ list, id: change.id, operation: 'remove', targetId: current._id, previous: current.source })
        continue
      }
      if (change.operation === 'add' && current) {
        throw new ApiError(400, `Resource '${change.id}' already exists in target space '${target}', use UPDATE operation instead`)
      }
      const from = inSource.get(change.id) ?? (await notInSource(repo, list, change.id, source))
      applies.push({
        list,
        id: change.id,
        operation: change.operation,
        targetId: current?._id ?? crypto.randomUUID(),
        body: { ...from.source, space: { ...(isObject(from.source.space) ? from.source.space : {}), name: target } },
        previous: current?.source,
      })
    }
  }

  const after = {} as Record<ChangeList, Doc[]>
  for (const [list] of loaded) {
    const docs = new Map(before[list].map((d) => [list === 'policy' ? 'policy' : String(d.document.id), d.document]))
    for (const step of applies) if (step.list === list) docs.set(list === 'policy' ? 'policy' : step.id, step.body!.document as Doc)
    for (const step of removals) if (step.list === list) docs.delete(step.id)
    after[list] = [...docs.values()]
  }
  const needsEngine = ENGINE_LISTS.some((list) => changes[list].length > 0 || before[list].length > 0)
  return { source, target, applies, removals, before, after, needsEngine }
}

/**
 * Reference 4.7: a resource living in another space is the client's mistake. The reference answers
 * 500 for one living nowhere; the spec keeps 500 for failed promotions, and an id that names
 * nothing is bad input like any other, so it is a 400 that names the id.
 */
async function notInSource(repo: ContentRepository, list: ChangeList, id: string, source: string): Promise<never> {
  for (const space of SPACES) {
    if (space === source) continue
    const found = list === 'policy' ? await repo.policy(space) : await repo.findByDocumentId(ALIAS[list], space, id)
    if (found && String(found.document.id) === id) {
      throw new ApiError(400, `Resource '${id}' is in space '${space}', expected source space '${source}'`)
    }
  }
  throw new ApiError(400, `Resource '${id}' was not found in space '${source}'.`)
}

/**
 * Reference 3.3.2: the policy the target will have, with every Engine resource the target will hold
 * (its documents with this promotion's adds/updates overlaid and its removals taken out). Rules are
 * never sent.
 */
export function engineFullPolicy(plan: Plan): FullPolicy {
  const resources = (list: Exclude<ResourceList, 'rules'>) => plan.after[list]
  return {
    policy: plan.after.policy[0] ?? {},
    resources: {
      integrations: resources('integrations'),
      kvdbs: resources('kvdbs'),
      decoders: resources('decoders'),
      filters: resources('filters'),
    },
  }
}

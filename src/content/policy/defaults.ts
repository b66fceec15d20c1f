// Default policies of the draft, test and custom spaces (reference 4.2.3): created create-only so
// every node can run this at start-up and after a draft reset without overwriting anything.
import { VersionConflict } from '../../store/errors'
import { nameUuid } from '../hash'
import { CONTENT_ALIASES } from '../indices'
import type { Store } from '../../store/port'
import { ContentRepository, envelope } from '../repository'
import { recomputeSpaceHash } from '../space-hash'
import { USER_SPACES, type Space } from '../spaces'
import { isoSeconds } from '../resources/normalize'

const SEED = 'svc'

/** `_id` of a space's default policy document. */
export const defaultPolicyId = (space: Space) => nameUuid(`${SEED}-space-${space}`)
/** `document.id` shared by the three default policies (the standard policy has its own, from CTI). */
export const DEFAULT_POLICY_DOCUMENT_ID = nameUuid(`${SEED}-default-policy`)

export function defaultPolicyDocument(space: Space, now: number): Record<string, unknown> {
  const name = space[0].toUpperCase() + space.slice(1)
  const stamp = isoSeconds(now)
  return {
    id: DEFAULT_POLICY_DOCUMENT_ID,
    metadata: {
      title: `${name} space`,
      author: name,
      description: `${name} space`,
      documentation: '',
      references: [],
      compatibility: [],
      date: stamp,
      modified: stamp,
    },
    root_decoder: null,
    integrations: [],
    filters: [],
    enrichments: [],
    enabled: space === 'draft',
    index_unclassified_events: false,
    index_discarded_events: false,
  }
}

/** Creates the policy of `space` unless one exists; true when this call created it. */
export async function ensureSpacePolicy(repo: ContentRepository, space: Space, now: number): Promise<boolean> {
  if (await repo.policy(space)) return false
  try {
    await repo.create(CONTENT_ALIASES.policies, defaultPolicyId(space), envelope(defaultPolicyDocument(space, now), space))
  } catch (e) {
    if (e instanceof VersionConflict) return false // another node was first
    throw e
  }
  await recomputeSpaceHash(repo, space)
  return true
}

/** Idempotent: the draft, test and custom policies exist afterwards, each with its aggregate hash. */
export async function ensureSpacePolicies(deps: { store: Store; now: () => number }): Promise<Space[]> {
  const repo = new ContentRepository(deps.store)
  const created: Space[] = []
  for (const space of USER_SPACES) if (await ensureSpacePolicy(repo, space, deps.now())) created.push(space)
  return created
}

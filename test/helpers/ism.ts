// The ISM policy API as tests use it: a policy's path, and an operator's edit of a policy.
import type { Reply } from './app'

export const policyPath = (id: string) => `/_plugins/_ism/policies/${id}`

/**
 * Sets the first transition's `min_index_age` of policy `id` as an operator would: read it, PUT it
 * back edited under the read's seq_no and primary term. Answers the PUT.
 */
export async function editPolicyAge(
  node: { request(method: string, path: string, opts?: { body?: unknown }): Promise<Reply> },
  id: string,
  age: string,
) {
  const current = await node.request('GET', policyPath(id))
  const edited = structuredClone(current.body.policy)
  edited.states[0].transitions[0].conditions.min_index_age = age
  return node.request('PUT', `${policyPath(id)}?if_seq_no=${current.body._seq_no}&if_primary_term=${current.body._primary_term}`, {
    body: { policy: edited },
  })
}

/**
 * The platform's lifecycle (ISM) policy API: `_plugins/_ism/policies[/<id>]` (and the legacy
 * `_opendistro` prefix), with the index-management plugin's cluster actions and answers. The
 * policies themselves are the Store's (`putLifecyclePolicy` ...); nothing here runs them.
 */
import { ISM_ACTIONS } from '../security/actions'
import type { IsmPolicyBody } from '../store/port'
import { badRequest, type RequestContext } from './context'
import type { IndexRouter } from './router'

const BASES = ['/_plugins/_ism/policies', '/_opendistro/_ism/policies']

function policyId(ctx: RequestContext): string {
  const id = ctx.part('id')
  if (!id) throw badRequest('Missing policy ID')
  return id
}

/** 201 (with `Location`) for a create, 200 for an update through `if_seq_no`/`if_primary_term`, as ISM answers. */
async function putPolicy(ctx: RequestContext) {
  await ctx.authorizeCluster(ISM_ACTIONS.policyWrite)
  const id = policyId(ctx)
  const body = await ctx.json()
  if (body === undefined) throw badRequest('request body is required', 'parse_exception')
  const ifSeqNo = ctx.int('if_seq_no')
  const ifPrimaryTerm = ctx.int('if_primary_term')
  const refresh = ctx.str('refresh')
  const r = await ctx.store.putLifecyclePolicy({
    id,
    // The store parses it as ISM does and answers ISM's 400s.
    body: body as IsmPolicyBody,
    ...(ifSeqNo !== undefined ? { if_seq_no: ifSeqNo } : {}),
    ...(ifPrimaryTerm !== undefined ? { if_primary_term: ifPrimaryTerm } : {}),
    ...(refresh !== undefined ? { refresh: refresh as 'true' | 'false' | 'wait_for' } : {}),
  })
  if (ifSeqNo !== undefined && ifPrimaryTerm !== undefined && ifSeqNo !== -2 && ifPrimaryTerm !== 0) return r
  return new Response(JSON.stringify(r), {
    status: 201,
    headers: { 'content-type': 'application/json; charset=UTF-8', location: `/_plugins/_ism/policies/${encodeURIComponent(r._id)}` },
  })
}

async function getPolicy(ctx: RequestContext) {
  await ctx.authorizeCluster(ISM_ACTIONS.policyGet)
  const r = await ctx.store.getLifecyclePolicy({ id: policyId(ctx) })
  // HEAD: the status says it all (ISM does not even fetch the source).
  return ctx.request.method === 'HEAD' ? {} : r
}

async function listPolicies(ctx: RequestContext) {
  await ctx.authorizeCluster(ISM_ACTIONS.policySearch)
  const size = ctx.int('size')
  const from = ctx.int('from')
  if (size !== undefined && size < 0) throw badRequest(`[size] parameter cannot be negative, found [${size}]`)
  if (from !== undefined && from < 0) throw badRequest(`[from] parameter cannot be negative, found [${from}]`)
  return ctx.store.getLifecyclePolicies({ ...(size !== undefined ? { size } : {}), ...(from !== undefined ? { from } : {}) })
}

async function deletePolicy(ctx: RequestContext) {
  await ctx.authorizeCluster(ISM_ACTIONS.policyDelete)
  return ctx.store.deleteLifecyclePolicy({ id: policyId(ctx) })
}

export function ismRoutes(r: IndexRouter): void {
  for (const base of BASES) {
    r.on('PUT', [base, `${base}/:id`], putPolicy)
    r.on(['GET', 'HEAD'], `${base}/:id`, getPolicy)
    r.on('GET', base, listPolicies)
    r.on('DELETE', `${base}/:id`, deletePolicy)
  }
}

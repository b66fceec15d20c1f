/**
 * Lifecycle (ISM) policies without ISM: the ISM API over documents of a hidden service index of
 * any Store, so a policy is written, read and deleted the same way everywhere. The embedded store
 * keeps its policies this way, and so does the platform adapter on an OpenSearch without the
 * index-management plugin. Nothing here runs a policy; the Setup retention job reads them
 * (src/setup/retention.ts).
 *
 * Parsing follows the index-management plugin's `Policy.parse` (its messages, its defaults,
 * `policy_id` and `last_updated_time` filled in by the server); writes follow its
 * TransportIndexPolicyAction: create-only unless `if_seq_no` and `if_primary_term` are given.
 */
import { AlreadyExists, IllegalArgument, IndexNotFound, ParsingError, PolicyNotFound } from './errors'
import type {
  CreateIndexBody,
  IsmPoliciesResponse,
  IsmPolicy,
  IsmPolicyResponse,
  IsmState,
  IsmTemplate,
  IsmTransition,
  PutIsmPolicyResponse,
  PutLifecyclePolicyParams,
  Store,
  WriteResponse,
} from './port'
import { parseTimeValue } from './settings'
import { isObject } from '../json'
import { ISM_CONFIG_INDEX } from '../setup/indices/names'

export { ISM_CONFIG_INDEX }

/** The schema version ISM stamps on a policy parsed without one. */
const DEFAULT_SCHEMA_VERSION = 1
/** ISM's "no sequence number / primary term given" values: such a PUT is a create. */
const UNASSIGNED_SEQ_NO = -2
const UNASSIGNED_PRIMARY_TERM = 0

const CONFIG_INDEX_BODY: CreateIndexBody = {
  settings: { index: { hidden: true, number_of_shards: 1, number_of_replicas: 0, auto_expand_replicas: '0-1' } },
  // Only the id is indexed (the listing sorts by it); the policy itself is kept as written.
  mappings: {
    dynamic: 'strict',
    properties: { policy: { type: 'object', dynamic: false, properties: { policy_id: { type: 'keyword' } } } },
  },
}

type Obj = Record<string, unknown>

/** The XContent token name a JSON value starts with, for the parser's messages. */
function token(v: unknown): string {
  if (v === null) return 'VALUE_NULL'
  if (Array.isArray(v)) return 'START_ARRAY'
  if (typeof v === 'object') return 'START_OBJECT'
  if (typeof v === 'string') return 'VALUE_STRING'
  if (typeof v === 'boolean') return 'VALUE_BOOLEAN'
  return 'VALUE_NUMBER'
}

const expecting = (wanted: string, found: unknown) =>
  new ParsingError(
    `Failed to parse object: expecting token of type [${wanted}] but found [${typeof found === 'string' && found.startsWith('<') ? found.slice(1, -1) : token(found)}]`,
  )

function text(v: unknown): string {
  if (typeof v === 'string') return v
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  throw expecting('VALUE_STRING', v)
}

function integer(v: unknown, what: string): number {
  const n = typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new IllegalArgument(`Failed to parse [${what}] as a number: [${String(v)}]`)
  return n
}

function list(v: unknown): unknown[] {
  if (!Array.isArray(v)) throw expecting('START_ARRAY', v)
  return v
}

function object(v: unknown): Obj {
  if (!isObject<Obj>(v)) throw expecting('START_OBJECT', v)
  return v
}

const CONDITIONS = new Set(['min_index_age', 'min_rollover_age', 'min_doc_count', 'min_size', 'min_primary_shard_size', 'cron'])
const TIME_CONDITIONS = new Set(['min_index_age', 'min_rollover_age'])

function parseTransition(v: unknown): IsmTransition {
  const t = object(v)
  let stateName: string | undefined
  let conditions: Obj | undefined
  for (const [k, value] of Object.entries(t)) {
    if (k === 'state_name') stateName = text(value)
    else if (k === 'conditions') {
      conditions = object(value)
      for (const [c, cv] of Object.entries(conditions)) {
        if (!CONDITIONS.has(c)) throw new IllegalArgument(`Invalid field: [${c}] found in Conditions.`)
        if (TIME_CONDITIONS.has(c)) parseTimeValue(text(cv), c)
      }
      if (Object.keys(conditions).length > 1) throw new IllegalArgument('Cannot provide more than one Transition condition')
    } else throw new IllegalArgument(`Invalid field: [${k}] found in Transition.`)
  }
  if (stateName === undefined) throw new IllegalArgument('Transition state name is null')
  return { state_name: stateName, ...(conditions ? { conditions } : {}) }
}

/** Keys of an action object that configure it rather than name it. */
const ACTION_SETTINGS = new Set(['retry', 'timeout', 'custom'])

function parseState(v: unknown): IsmState {
  const s = object(v)
  let name: string | undefined
  let actions: Obj[] = []
  let transitions: IsmTransition[] = []
  for (const [k, value] of Object.entries(s)) {
    if (k === 'name') name = text(value)
    else if (k === 'actions') {
      actions = list(value).map((a) => {
        const action = object(a)
        const types = Object.keys(action).filter((t) => !ACTION_SETTINGS.has(t))
        if (types.length !== 1) throw new IllegalArgument(`Invalid action: an action names exactly one type, found [${types.join(', ')}]`)
        return action
      })
    } else if (k === 'transitions') transitions = list(value).map(parseTransition)
    else throw new IllegalArgument(`Invalid field: [${k}] found in State.`)
  }
  if (name === undefined) throw new IllegalArgument('State name is null')
  return { name, actions, transitions }
}

function parseTemplate(v: unknown, now: number): IsmTemplate {
  const t = object(v)
  let patterns: string[] | undefined
  let priority = 0
  let updated: number | undefined
  for (const [k, value] of Object.entries(t)) {
    if (k === 'index_patterns') patterns = (typeof value === 'string' ? [value] : list(value)).map((p) => text(p))
    else if (k === 'priority') priority = integer(value, k)
    else if (k === 'last_updated_time') updated = value === null ? undefined : integer(value, k)
    else throw new IllegalArgument(`Invalid field: [${k}] found in ISMTemplate.`)
  }
  if (patterns === undefined) throw new IllegalArgument('index_patterns is null')
  if (priority < 0) throw new IllegalArgument('Requires priority to be >= 0')
  return { index_patterns: patterns, priority, last_updated_time: updated ?? now }
}

/**
 * A PUT body (`{"policy": {...}}`) as ISM parses it: unknown fields and broken state graphs are
 * 400s with the plugin's messages; `policy_id` and `last_updated_time` are the server's.
 */
export function parseIsmPolicy(id: string, body: unknown, now: number): IsmPolicy {
  const outer = object(body)
  const keys = Object.keys(outer)
  if (keys.length === 0) throw expecting('FIELD_NAME', '<END_OBJECT>')
  if (keys.length > 1) throw expecting('END_OBJECT', '<FIELD_NAME>')
  const p = object(outer[keys[0]])

  let description: string | undefined
  let defaultState: string | undefined
  let schemaVersion = DEFAULT_SCHEMA_VERSION
  let errorNotification: Obj | null = null
  let states: IsmState[] = []
  let templates: IsmTemplate[] | null = null
  for (const [k, value] of Object.entries(p)) {
    switch (k) {
      case 'schema_version':
        schemaVersion = integer(value, k)
        break
      case 'last_updated_time':
      case 'policy_id':
      case 'user':
        break // the server's to set
      case 'description':
        description = text(value)
        break
      case 'error_notification':
        errorNotification = value === null ? null : object(value)
        break
      case 'default_state':
        defaultState = text(value)
        break
      case 'states':
        states = list(value).map(parseState)
        break
      case 'ism_template':
        templates = value === null ? null : (Array.isArray(value) ? value : [object(value)]).map((t) => parseTemplate(t, now))
        break
      default:
        throw new IllegalArgument(`Invalid field: [${k}] found in Policy.`)
    }
  }
  if (description === undefined) throw new IllegalArgument('description is null')
  if (defaultState === undefined) throw new IllegalArgument('default_state is null')

  const names = states.map((s) => s.name)
  for (const s of states) {
    for (const t of s.transitions ?? []) {
      if (!names.includes(t.state_name))
        throw new IllegalArgument(`Policy contains a transition in state=${s.name} pointing to a nonexistent state=${t.state_name}`)
    }
  }
  if (new Set(names).size !== names.length) throw new IllegalArgument('Policy cannot have duplicate state names')
  if (states.length === 0) throw new IllegalArgument('Policy must contain at least one State')
  if (!names.includes(defaultState)) throw new IllegalArgument('Policy must have a valid default state')

  return {
    policy_id: id,
    description,
    last_updated_time: now,
    schema_version: schemaVersion,
    error_notification: errorNotification,
    default_state: defaultState,
    states,
    ism_template: templates,
  }
}

async function ensureConfigIndex(store: Store): Promise<void> {
  if (await store.existsIndex({ index: ISM_CONFIG_INDEX, expand_wildcards: 'all' })) return
  try {
    await store.createIndex({ index: ISM_CONFIG_INDEX, body: CONFIG_INDEX_BODY })
  } catch (e) {
    if (!(e instanceof AlreadyExists)) throw e
  }
}

export async function putPolicy(store: Store, p: PutLifecyclePolicyParams, now: number): Promise<PutIsmPolicyResponse> {
  if (p.id === '') throw new IllegalArgument('Missing policy ID')
  const policy = parseIsmPolicy(p.id, p.body, now)
  await ensureConfigIndex(store)
  const seqNo = p.if_seq_no ?? UNASSIGNED_SEQ_NO
  const term = p.if_primary_term ?? UNASSIGNED_PRIMARY_TERM
  const conditional = seqNo !== UNASSIGNED_SEQ_NO && term !== UNASSIGNED_PRIMARY_TERM
  const r = await store.index({
    index: ISM_CONFIG_INDEX,
    id: p.id,
    body: { policy },
    refresh: true,
    ...(conditional ? { if_seq_no: seqNo, if_primary_term: term } : { op_type: 'create' as const }),
  })
  return { _id: r._id, _version: r._version, _primary_term: r._primary_term, _seq_no: r._seq_no, policy: { policy } }
}

async function read(store: Store, id: string) {
  try {
    const r = await store.get({ index: ISM_CONFIG_INDEX, id })
    return r.found ? r : undefined
  } catch (e) {
    if (e instanceof IndexNotFound) return undefined
    throw e
  }
}

export async function getPolicy(store: Store, id: string): Promise<IsmPolicyResponse> {
  const r = await read(store, id)
  if (!r) throw new PolicyNotFound()
  return { _id: r._id, _version: r._version, _seq_no: r._seq_no, _primary_term: r._primary_term, policy: r._source!.policy as IsmPolicy }
}

export async function getPolicies(store: Store, p: { from?: number; size?: number } = {}): Promise<IsmPoliciesResponse> {
  if (!(await store.existsIndex({ index: ISM_CONFIG_INDEX, expand_wildcards: 'all' }))) return { policies: [], total_policies: 0 }
  const r = await store.search({
    index: ISM_CONFIG_INDEX,
    body: {
      from: p.from ?? 0,
      size: p.size ?? 20,
      sort: [{ 'policy.policy_id': 'asc' }],
      seq_no_primary_term: true,
      track_total_hits: true,
    },
  })
  const total = r.hits.total
  return {
    policies: r.hits.hits.map((h) => ({
      _id: h._id,
      _seq_no: h._seq_no!,
      _primary_term: h._primary_term!,
      policy: h._source!.policy as IsmPolicy,
    })),
    total_policies: typeof total === 'number' ? total : (total?.value ?? r.hits.hits.length),
  }
}

export async function deletePolicy(store: Store, id: string): Promise<WriteResponse> {
  if (!(await read(store, id))) throw new PolicyNotFound(`Policy ${id} is not found`)
  return store.delete({ index: ISM_CONFIG_INDEX, id, refresh: true })
}

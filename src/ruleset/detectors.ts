/**
 * Detectors (reference 5.4): validation and limits in the reference's order, standard detectors
 * (provisioned by the Content Manager, `source: standard`) versus user detectors (`custom`), and
 * `set_enabled`. A caller of `undefined` is the Content Manager (internal): it skips the user
 * limits and guards but not `max_rules_per_detector`.
 */
import { ApiError } from '../http/errors'
import { capped } from '../locks/capped'
import { KeyedLeases } from '../locks/lease'
import { resourceLockWait } from '../locks/wait'
import type { Caller, Security } from '../http/caller'
import { IndexNotFound, VersionConflict } from '../store/errors'
import type { SearchBody, SearchResponse } from '../store/port'
import { assertAccess, backendRoleClause, filteredCaller, requireBackendRoles, storedUser } from './access'
import type { RulesetDeps } from './deps'
import { FINDINGS_SECURITY_STREAM } from '../setup/indices/names'
import { DETECTOR_LOCKS_INDEX, DETECTORS_INDEX, ensureIndex } from './indices'
import { concreteIndices, loadCheckpoint, loadCheckpoints, renderStatus } from './detection/checkpoint'
import { unresolvedFields } from './detection/field-types'
import { check, DetectorBody, type DetectorSource, iso, type StoredDetector } from './model'
import type { Rules } from './rules'
import { checkAction, checkDestinations, type DestinationExists } from './alerts/actions'

export const MAX_DETECTORS = 'plugins.security_analytics.max_detectors'
export const MAX_RULES_PER_DETECTOR = 'plugins.security_analytics.max_rules_per_detector'
export const EVENTS_PREFIX = 'svc-events-v5'
const DETECTION_TYPES = new Set(['rules', 'threat_intel'])

export interface DetectorView {
  _id: string
  _version: number
  detector: Record<string, unknown>
}

/** Tells detection runs that a detector (re)starts: what was indexed before is not its business. */
export interface DetectorLifecycle {
  started(id: string, detector: StoredDetector): Promise<void>
  deleted(id: string, detector?: StoredDetector): Promise<void>
  /** A detector's definition was replaced (its triggers may be gone). */
  updated?(id: string, before: StoredDetector, after: StoredDetector): Promise<void>
}

export interface DetectorsDeps extends RulesetDeps {
  security: Pick<Security, 'authorizeIndices'>
}

export class Detectors {
  lifecycle?: DetectorLifecycle
  /** Whether a trigger action's `destination_id` names a notification channel (unchecked when unset). */
  destinationExists?: DestinationExists

  /** This node's queue in front of the detector-count lock. */
  private readonly leases: KeyedLeases

  constructor(
    private readonly d: DetectorsDeps,
    private readonly rules: Rules,
  ) {
    this.leases = new KeyedLeases({ store: d.store, now: d.now, ensureIndex: () => ensureIndex(d.store, DETECTOR_LOCKS_INDEX) })
  }

  /** What a create and an update check first: the body's shape, the caller's backend roles, the rule count, the channels. */
  private async checkWrite(body: DetectorBody, caller: Caller | undefined) {
    const input = this.validateShape(body)
    const settings = await this.d.settings.snapshot()
    const filtered = filteredCaller(settings, caller)
    requireBackendRoles(filtered)
    this.checkRuleCount(input, settings.num(MAX_RULES_PER_DETECTOR))
    await checkDestinations(input.triggers ?? [], this.destinationExists)
    return { input, settings, filtered }
  }

  /** `POST /detectors` (caller) or the Content Manager's create (caller undefined, `id` given). */
  async create(body: DetectorBody, caller: Caller | undefined, opts: { id?: string; documentId?: string } = {}): Promise<DetectorView> {
    const { input, settings, filtered } = await this.checkWrite(body, caller)
    const source: DetectorSource = caller ? 'custom' : 'standard'
    await ensureIndex(this.d.store, DETECTORS_INDEX)

    const write = async () => {
      await this.checkIndices(input, caller)
      await this.checkRules(input, source)
      await this.checkFieldMappings(input, caller)
      const now = this.d.now()
      const enabled = input.enabled ?? true
      const user = storedUser(filtered ?? caller)
      const stored: StoredDetector = {
        type: 'detector',
        ...definition(input, enabled),
        last_update_time: now,
        enabled_time: enabled ? now : null,
        source,
        ...(user ? { user } : {}),
        ...(opts.documentId ? { document: { id: opts.documentId } } : {}),
        findings_index: FINDINGS_SECURITY_STREAM,
        monitor_id: [monitorId()],
      }
      const id = opts.id ?? crypto.randomUUID()
      const r = await this.d.store.index({ index: DETECTORS_INDEX, id, body: { detector: stored }, op_type: 'create', refresh: true })
      if (enabled) await this.lifecycle?.started(id, stored)
      return { _id: id, _version: r._version, detector: render(stored) }
    }
    if (!caller) return write()
    // The count and the write happen under one cluster-wide lock, so concurrent creations
    // cannot both slip under `max_detectors` (reference 5.4 step 6).
    const busy = () => new ApiError(429, 'Too many concurrent requests are creating detectors, retry later.')
    const lock = {
      index: DETECTOR_LOCKS_INDEX,
      id: 'user-detector-count',
      wait: resourceLockWait(settings),
      renew: false,
      busy,
      lost: busy,
    }
    return capped(this.leases, lock, async () => {
      const max = settings.num(MAX_DETECTORS)
      const count = await this.countUserDetectors()
      if (count !== undefined && count >= max)
        throw new ApiError(400, `This request would create more than the allowed detectors [${max}].`)
      return write()
    })
  }

  /** `PUT /detectors/{id}` (caller) or the Content Manager's update (caller undefined). */
  async update(id: string, body: DetectorBody, caller: Caller | undefined): Promise<DetectorView> {
    const { input, settings, filtered } = await this.checkWrite(body, caller)
    const current = await this.load(id)
    assertAccess(filtered, current.detector.user, id)
    const was = current.detector
    const now = this.d.now()
    const enabled = input.enabled ?? was.enabled
    let next: StoredDetector
    if (caller && was.source === 'standard') {
      const changed =
        input.name !== was.name ||
        input.detector_type !== was.detector_type ||
        !sameJson(input.inputs, was.inputs) ||
        !sameJson(input.triggers ?? [], was.triggers) ||
        (input.threat_intel_enabled ?? false) !== was.threat_intel_enabled
      if (changed) throw new ApiError(400, 'Standard detectors cannot be modified by users. Only enabling or disabling is allowed.')
      next = { ...was, enabled }
    } else {
      await this.checkIndices(input, caller)
      await this.checkRules(input, was.source)
      await this.checkFieldMappings(input, caller)
      next = { ...was, ...definition(input, enabled) }
      const user = storedUser(filtered)
      if (user) next.user = user
    }
    if (enabled !== was.enabled) next.enabled_time = enabled ? now : null
    next.last_update_time = now
    const view = await this.save(id, next, current)
    await this.lifecycle?.updated?.(id, was, next)
    if (enabled && !was.enabled) await this.lifecycle?.started(id, next)
    if (enabled !== was.enabled) this.auditToggle(id, next, caller)
    return view
  }

  async get(id: string, caller?: Caller): Promise<DetectorView> {
    const current = await this.load(id)
    assertAccess(filteredCaller(await this.d.settings.snapshot(), caller), current.detector.user, id)
    const status = renderStatus((await loadCheckpoint(this.d.store, id))?.checkpoint)
    return { _id: id, _version: current.version, detector: { ...render(current.detector), ...status } }
  }

  /**
   * The detector behind an Alerting monitor id (`detector.monitor_id[]`), if the caller may see
   * it. Detectors are few (bounded by `max_detectors` and the integrations), so they are scanned.
   */
  async byMonitorId(monitorId: string, caller?: Caller): Promise<{ id: string; detector: StoredDetector }> {
    await ensureIndex(this.d.store, DETECTORS_INDEX)
    // One page of the platform's default result window covers every detector a node can have.
    const r = await this.d.store.search({ index: DETECTORS_INDEX, body: { size: 10_000 } })
    for (const h of r.hits.hits) {
      const detector = (h._source as { detector?: StoredDetector }).detector
      if (!detector?.monitor_id?.includes(monitorId)) continue
      // Another user's detector: 403, as its GET answers.
      assertAccess(filteredCaller(await this.d.settings.snapshot(), caller), detector.user, h._id)
      return { id: h._id, detector }
    }
    throw new ApiError(404, `Can't find monitor with id: ${monitorId}`)
  }

  /** Internal read for detection runs. */
  async stored(id: string): Promise<StoredDetector | undefined> {
    await ensureIndex(this.d.store, DETECTORS_INDEX)
    const got = await this.d.store.get({ index: DETECTORS_INDEX, id })
    return got.found ? (got._source as { detector: StoredDetector }).detector : undefined
  }

  async delete(id: string, caller: Caller | undefined): Promise<{ _id: string; _version: number }> {
    const current = await this.load(id)
    assertAccess(filteredCaller(await this.d.settings.snapshot(), caller), current.detector.user, id)
    if (caller && current.detector.source === 'standard') throw new ApiError(400, 'Standard detectors cannot be deleted by users.')
    const r = await this.d.store.delete({ index: DETECTORS_INDEX, id, refresh: true })
    await this.lifecycle?.deleted(id, current.detector)
    return { _id: id, _version: r._version }
  }

  /** `POST /detectors/_search`: the body runs over the detectors index, narrowed by backend roles. */
  async search(body: SearchBody, caller?: Caller): Promise<SearchResponse> {
    await ensureIndex(this.d.store, DETECTORS_INDEX)
    const filtered = filteredCaller(await this.d.settings.snapshot(), caller)
    const query = filtered
      ? { bool: { filter: [...(body.query ? [body.query] : []), backendRoleClause(filtered, 'detector.user.backend_roles')] } }
      : body.query
    const r = await this.d.store.search({
      index: DETECTORS_INDEX,
      body: { ...body, ...(query ? { query } : {}), seq_no_primary_term: true, version: true },
    })
    // Each detector's run status (last run, last error) rides along, as on GET.
    const withDetector = r.hits.hits.filter((h) => isObject(h._source?.detector))
    const checkpoints = await loadCheckpoints(
      this.d.store,
      withDetector.map((h) => h._id),
    )
    for (const h of withDetector) Object.assign(h._source!.detector as object, renderStatus(checkpoints.get(h._id)))
    return r
  }

  /**
   * `detector/set_enabled`: toggles `enabled` only. A missing detector is a success with version
   * -1 and an unchanged state is a no-op (reference 5.5).
   */
  async setEnabled(id: string, enabled: boolean, user?: string): Promise<{ _id: string; _version: number; changed: boolean }> {
    await ensureIndex(this.d.store, DETECTORS_INDEX)
    for (let attempt = 0; ; attempt++) {
      const got = await this.d.store.get({ index: DETECTORS_INDEX, id })
      if (!got.found) return { _id: id, _version: -1, changed: false }
      const was = (got._source as { detector: StoredDetector }).detector
      if (was.enabled === enabled) return { _id: id, _version: got._version, changed: false }
      const now = this.d.now()
      const next: StoredDetector = {
        ...was,
        enabled,
        enabled_time: enabled ? now : null,
        last_update_time: now,
        monitor_id: was.monitor_id ?? [monitorId()],
      }
      try {
        const r = await this.writeOver(id, next, { seqNo: got._seq_no!, primaryTerm: got._primary_term! })
        if (enabled) await this.lifecycle?.started(id, next)
        this.auditToggle(id, next, undefined, user)
        return { _id: id, _version: r._version, changed: true }
      } catch (e) {
        if (!(e instanceof VersionConflict) || attempt >= 4) throw e
      }
    }
  }

  /** Every enabled detector (the scheduler's view). */
  async enabled(): Promise<Array<{ id: string; detector: StoredDetector }>> {
    await ensureIndex(this.d.store, DETECTORS_INDEX)
    const r = await this.d.store.search({ index: DETECTORS_INDEX, body: { size: 10_000, query: { term: { 'detector.enabled': true } } } })
    return r.hits.hits.map((h) => ({ id: h._id, detector: (h._source as { detector: StoredDetector }).detector }))
  }

  /** What the schema (checked by the route, or typed by the caller) cannot say. */
  private validateShape(input: DetectorBody): DetectorBody {
    for (const t of input.triggers ?? []) {
      const types = t.detection_types ?? []
      if (types.length === 0) throw new ApiError(400, `Trigger [${t.name}] should mention at least one detection type but found none`)
      for (const type of types)
        if (!DETECTION_TYPES.has(type)) throw new ApiError(400, `Trigger [${t.name}] has unsupported detection type [${type}]`)
      for (const action of t.actions ?? []) checkAction(t.name, action)
    }
    return input
  }

  private checkRuleCount(input: DetectorBody, max: number): void {
    for (const { detector_input: di } of input.inputs) {
      const n = Math.max(di.custom_rules?.length ?? 0, di.pre_packaged_rules?.length ?? 0)
      if (n > max) throw new ApiError(400, `Detector cannot have more than ${max} rules, but found ${n}`)
    }
  }

  /** Source prefix, then read permission and existence of what the indices name (steps 7-8). */
  private async checkIndices(input: DetectorBody, caller: Caller | undefined): Promise<void> {
    const expressions = input.inputs.flatMap((i) => i.detector_input.indices)
    if (caller && expressions.some((e) => !e.startsWith(EVENTS_PREFIX)))
      throw new ApiError(400, `Threat detectors can only be created for \`${EVENTS_PREFIX}\` data sources.`)
    const missing: string[] = []
    const concrete: string[] = []
    for (const e of expressions) {
      try {
        concrete.push(...(await this.d.store.resolve(e, { expand_wildcards: 'open' })))
      } catch (err) {
        if (err instanceof IndexNotFound) missing.push(e)
        else throw err
      }
    }
    if (caller && concrete.length > 0) {
      try {
        this.d.security.authorizeIndices(caller, 'indices:data/read/search', concrete)
      } catch (err) {
        if ((err as { status?: unknown }).status === 403)
          throw new ApiError(403, `User doesn't have read permissions for one or more configured index ${expressions.join(', ')}`)
        throw err
      }
    }
    if (missing.length > 0) throw new ApiError(404, `Indices not found ${missing.join(',')}`)
  }

  /** One rule space per detector; referenced rules must exist there (step 9, 5.5). */
  private async checkRules(input: DetectorBody, source: DetectorSource): Promise<void> {
    for (const { detector_input: di } of input.inputs) {
      const custom = (di.custom_rules ?? []).map((r) => r.id)
      const pre = (di.pre_packaged_rules ?? []).map((r) => r.id)
      if (custom.length > 0 && pre.length > 0)
        throw new ApiError(400, 'Detector cannot have both prepackaged and custom rules. Use only one type.')
      if (custom.length > 0) {
        const { missing } = await this.rules.bySpaceIds('custom', custom)
        if (missing.length > 0) {
          if (source === 'standard')
            throw new ApiError(
              400,
              `Cannot create [${input.detector_type}] detector. Custom rules [${missing.join(', ')}] are not in "custom" space.`,
            )
          throw new ApiError(404, `Rules not found [${missing.join(', ')}]`)
        }
      }
      if (pre.length > 0) {
        const { missing } = await this.rules.bySpaceIds('standard', pre)
        if (missing.length > 0) throw new ApiError(404, `Rules not found [${missing.join(', ')}]`)
      }
    }
  }

  /**
   * A user's detector must not silently match nothing: every field its rules read is mapped by
   * each source index, or typed there by a dynamic template (as the event streams type the whole
   * schema); otherwise 400 naming the index and the fields. Content Manager detectors are not
   * refused (CTI content is what it is; its unusable rules are reported by the runs).
   */
  private async checkFieldMappings(input: DetectorBody, caller: Caller | undefined): Promise<void> {
    if (!caller) return
    const fields = new Set<string>()
    for (const { detector_input: di } of input.inputs)
      for (const [space, refs] of [
        ['custom', di.custom_rules ?? []],
        ['standard', di.pre_packaged_rules ?? []],
      ] as const) {
        if (refs.length === 0) continue
        const { rules } = await this.rules.bySpaceIds(
          space,
          refs.map((r) => r.id),
        )
        for (const { rule } of rules) for (const f of rule.query_field_names ?? []) fields.add(f.value)
      }
    if (fields.size === 0) return
    const expressions = input.inputs.flatMap((i) => i.detector_input.indices)
    for (const index of await concreteIndices(this.d.store, expressions)) {
      const mappings = (await this.d.store.getMapping({ index }))[index]?.mappings ?? {}
      const missing = unresolvedFields(mappings, fields)
      if (missing.length > 0)
        throw new ApiError(
          400,
          `Index [${index}] has no mapping for the fields [${missing.join(', ')}] read by the detector's rules; map them (or give the index dynamic templates for them) before creating the detector.`,
        )
    }
  }

  private async countUserDetectors(): Promise<number | undefined> {
    try {
      const r = await this.d.store.count({
        index: DETECTORS_INDEX,
        body: { query: { bool: { must_not: [{ term: { 'detector.source': 'standard' } }] } } },
      })
      return r.count
    } catch (e) {
      // The reference lets a creation proceed when the count fails.
      this.d.log.warn('could not count user detectors; creation proceeds', { error: e as Error })
      return undefined
    }
  }

  private async load(id: string): Promise<{ detector: StoredDetector; version: number; seqNo: number; primaryTerm: number }> {
    await ensureIndex(this.d.store, DETECTORS_INDEX)
    const got = await this.d.store.get({ index: DETECTORS_INDEX, id })
    if (!got.found) throw new ApiError(404, `Detector with ${id} is not found`)
    return {
      detector: (got._source as { detector: StoredDetector }).detector,
      version: got._version,
      seqNo: got._seq_no,
      primaryTerm: got._primary_term,
    }
  }

  /** Writes the detector over exactly the version read; a conflict means someone wrote in between. */
  private writeOver(id: string, next: StoredDetector, version: { seqNo: number; primaryTerm: number }) {
    return this.d.store.index({
      index: DETECTORS_INDEX,
      id,
      body: { detector: next },
      if_seq_no: version.seqNo,
      if_primary_term: version.primaryTerm,
      refresh: true,
    })
  }

  private async save(id: string, next: StoredDetector, current: { seqNo: number; primaryTerm: number }): Promise<DetectorView> {
    // A detector stored before monitor ids existed gets its monitor id on its next write.
    next.monitor_id ??= [monitorId()]
    try {
      const r = await this.writeOver(id, next, current)
      return { _id: id, _version: r._version, detector: render(next) }
    } catch (e) {
      if (e instanceof VersionConflict) throw new ApiError(409, `Detector ${id} was updated concurrently; read it again and retry.`)
      throw e
    }
  }

  private auditToggle(id: string, d: StoredDetector, caller?: Caller, user?: string): void {
    const who = caller?.name ?? user ?? 'internal'
    this.d.log.info(`Detector [${id}] (${d.detector_type}, ${d.source}) was ${d.enabled ? 'enabled' : 'disabled'} by [${who}]`)
  }
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** What a detector body sets, defaults applied: all a creation stores and a user update replaces. */
function definition(input: DetectorBody, enabled: boolean) {
  return {
    name: input.name,
    detector_type: input.detector_type,
    enabled,
    schedule: input.schedule,
    inputs: input.inputs,
    triggers: input.triggers ?? [],
    threat_intel_enabled: input.threat_intel_enabled ?? false,
  }
}

/** An id in the shape of OpenSearch's generated ids (20 URL-safe characters). */
const monitorId = () => Buffer.from(crypto.getRandomValues(new Uint8Array(15))).toString('base64url')

export function render(d: StoredDetector): Record<string, unknown> {
  return {
    ...(d.monitor_id ? { monitor_id: d.monitor_id } : {}),
    name: d.name,
    detector_type: d.detector_type,
    enabled: d.enabled,
    schedule: d.schedule,
    inputs: d.inputs,
    triggers: d.triggers,
    last_update_time: iso(d.last_update_time),
    enabled_time: iso(d.enabled_time),
    threat_intel_enabled: d.threat_intel_enabled,
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

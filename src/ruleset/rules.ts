/**
 * Rules (reference 5.6). Standard-space rules live in the pre-packaged index under their CTI id;
 * draft/test/custom rules in the custom index under their own UUID, recording the CTI id. Every
 * rule is compiled when written, so a rule we could not evaluate faithfully is refused (400 naming
 * the Sigma construct) instead of silently never matching. The one exception is the standard
 * space, which must mirror CTI content: a compile failure there is stored with empty queries and
 * the reason, and detectors skip the rule.
 */
import type { SettingsSnapshot } from '../config/cluster-settings'
import { ApiError } from '../http/errors'
import { parseJson, parseYaml } from '../http/body'
import type { Caller } from '../http/caller'
import type { BulkLine, SearchBody, SearchResponse } from '../store/port'
import { type CompiledSigmaRule, compileCache, compileSigmaRule, parseSigmaRule, SigmaError } from './sigma'
import { correlationRule, isCorrelationDocument, parseCorrelationDocument } from './correlation'
import { isFilterDocument, loadFilters, parseFilterDocument, type StoredFilter, withFilters } from './filters'
import { backendRoleClause, filteredCaller, mayAccess, storedUser } from './access'
import type { RulesetDeps } from './deps'
import { CUSTOM_RULES_INDEX, DETECTORS_INDEX, ensureIndex, PREPACKAGED_RULES_INDEX } from './indices'
import type { LogTypes } from './log-types'
import { iso, type Space, type StoredRule } from './model'
import { findInSpace, spaceDocId } from './space-ids'

/** Rules looked up and written together by `upsertMany`. */
const MANY = 1000

export const rulesIndexOf = (space: Space) => (space === 'standard' ? PREPACKAGED_RULES_INDEX : CUSTOM_RULES_INDEX)
const keyOf = (space: Space) => ({ index: rulesIndexOf(space), prefix: 'rule.' })

export interface RuleWrite {
  /** Sigma YAML text, or a rule document (a CTI rule's JSON). */
  body: string | Record<string, unknown>
  /** CTI document id; REST-created rules use their own `_id`. */
  ctiId?: string
  /** Log type name; default `logsource.product`, else `logsource.category`. */
  category?: string
  caller?: Caller
}

export interface RuleView {
  _id: string
  _version: number
  rule: Record<string, unknown>
}

const asValues = (xs: unknown): Array<{ value: string }> =>
  Array.isArray(xs) ? xs.filter((x) => typeof x === 'string' || typeof x === 'number').map((x) => ({ value: String(x) })) : []

export class Rules {
  constructor(
    private readonly d: RulesetDeps,
    private readonly logTypes: LogTypes,
  ) {}

  /** Creates or replaces the rule `ctiId` of `space` (the Content Manager's upsert). */
  async upsert(space: Space, w: RuleWrite & { ctiId: string }): Promise<RuleView & { result: 'created' | 'updated' }> {
    const index = rulesIndexOf(space)
    await ensureIndex(this.d.store, index)
    const { id, exists } = await spaceDocId(this.d.store, keyOf(space), space, w.ctiId)
    const doc = await this.build(space, w, w.ctiId, await this.d.settings.snapshot())
    const r = await this.d.store.index({ index, id, body: { rule: doc }, refresh: true })
    if (exists) compileCache.forget(w.ctiId)
    return { _id: id, _version: r._version, rule: render(doc), result: exists ? 'updated' : 'created' }
  }

  /**
   * `upsert` of many rules of `space` (a promotion's): their ids looked up and their writes made
   * together, a search and a bulk per `MANY` rules instead of both per rule. Answers, in order,
   * undefined for each rule written and the refusal or failure of the others.
   */
  async upsertMany(space: Space, writes: Array<RuleWrite & { ctiId: string }>): Promise<Array<Error | undefined>> {
    const index = rulesIndexOf(space)
    await ensureIndex(this.d.store, index)
    const settings = await this.d.settings.snapshot()
    const out: Array<Error | undefined> = []
    for (let at = 0; at < writes.length; at += MANY) {
      const part = writes.slice(at, at + MANY)
      const found = await findInSpace(this.d.store, keyOf(space), space, [...new Set(part.map((w) => w.ctiId))])
      const answers: Array<Error | undefined> = part.map(() => undefined)
      const lines: BulkLine[] = []
      const written: Array<{ at: number; existed: boolean }> = []
      for (const [i, w] of part.entries()) {
        try {
          const doc = await this.build(space, w, w.ctiId, settings)
          // A CTI id twice in one part is written twice under one id, the last one last, as a call each would.
          const existed = found.has(w.ctiId)
          if (!existed) found.set(w.ctiId, crypto.randomUUID())
          lines.push({ index: { _index: index, _id: found.get(w.ctiId) } }, { rule: doc })
          written.push({ at: i, existed })
        } catch (e) {
          answers[i] = e as Error
        }
      }
      if (lines.length > 0) {
        const items = (await this.d.store.bulk({ body: lines, refresh: true })).items.map((item) => Object.values(item)[0])
        written.forEach(({ at, existed }, k) => {
          const item = items[k]
          if (!item || item.status >= 300) answers[at] = new Error(item?.error?.reason ?? `status ${item?.status ?? 'missing'}`)
          else if (existed) compileCache.forget(part[at].ctiId)
        })
      }
      out.push(...answers)
    }
    return out
  }

  /** `POST /rules`: a new custom-space rule whose CTI id is its own `_id`. */
  async create(w: RuleWrite): Promise<RuleView> {
    await ensureIndex(this.d.store, CUSTOM_RULES_INDEX)
    await this.requireLogType(w)
    const id = crypto.randomUUID()
    const doc = await this.build('custom', w, id, await this.d.settings.snapshot())
    const r = await this.d.store.index({ index: CUSTOM_RULES_INDEX, id, body: { rule: doc }, op_type: 'create', refresh: true })
    return { _id: id, _version: r._version, rule: render(doc) }
  }

  /** `PUT /rules/{id}`: replaces a custom rule; refused while detectors use it unless forced. */
  async update(id: string, w: RuleWrite, forced: boolean): Promise<RuleView> {
    const current = await this.getStored(id, CUSTOM_RULES_INDEX)
    if (!current) throw new ApiError(404, `Rule with ${id} is not found`)
    const settings = await this.d.settings.snapshot()
    if (!mayAccess(filteredCaller(settings, w.caller), current.rule.user))
      throw new ApiError(403, `Do not have permissions to resource [${id}]`)
    if (!forced && (await this.usedByDetectors(current.rule.document.id)))
      throw new ApiError(400, `Rule with id ${id} is actively used by detectors. Update can be forced by setting forced flag to true`)
    await this.requireLogType(w)
    const doc = await this.build(current.rule.space, w, current.rule.document.id, settings)
    const r = await this.d.store.index({ index: CUSTOM_RULES_INDEX, id, body: { rule: doc }, refresh: true })
    compileCache.forget(current.rule.document.id)
    return { _id: id, _version: r._version, rule: render(doc) }
  }

  async get(id: string, caller?: Caller): Promise<RuleView> {
    const found = (await this.getStored(id, PREPACKAGED_RULES_INDEX)) ?? (await this.getStored(id, CUSTOM_RULES_INDEX))
    const settings = await this.d.settings.snapshot()
    if (!found || !mayAccess(filteredCaller(settings, caller), found.rule.user)) {
      if (found) throw new ApiError(403, `Do not have permissions to resource [${id}]`)
      throw new ApiError(404, `Rule with ${id} is not found`)
    }
    return { _id: id, _version: found.version, rule: render(found.rule) }
  }

  /** `DELETE /rules/{id}` (custom rules only; pre-packaged rules come and go with CTI content). */
  async deleteCustom(id: string, forced: boolean, caller?: Caller): Promise<{ _id: string; _version: number }> {
    const current = await this.getStored(id, CUSTOM_RULES_INDEX)
    if (!current) throw new ApiError(404, `Rule with ${id} is not found`)
    const settings = await this.d.settings.snapshot()
    if (!mayAccess(filteredCaller(settings, caller), current.rule.user))
      throw new ApiError(403, `Do not have permissions to resource [${id}]`)
    if (!forced && (await this.usedByDetectors(current.rule.document.id)))
      throw new ApiError(400, `Rule with id ${id} is actively used by detectors. Deletion can be forced by setting forced flag to true`)
    const r = await this.d.store.delete({ index: CUSTOM_RULES_INDEX, id, refresh: true })
    compileCache.forget(current.rule.document.id)
    return { _id: id, _version: r._version }
  }

  /** The Content Manager's delete of the rule `ctiId` of `space`. */
  async delete(space: Space, ctiId: string): Promise<boolean> {
    const index = rulesIndexOf(space)
    await ensureIndex(this.d.store, index)
    const { id, exists } = await spaceDocId(this.d.store, keyOf(space), space, ctiId)
    if (!exists) return false
    compileCache.forget(ctiId)
    return (await this.d.store.delete({ index, id, refresh: true })).result === 'deleted'
  }

  async deleteSpace(space: Space): Promise<number> {
    const index = rulesIndexOf(space)
    await ensureIndex(this.d.store, index)
    const r = await this.d.store.search({ index, body: { size: 10000, _source: false, query: { term: { 'rule.space': space } } } })
    let n = 0
    for (const h of r.hits.hits) if ((await this.d.store.delete({ index, id: h._id, refresh: true })).result === 'deleted') n++
    return n
  }

  /** `POST /rules/_search`: hits re-rendered without the `rule` wrapper (reference 5.6). */
  async search(prePackaged: boolean, body: SearchBody, caller?: Caller): Promise<SearchResponse> {
    const index = prePackaged ? PREPACKAGED_RULES_INDEX : CUSTOM_RULES_INDEX
    await ensureIndex(this.d.store, index)
    const filtered = filteredCaller(await this.d.settings.snapshot(), caller)
    let query = body.query
    // Rules carrying a creator are filtered; CTI content (no creator) is shared by everyone.
    if (filtered)
      query = {
        bool: {
          filter: [
            ...(query ? [query] : []),
            {
              bool: {
                should: [
                  backendRoleClause(filtered, 'rule.user.backend_roles'),
                  { bool: { must_not: [{ exists: { field: 'rule.user.name' } }] } },
                ],
                minimum_should_match: 1,
              },
            },
          ],
        },
      }
    const r = await this.d.store.search({ index, body: { ...body, query, seq_no_primary_term: true, version: true } })
    for (const h of r.hits.hits) {
      const rule = (h._source as { rule?: StoredRule } | undefined)?.rule
      if (rule) h._source = render(rule)
    }
    return r
  }

  /** Stored rules of one space by CTI id, in the order asked; `missing` lists unknown ids. */
  async bySpaceIds(space: Space, ctiIds: string[]): Promise<{ rules: Array<{ _id: string; rule: StoredRule }>; missing: string[] }> {
    const index = rulesIndexOf(space)
    await ensureIndex(this.d.store, index)
    const ids = await findInSpace(this.d.store, keyOf(space), space, ctiIds)
    const rules: Array<{ _id: string; rule: StoredRule }> = []
    const missing: string[] = []
    for (const cti of ctiIds) {
      const _id = ids.get(cti)
      const got = _id && (await this.d.store.get({ index, id: _id }))
      if (got && got.found) rules.push({ _id, rule: (got._source as { rule: StoredRule }).rule })
      else missing.push(cti)
    }
    return { rules, missing }
  }

  /** The spaces (among those asked) in which each CTI id exists. */
  async spacesOf(ctiIds: string[]): Promise<Map<string, Space[]>> {
    const out = new Map<string, Space[]>()
    for (const index of [PREPACKAGED_RULES_INDEX, CUSTOM_RULES_INDEX]) {
      await ensureIndex(this.d.store, index)
      const r = await this.d.store.search({
        index,
        body: {
          size: ctiIds.length * 4 + 10,
          _source: ['rule.document.id', 'rule.space'],
          query: { terms: { 'rule.document.id': ctiIds } },
        },
      })
      for (const h of r.hits.hits) {
        const rule = (h._source as { rule: Pick<StoredRule, 'document' | 'space'> }).rule
        out.set(rule.document.id, [...(out.get(rule.document.id) ?? []), rule.space])
      }
    }
    return out
  }

  /**
   * Compiles a stored rule for detection with the current mapping of its log type (memoised in
   * `mappings`) and the filter rules that apply to it (`filters`: pass one load for many rules).
   */
  async compileForDetection(
    rule: StoredRule,
    settings: SettingsSnapshot,
    mappings = new Map<string, Promise<Record<string, string>>>(),
    filters: Promise<StoredFilter[]> = this.filters(),
  ): Promise<CompiledSigmaRule> {
    if (!mappings.has(rule.category)) mappings.set(rule.category, this.logTypes.fieldMapping(rule.category, settings))
    const fieldMapping = await mappings.get(rule.category)!
    const compiled = compileCache.compile(parseStoredBody(rule.rule), { fieldMapping }, rule.document.id)
    const target = { ids: [rule.document.id, ...(rule.sigma_id ? [rule.sigma_id] : [])], name: rule.name, logsource: compiled.logsource }
    // A filter tunes the rules of its own space: a user's filter never silences standard content.
    const own = (await filters).filter((f) => f.space === rule.space).map((f) => f.filter)
    // Unchanged (the cached object) unless a filter applies.
    return withFilters(compiled, target, own, { fieldMapping })
  }

  /** Every stored Sigma filter rule, with its space. */
  filters(): Promise<StoredFilter[]> {
    return loadFilters(this.d.store, this.d.log)
  }

  /**
   * Rules referenced by id (stored id or Sigma id) or Sigma `name`, as correlation rules name
   * them; custom space first. Answers ref -> rule for the refs found.
   */
  async byReferences(refs: string[]): Promise<Map<string, StoredRule>> {
    const out = new Map<string, StoredRule>()
    for (const index of [CUSTOM_RULES_INDEX, PREPACKAGED_RULES_INDEX]) {
      const wanted = refs.filter((r) => !out.has(r))
      if (wanted.length === 0) break
      await ensureIndex(this.d.store, index)
      const r = await this.d.store.search({
        index,
        body: {
          size: wanted.length * 4 + 10,
          query: {
            bool: {
              should: ['rule.document.id', 'rule.sigma_id', 'rule.name'].map((f) => ({ terms: { [f]: wanted } })),
              minimum_should_match: 1,
            },
          },
        },
      })
      for (const h of r.hits.hits) {
        const rule = (h._source as { rule: StoredRule }).rule
        for (const ref of wanted)
          if (!out.has(ref) && (rule.document.id === ref || rule.sigma_id === ref || rule.name === ref)) out.set(ref, rule)
      }
    }
    return out
  }

  private async usedByDetectors(ctiId: string): Promise<boolean> {
    await ensureIndex(this.d.store, DETECTORS_INDEX)
    const r = await this.d.store.count({
      index: DETECTORS_INDEX,
      body: {
        query: {
          bool: {
            should: [
              { term: { 'detector.inputs.detector_input.custom_rules.id': ctiId } },
              { term: { 'detector.inputs.detector_input.pre_packaged_rules.id': ctiId } },
            ],
            minimum_should_match: 1,
          },
        },
      },
    })
    return r.count > 0
  }

  private async requireLogType(w: RuleWrite): Promise<void> {
    // A correlation rule has no logsource: it runs over whatever its referenced rules match.
    const raw = parseBodyLoosely(w.body)
    if (w.category === undefined && isCorrelationDocument(raw)) return
    // A filter is not a detection rule (safeParse refuses it) but names its logsource the same way.
    const category = w.category ?? categoryOf(isFilterDocument(raw) ? (raw as { logsource?: Record<string, unknown> }) : safeParse(w.body))
    if (!category || !(await this.logTypes.byName(category))) throw new ApiError(400, `Invalid rule category [${category ?? ''}]`)
  }

  private async getStored(id: string, index: string): Promise<{ rule: StoredRule; version: number } | undefined> {
    await ensureIndex(this.d.store, index)
    const got = await this.d.store.get({ index, id })
    return got.found ? { rule: (got._source as { rule: StoredRule }).rule, version: got._version } : undefined
  }

  private async build(space: Space, w: RuleWrite, ctiId: string, settings: SettingsSnapshot): Promise<StoredRule> {
    const raw = parseBodyLoosely(w.body)
    if (isCorrelationDocument(raw) || isFilterDocument(raw)) return this.buildMeta(space, w, ctiId, raw)
    let doc
    try {
      doc = parseSigmaRule(w.body)
    } catch (e) {
      throw sigma400(e)
    }
    const category = w.category ?? categoryOf(doc) ?? ''
    let compiled: CompiledSigmaRule | undefined
    let compileError: string | undefined
    try {
      compiled = compileSigmaRule(doc, { fieldMapping: await this.logTypes.fieldMapping(category, settings) })
    } catch (e) {
      if (space !== 'standard') throw sigma400(e)
      compileError = (e as Error).message
      this.d.log.warn('standard rule stored without queries: it does not compile', { rule: ctiId, error: compileError })
    }
    const meta = (doc.metadata ?? {}) as Record<string, unknown>
    return {
      ...this.common(space, w, ctiId, doc, category),
      description: str(doc.description) ?? str(meta.description),
      author: str((doc as Record<string, unknown>).author) ?? str(meta.author),
      queries: compiled ? [{ value: JSON.stringify(compiled.query) }] : [],
      query_field_names: (compiled?.fields ?? []).map((value) => ({ value })),
      ...(compileError ? { compile_error: compileError } : {}),
      ...('mitre' in doc ? { mitre: (doc as Record<string, unknown>).mitre } : {}),
      ...('compliance' in doc ? { compliance: (doc as Record<string, unknown>).compliance } : {}),
      ...(doc.metadata ? { metadata: meta } : {}),
    }
  }

  /** Correlation and filter documents: validated (400 naming the construct), stored without queries. */
  private buildMeta(space: Space, w: RuleWrite, ctiId: string, raw: unknown): StoredRule {
    const correlation = isCorrelationDocument(raw)
    let doc: Record<string, unknown> & { title: string; logsource?: Record<string, unknown> }
    try {
      if (correlation) {
        const c = parseCorrelationDocument(raw as object)
        correlationRule(c, ctiId)
        doc = c
      } else doc = parseFilterDocument(raw as object)
    } catch (e) {
      throw sigma400(e)
    }
    return {
      ...this.common(space, w, ctiId, doc, w.category ?? categoryOf(doc) ?? ''),
      kind: correlation ? 'correlation' : 'filter',
      description: str(doc.description),
      author: str(doc.author),
      queries: [],
      query_field_names: [],
    }
  }

  /** What every stored rule document carries, whatever its kind. */
  private common(
    space: Space,
    w: RuleWrite,
    ctiId: string,
    doc: {
      title?: string
      id?: string
      name?: string
      level?: string
      status?: string
      sigma_id?: string
      metadata?: { title?: string }
    } & Record<string, unknown>,
    category: string,
  ): StoredRule {
    const user = storedUser(w.caller)
    return {
      category,
      title: (doc.title ?? doc.metadata?.title)!,
      level: doc.level,
      status: doc.status,
      sigma_id: doc.sigma_id ?? doc.id,
      ...(typeof doc.name === 'string' ? { name: doc.name } : {}),
      tags: asValues(doc.tags),
      references: asValues(doc.references ?? (doc.metadata as Record<string, unknown> | undefined)?.references),
      false_positives: asValues(doc.falsepositives),
      queries: [],
      query_field_names: [],
      rule: typeof w.body === 'string' ? w.body : JSON.stringify(w.body),
      document: { id: ctiId },
      space,
      ...(user ? { user } : {}),
      last_update_time: this.d.now(),
    }
  }
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined)

/** The body as data (YAML or JSON text, or an object) without validating it; undefined when unreadable. */
function parseBodyLoosely(body: RuleWrite['body']): unknown {
  if (typeof body !== 'string') return body
  try {
    return parseYaml(body)
  } catch {
    return undefined
  }
}

function parseStoredBody(text: string): string | Record<string, unknown> {
  const t = text.trimStart()
  if (t.startsWith('{')) {
    try {
      return parseJson(t) as Record<string, unknown>
    } catch {
      // YAML flow mapping, not JSON: let the Sigma parser read it
    }
  }
  return text
}

function safeParse(body: RuleWrite['body']) {
  try {
    return parseSigmaRule(body)
  } catch {
    return undefined
  }
}

function categoryOf(doc: { logsource?: Record<string, unknown> } | undefined): string | undefined {
  const ls = doc?.logsource ?? {}
  const v = ls.product ?? ls.category
  return typeof v === 'string' && v !== '' ? v : undefined
}

export function sigma400(e: unknown): ApiError {
  if (e instanceof SigmaError) return new ApiError(400, e.message, {}, { construct: e.construct })
  return new ApiError(400, `Invalid Sigma rule: ${(e as Error).message}`)
}

function render(rule: StoredRule): Record<string, unknown> {
  const { user: _user, ...rest } = rule
  return { ...rest, last_update_time: iso(rule.last_update_time) }
}

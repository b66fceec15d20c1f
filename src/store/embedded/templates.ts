/** Composable index templates: the catalog's templates and which one a new index takes. */
import { IllegalArgument, InvalidIndexName, ResourceNotFound, StoreError } from '../errors'
import { hasWildcard, wildcardToRegExp } from '../names'
import type { Acknowledged, IndexTemplateBody, IndexTemplateEntry } from '../port'
import { isObject } from '../query/doc'
import { flattenSettings, validateSettings } from '../settings'
import type { StoreCore } from './core'
import { validateMappings } from './mapping'

export function matchTemplate(core: StoreCore, index: string): { name: string; body: IndexTemplateBody } | undefined {
  let best: { name: string; body: IndexTemplateBody } | undefined
  for (const [name, body] of core.cat.templates) {
    const patterns = Array.isArray(body.index_patterns) ? body.index_patterns : [body.index_patterns]
    if (!patterns.some((p) => wildcardToRegExp(p).test(index))) continue
    if (!best || (body.priority ?? 0) > (best.body.priority ?? 0)) best = { name, body }
  }
  return best
}

export async function putIndexTemplate(
  core: StoreCore,
  params: { name: string; body: IndexTemplateBody; create?: boolean },
): Promise<Acknowledged> {
  const { name, body } = params
  if (!isObject(body) || body.index_patterns === undefined)
    throw new StoreError('action_request_validation_exception', 400, 'Validation Failed: 1: index patterns are missing;')
  if (name !== name.toLowerCase() || name.includes(' ') || name.startsWith('_')) throw new InvalidIndexName(name, 'must be lowercase')
  if (params.create && core.cat.templates.has(name)) throw new IllegalArgument(`index template [${name}] already exists`)
  const patterns = Array.isArray(body.index_patterns) ? body.index_patterns : [body.index_patterns]
  if (body.template?.mappings) validateMappings(body.template.mappings)
  if (body.template?.settings) validateSettings(flattenSettings(body.template.settings))
  const priority = body.priority ?? 0
  for (const [other, ob] of core.cat.templates) {
    if (other === name || (ob.priority ?? 0) !== priority) continue
    const op = Array.isArray(ob.index_patterns) ? ob.index_patterns : [ob.index_patterns]
    const overlap = patterns.some((p) => op.some((q) => wildcardToRegExp(p).test(q) || wildcardToRegExp(q).test(p)))
    if (overlap)
      throw new IllegalArgument(
        `index template [${name}] has index patterns [${patterns.join(', ')}] matching patterns from existing templates [${other}] with patterns (${other} => [${op.join(', ')}]) that have the same priority [${priority}], multiple index templates may not match during index creation, please use a different priority`,
      )
  }
  const stored: IndexTemplateBody = { ...body, index_patterns: patterns }
  core.tx(() => {
    const before = core.cat.templates.get(name)
    core.db.query('INSERT OR REPLACE INTO templates (name, body) VALUES (?, ?)').run(name, JSON.stringify(stored))
    core.cat.templates.set(name, stored)
    core.onUndo(() => (before ? core.cat.templates.set(name, before) : core.cat.templates.delete(name)))
  })
  return { acknowledged: true }
}

export async function getIndexTemplate(
  core: StoreCore,
  params: { name?: string } = {},
): Promise<{ index_templates: IndexTemplateEntry[] }> {
  const names = (params.name ?? '*').split(',')
  const out: IndexTemplateEntry[] = []
  for (const n of names) {
    const re = wildcardToRegExp(n)
    const found = [...core.cat.templates].filter(([k]) => re.test(k))
    if (found.length === 0 && !hasWildcard(n)) throw new ResourceNotFound(`index template matching [${n}] not found`)
    for (const [k, v] of found) if (!out.some((e) => e.name === k)) out.push({ name: k, index_template: structuredClone(v) })
  }
  return { index_templates: out.sort((a, b) => (a.name < b.name ? -1 : 1)) }
}

export async function deleteIndexTemplate(core: StoreCore, params: { name: string }): Promise<Acknowledged> {
  const names = params.name.split(',').flatMap((n) => {
    const found = [...core.cat.templates.keys()].filter((k) => wildcardToRegExp(n).test(k))
    if (found.length === 0 && !hasWildcard(n)) throw new ResourceNotFound(`index_template [${n}] missing`)
    return found
  })
  for (const n of names) {
    const user = [...core.cat.streams.values()].find((ds) => ds.template === n)
    if (user) throw new IllegalArgument(`unable to remove composable templates [${n}] as they are in use by a data streams [${user.name}]`)
  }
  core.tx(() => {
    for (const n of names) {
      const before = core.cat.templates.get(n)!
      core.db.query('DELETE FROM templates WHERE name = ?').run(n)
      core.cat.templates.delete(n)
      core.onUndo(() => core.cat.templates.set(n, before))
    }
  })
  return { acknowledged: true }
}

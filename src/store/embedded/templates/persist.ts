/**
 * The three kinds of templates in the catalog and their tables (one JSON body per name), written
 * inside the running transaction: a failed one takes the in-memory change back with it.
 */
import type { ComponentTemplateBody, IndexTemplateBody, LegacyTemplateBody } from '../../port'
import type { StoreCore } from '../core'

interface Kinds {
  templates: IndexTemplateBody
  component_templates: ComponentTemplateBody
  legacy_templates: LegacyTemplateBody
}
type Kind = keyof Kinds

function mapOf<K extends Kind>(core: StoreCore, kind: K): Map<string, Kinds[K]> {
  const maps = {
    templates: core.cat.templates,
    component_templates: core.cat.componentTemplates,
    legacy_templates: core.cat.legacyTemplates,
  }
  return maps[kind] as Map<string, Kinds[K]>
}

export function saveTemplate<K extends Kind>(core: StoreCore, kind: K, name: string, body: Kinds[K]): void {
  core.tx(() => {
    const map = mapOf(core, kind)
    const before = map.get(name)
    core.db.query(`INSERT OR REPLACE INTO ${kind} (name, body) VALUES (?, ?)`).run(name, JSON.stringify(body))
    map.set(name, body)
    core.onUndo(() => (before === undefined ? map.delete(name) : map.set(name, before)))
  })
}

export function dropTemplates(core: StoreCore, kind: Kind, names: string[]): void {
  core.tx(() => {
    const map = mapOf(core, kind)
    for (const name of names) {
      const before = map.get(name)
      if (before === undefined) continue
      core.db.query(`DELETE FROM ${kind} WHERE name = ?`).run(name)
      map.delete(name)
      core.onUndo(() => map.set(name, before))
    }
  })
}

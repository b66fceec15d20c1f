/**
 * The in-memory view of indices, aliases, templates and data streams. SQLite is the truth;
 * this is rebuilt from it at open and after any failed transaction, so it never drifts.
 */
import type { Database } from 'bun:sqlite'
import type { AliasDefinition, ComponentTemplateBody, IndexActivity, IndexTemplateBody, LegacyTemplateBody, Mappings } from '../port'
import type { FieldSpec } from '../query/compile'
import type { Namespace } from '../names'
import { fieldSpecs, type IndexedKind, indexedKind, ignoresMalformed } from './mapping'
import { ridRange } from './rids'
import { isLengthsField } from './text-fields'

export interface IndexMeta {
  ix: number
  name: string
  uuid: string
  created: number
  /** Flat `index.*` settings, string values. */
  settings: Record<string, string | string[]>
  mappings: Mappings
  seq: number
  dataStream?: string
  /** Closed indices keep their data and metadata but refuse reads and writes. */
  closed: boolean
  docCount: number
  /**
   * Characters of stored sources and their index entries (the store size we report, see
   * documents.ts's storedSize), kept up to date by writes once
   * known; undefined until first asked for, so opening a store never scans every document.
   */
  sourceChars?: number
  /** Flushes since this process opened the store. */
  flushes?: number
  /** Operations since this process opened the store (activity.ts). */
  activity?: IndexActivity
  /**
   * Document writes since the index was loaded, never undone (a rolled-back write leaves it moved
   * while `seq` goes back): what caches of the index's data are kept against.
   */
  writes?: number
  /**
   * Updates, deletions and taken-back writes since the index was loaded: what appending new
   * documents leaves unchanged (caches of the documents before them stay true).
   */
  rewrites?: number
  /** The rowid the next new document of this index gets. */
  nextRid: number
  /** Documents below this rowid have their field values in `fv`; those from it on wait for a refresh (refresh.ts). */
  indexedRid: number
  specs: Map<string, FieldSpec>
  /** field name -> fv field id, for fields with an indexed kind */
  fieldIds: Map<string, number>
  /** fv field ids of which a document may hold several values (so its rows may repeat a rid). */
  multiValued: Set<number>
  /** Lengths ids of text fields (text-index.ts): their rows move the field's BM25 counters. */
  lengthIds: Set<number>
}

export interface DataStreamMeta {
  name: string
  template: string
  generation: number
  tsField: string
}

export class Catalog implements Namespace {
  byName = new Map<string, IndexMeta>()
  byIx = new Map<number, IndexMeta>()
  /** alias -> index name -> definition */
  aliasMap = new Map<string, Map<string, AliasDefinition>>()
  templates = new Map<string, IndexTemplateBody>()
  componentTemplates = new Map<string, ComponentTemplateBody>()
  legacyTemplates = new Map<string, LegacyTemplateBody>()
  streams = new Map<string, DataStreamMeta>()

  static load(db: Database): Catalog {
    const c = new Catalog()
    const counts = new Map<number, number>()
    for (const r of db.query('SELECT ix, count(*) AS n FROM docs GROUP BY ix').all() as Array<{ ix: number; n: number }>)
      counts.set(r.ix, r.n)
    type Row = {
      ix: number
      name: string
      uuid: string
      created: number
      settings: string
      mappings: string
      seq: number
      data_stream: string | null
      closed: number
      indexed_rid: number | null
    }
    for (const r of db.query('SELECT * FROM indices').all() as Row[]) {
      const mappings = JSON.parse(r.mappings) as Mappings
      const next = nextRid(db, r.ix)
      const meta: IndexMeta = {
        ix: r.ix,
        name: r.name,
        uuid: r.uuid,
        created: r.created,
        settings: JSON.parse(r.settings),
        mappings,
        seq: r.seq,
        dataStream: r.data_stream ?? undefined,
        closed: r.closed === 1,
        docCount: counts.get(r.ix) ?? 0,
        nextRid: next,
        // None: an index written before refreshes existed, every document in `fv`.
        indexedRid: r.indexed_rid ?? next,
        specs: fieldSpecs(mappings, ignoresMalformed(JSON.parse(r.settings))),
        fieldIds: new Map(),
        multiValued: new Set(),
        lengthIds: new Set(),
      }
      c.byName.set(meta.name, meta)
      c.byIx.set(meta.ix, meta)
    }
    for (const r of db.query('SELECT f, ix, name, multi FROM fields').all() as Array<{
      f: number
      ix: number
      name: string
      multi: number | null
    }>) {
      const meta = c.byIx.get(r.ix)
      meta?.fieldIds.set(r.name, r.f)
      if (r.multi !== 0) meta?.multiValued.add(r.f)
      if (isLengthsField(r.name)) meta?.lengthIds.add(r.f)
    }
    for (const r of db.query('SELECT alias, ix, def FROM aliases').all() as Array<{ alias: string; ix: number; def: string }>) {
      const meta = c.byIx.get(r.ix)
      if (!meta) continue
      let m = c.aliasMap.get(r.alias)
      if (!m) c.aliasMap.set(r.alias, (m = new Map()))
      m.set(meta.name, JSON.parse(r.def))
    }
    loadBodies(db, 'templates', c.templates)
    loadBodies(db, 'component_templates', c.componentTemplates)
    loadBodies(db, 'legacy_templates', c.legacyTemplates)
    for (const r of db.query('SELECT name, template, generation, ts_field FROM data_streams').all() as Array<{
      name: string
      template: string
      generation: number
      ts_field: string
    }>)
      c.streams.set(r.name, { name: r.name, template: r.template, generation: r.generation, tsField: r.ts_field })
    return c
  }

  hidden(meta: IndexMeta): boolean {
    return meta.settings['index.hidden'] === 'true'
  }

  backingIndices(ds: DataStreamMeta): string[] {
    return [...this.byName.values()]
      .filter((m) => m.dataStream === ds.name)
      .map((m) => m.name)
      .sort()
  }

  // Namespace
  get indices() {
    return [...this.byName.values()].map((m) => ({ name: m.name, hidden: this.hidden(m), closed: m.closed }))
  }
  get aliases() {
    const out: Array<{ alias: string; index: string; hidden: boolean; filter?: Record<string, unknown> }> = []
    for (const [alias, m] of this.aliasMap)
      for (const [index, def] of m) out.push({ alias, index, hidden: def.is_hidden === true, filter: def.filter })
    return out
  }
  get dataStreams() {
    return [...this.streams.values()].map((ds) => ({ name: ds.name, indices: this.backingIndices(ds) }))
  }
  isIndex(name: string): boolean {
    return this.byName.has(name)
  }
  closedUuid(name: string): string | undefined {
    const m = this.byName.get(name)
    return m?.closed ? m.uuid : undefined
  }
  alias(name: string): Array<{ index: string; filter?: Record<string, unknown> }> {
    const m = this.aliasMap.get(name)
    return m ? [...m].map(([index, def]) => ({ index, filter: def.filter })) : []
  }
  dataStream(name: string): { name: string; indices: string[] } | undefined {
    const ds = this.streams.get(name)
    return ds ? { name, indices: this.backingIndices(ds) } : undefined
  }
}

/** Table of one JSON body per name (the three kinds of templates) into `into`. */
function loadBodies<T>(db: Database, table: string, into: Map<string, T>): void {
  for (const r of db.query(`SELECT name, body FROM ${table}`).all() as Array<{ name: string; body: string }>)
    into.set(r.name, JSON.parse(r.body))
}

export function nextRid(db: Database, ix: number): number {
  const [lo, hi] = ridRange(ix)
  const r = db.query('SELECT max(rid) AS m FROM docs WHERE rid BETWEEN ? AND ?').get(lo, hi) as { m: number | null }
  return r.m === null ? lo : r.m + 1
}

export function kindOfField(meta: IndexMeta, field: string): IndexedKind | undefined {
  const spec = meta.specs.get(field)
  return spec ? indexedKind(spec) : undefined
}

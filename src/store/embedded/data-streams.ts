/** Data streams: a name over generations of hidden backing indices, created from a template. */
import { AlreadyExists, IllegalArgument, IndexNotFound, InvalidIndexName, ResourceNotFound } from '../errors'
import { hasWildcard, validateIndexName, wildcardToRegExp } from '../names'
import type { Acknowledged, DataStreamInfo } from '../port'
import type { DataStreamMeta } from './catalog'
import type { StoreCore } from './core'
import { createIndexNow, dropIndex, setMappings } from './indices'
import { mergeMappings } from './mapping'
import { matchTemplate } from './templates/match'

export async function createDataStream(core: StoreCore, params: { name: string }): Promise<Acknowledged> {
  core.tx(() => createDataStreamNow(core, params.name))
  return { acknowledged: true }
}

export function createDataStreamNow(core: StoreCore, name: string): DataStreamMeta {
  validateIndexName(name)
  if (name.startsWith('.ds-')) throw new InvalidIndexName(name, "data_stream [.ds-] must not start with '.ds-'")
  if (core.cat.streams.has(name)) throw new AlreadyExists(`data_stream [${name}] already exists`)
  if (core.cat.byName.has(name) || core.cat.aliasMap.has(name))
    throw new AlreadyExists(`data_stream [${name}] conflicts with existing index or alias`)
  const template = matchTemplate(core, name)
  if (!template?.body.data_stream) throw new IllegalArgument(`no matching index template found for data stream [${name}]`)
  const tsField = template.body.data_stream.timestamp_field?.name ?? '@timestamp'
  const ds: DataStreamMeta = { name, template: template.name, generation: 1, tsField }
  core.db.query('INSERT INTO data_streams (name, template, generation, ts_field) VALUES (?, ?, 1, ?)').run(name, template.name, tsField)
  core.cat.streams.set(name, ds)
  core.onUndo(() => core.cat.streams.delete(name))
  const backing = createIndexNow(core, backingIndexName(name, 1), {}, name)
  if (tsField !== '@timestamp') setMappings(core, backing, mergeMappings(backing.mappings, { properties: { [tsField]: { type: 'date' } } }))
  return ds
}

export async function getDataStream(
  core: StoreCore,
  params: { name?: string | string[] } = {},
): Promise<{ data_streams: DataStreamInfo[] }> {
  const names = params.name === undefined ? ['*'] : Array.isArray(params.name) ? params.name : params.name.split(',')
  const out: DataStreamInfo[] = []
  for (const n of names) {
    const re = wildcardToRegExp(n === '_all' ? '*' : n)
    const found = [...core.cat.streams.values()].filter((d) => re.test(d.name))
    if (found.length === 0 && !hasWildcard(n) && n !== '_all') throw new IndexNotFound(n)
    for (const ds of found)
      if (!out.some((o) => o.name === ds.name))
        out.push({
          name: ds.name,
          timestamp_field: { name: ds.tsField },
          indices: core.cat.backingIndices(ds).map((i) => ({ index_name: i, index_uuid: core.indexMeta(i).uuid })),
          generation: ds.generation,
          status: 'GREEN',
          template: ds.template,
        })
  }
  return { data_streams: out.sort((a, b) => (a.name < b.name ? -1 : 1)) }
}

export async function deleteDataStream(core: StoreCore, params: { name: string | string[] }): Promise<Acknowledged> {
  const names = (Array.isArray(params.name) ? params.name : params.name.split(',')).flatMap((n) => {
    const re = wildcardToRegExp(n === '_all' ? '*' : n)
    const found = [...core.cat.streams.keys()].filter((k) => re.test(k))
    if (found.length === 0 && !hasWildcard(n) && n !== '_all') throw new ResourceNotFound(`data_stream matching [${n}] not found`)
    return found
  })
  core.tx(() => {
    for (const n of names) {
      const ds = core.cat.streams.get(n)!
      for (const i of core.cat.backingIndices(ds)) dropIndex(core, core.indexMeta(i))
      core.db.query('DELETE FROM data_streams WHERE name = ?').run(n)
      core.cat.streams.delete(n)
      core.onUndo(() => core.cat.streams.set(n, ds))
    }
  })
  return { acknowledged: true }
}

/**
 * Rolls a data stream over: its next generation's backing index is created (from the stream's
 * template, as the first one) and becomes the write index. Answers the old and new write indices.
 */
export async function rolloverDataStream(core: StoreCore, params: { name: string }): Promise<{ old_index: string; new_index: string }> {
  return core.tx(() => {
    const ds = core.cat.streams.get(params.name)
    if (!ds) throw new IndexNotFound(params.name)
    const old = core.writeIndexOf(ds).name
    const generation = ds.generation + 1
    const name = backingIndexName(ds.name, generation)
    if (core.cat.byName.has(name)) throw new AlreadyExists(`index [${name}/${core.indexMeta(name).uuid}] already exists`, name)
    core.db.query('UPDATE data_streams SET generation = ? WHERE name = ?').run(generation, ds.name)
    const before = ds.generation
    ds.generation = generation
    core.onUndo(() => (ds.generation = before))
    const backing = createIndexNow(core, name, {}, ds.name)
    if (ds.tsField !== '@timestamp')
      setMappings(core, backing, mergeMappings(backing.mappings, { properties: { [ds.tsField]: { type: 'date' } } }))
    return { old_index: old, new_index: name }
  })
}

/** The backing index the next rollover of a data stream would create. */
export function nextBackingIndex(core: StoreCore, name: string): { old_index: string; new_index: string } {
  const ds = core.cat.streams.get(name)
  if (!ds) throw new IndexNotFound(name)
  return { old_index: core.writeIndexOf(ds).name, new_index: backingIndexName(ds.name, ds.generation + 1) }
}

export function backingIndexName(stream: string, generation: number): string {
  return `.ds-${stream}-${String(generation).padStart(6, '0')}`
}

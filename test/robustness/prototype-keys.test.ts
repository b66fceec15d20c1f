/**
 * Field names that are also members of Object.prototype (`__proto__`, `constructor`,
 * `hasOwnProperty`, ...) are ordinary field names to OpenSearch. Written through a plugin route
 * into a dynamically mapped content index, they must be stored like any other field and must not
 * touch shared prototypes (the service runs in one process: a polluted prototype reaches every
 * request).
 *
 * Regression: dynamic mapping once read `m.properties?.[name]`, found inherited members, and wrote
 * `properties` onto Object.prototype (for `__proto__`) or the Object constructor (for `constructor`).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { CONTENT_ALIASES } from '../../src/setup/indices'
import { integrationBody, PREFIX, startHarness, type Harness } from '../content/harness'

let h: Harness
let parent: string
beforeAll(async () => {
  h = await startHarness({ engine: 'mock' })
  parent = (await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('proto-keys') })).body.message
})

/** Decoders are stored under a dynamic mapping, so every field name reaches the store's mapper. */
const decoder = (name: string) => ({
  integration: parent,
  resource: { name, metadata: { title: name, author: 'tests' }, check: [{ 'event.original': 'exists()' }] },
})
afterAll(() => h.stop())

/** Creates a decoder whose metadata carries `extra` (raw JSON members); answers status and what changed globally. */
async function createWith(extra: string, name: string) {
  const objectKeys = new Set(Reflect.ownKeys(Object))
  const protoKeys = new Set(Reflect.ownKeys(Object.prototype))
  const body = JSON.stringify(decoder(name)).replace('"metadata":{', `"metadata":{${extra},`)
  const r = await h.request('POST', `${PREFIX}/decoders`, { raw: body })
  const added = [
    ...Reflect.ownKeys(Object.prototype)
      .filter((k) => !protoKeys.has(k))
      .map((k) => `Object.prototype.${String(k)}`),
    ...Reflect.ownKeys(Object)
      .filter((k) => !objectKeys.has(k))
      .map((k) => `Object.${String(k)}`),
  ]
  // Leave the process clean for whatever runs next, whatever the outcome.
  for (const k of Reflect.ownKeys(Object.prototype)) if (!protoKeys.has(k)) delete (Object.prototype as any)[k]
  for (const k of Reflect.ownKeys(Object)) if (!objectKeys.has(k)) delete (Object as any)[k]
  return { status: r.status, body: r.body, added }
}

describe('prototype-named fields in content documents', () => {
  test('__proto__ and constructor are stored as fields and leave shared objects alone', async () => {
    const proto = await createWith('"__proto__": {"polluted": "yes"}', 'decoder/proto/0')
    const ctor = await createWith('"constructor": {"prototype": {"polluted": "yes"}}', 'decoder/proto/1')
    expect({ proto: proto.added, ctor: ctor.added }).toEqual({ proto: [], ctor: [] })
    expect([proto.status, ctor.status]).toEqual([201, 201])
    const stored = await h.store.get({ index: CONTENT_ALIASES.decoders, id: ctor.body.message })
    expect(Object.hasOwn((stored as any)._source.document.metadata, 'constructor')).toBe(true)
  })

  test('a field named hasOwnProperty holds a plain value', async () => {
    const r = await createWith('"hasOwnProperty": 5', 'decoder/proto/2')
    expect(r.status).toBe(201)
  })

  test('an ordinary extra field is stored (the harness itself works)', async () => {
    const r = await createWith('"vendor_note": {"x": 1}', 'decoder/proto/3')
    expect(r).toMatchObject({ status: 201, added: [] })
  })
})

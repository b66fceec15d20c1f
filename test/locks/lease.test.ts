// The one lease helper over the embedded store: renewal keeps a long holder's lease, a starved
// renewal is caught by the holder's own check, a never-renewed lease is given up past its stale
// age, and holders on several "nodes" (separate KeyedLeases over one store) never overlap.
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { ActiveLease, KeyedLeases, tryAcquireLease, type LeaseSpec } from '../../src/locks/lease'
import { EmbeddedStore } from '../../src/store/embedded/store'
import { ensureIndex } from '../../src/setup/ensure'
import { RESOURCE_LOCKS } from '../../src/setup/indices'

let store: EmbeddedStore
beforeEach(async () => {
  store = new EmbeddedStore(':memory:')
  // As the Setup bootstrap leaves it: the index and its template (which recreates it after a deletion).
  const template = RESOURCE_LOCKS.template!
  await store.putIndexTemplate({ name: template.name, body: template.body, create: false })
  await ensureIndex(store, RESOURCE_LOCKS)
})
afterEach(() => store.close())

const spec = (staleMillis: number): LeaseSpec => ({ index: RESOURCE_LOCKS.name, id: 'lease-test', staleMillis })
const node = (now: () => number = Date.now) => new KeyedLeases({ store, now, ensureIndex: () => ensureIndex(store, RESOURCE_LOCKS) })
const busy = () => new Error('busy')

test('a holder whose work outlasts the stale age keeps its lease while it renews', async () => {
  const s = spec(1500) // renewed every second
  let stealAttempts = 0
  const other = async () => {
    // Another node keeps trying to take the lease while the holder works.
    for (let i = 0; i < 12; i++) {
      if (await tryAcquireLease({ store, now: Date.now }, s)) return 'stolen'
      stealAttempts++
      await Bun.sleep(250)
    }
    return 'held'
  }
  const outcome = await node().run(s, { waitMillis: 100, backoffMillis: 10, renew: true, busy }, async (lease) => {
    const thief = other()
    await Bun.sleep(3200) // more than twice the stale age
    expect(await lease.stillMine()).toBe(true)
    return thief
  })
  expect(outcome).toBe('held')
  expect(stealAttempts).toBe(12)
  expect((await store.get({ index: s.index, id: s.id })).found).toBe(false) // released afterwards
})

test('holders on three nodes with work longer than the stale age never overlap', async () => {
  const s = spec(1200)
  let inside = 0
  let most = 0
  const order: string[] = []
  const work = (name: string) =>
    node().run(s, { waitMillis: 10_000, backoffMillis: 50, renew: true, busy }, async () => {
      inside++
      most = Math.max(most, inside)
      order.push(name)
      await Bun.sleep(1500)
      inside--
    })
  await Promise.all([work('a'), work('b'), work('c')])
  expect(most).toBe(1)
  expect(order.sort()).toEqual(['a', 'b', 'c'])
})

test('a starved renewal is caught by stillMine: re-read and renewed when still ours, false once stolen', async () => {
  let clock = 1_000_000
  const now = () => clock
  const s = spec(5000)
  const held = (await tryAcquireLease({ store, now }, s))!
  const lease = new ActiveLease({ store, now }, held, true)
  try {
    clock += 6000 // the timer never ran (a long synchronous stretch), past the stale age
    expect(await lease.stillMine()).toBe(true) // nobody took it: renewed on the spot
    expect(lease.held.acquiredAt).toBe(clock)
    clock += 6000
    expect(await tryAcquireLease({ store, now }, s)).toBeDefined() // a thief finds it stale
    expect(await lease.stillMine()).toBe(false)
  } finally {
    await lease.release()
  }
  expect((await store.get({ index: s.index, id: s.id })).found).toBe(true) // the thief's, not ours to delete
})

test('a never-renewed lease past its stale age is given up before the write, and the thief proceeds', async () => {
  let clock = 1_000_000
  const now = () => clock
  const s = spec(5000)
  const writes: string[] = []
  const first = node(now).run(s, { waitMillis: 0, maxAttempts: 1, backoffMillis: 10, renew: false, busy }, async (lease) => {
    clock += 5500 // the slow part outlived the stale age
    const second = node(now).run(s, { waitMillis: 0, maxAttempts: 1, backoffMillis: 10, renew: false, busy }, async (l2) => {
      if (await l2.stillMine()) writes.push('second')
    })
    await second
    if (await lease.stillMine()) writes.push('first')
  })
  await first
  expect(writes).toEqual(['second'])
})

test('callers on one node take turns in arrival order; one whose wait runs out gets busy() and never runs', async () => {
  const leases = node()
  const s = spec(60_000)
  const ran: number[] = []
  const slow = leases.run(s, { waitMillis: 1000, backoffMillis: 10, renew: true, busy }, async () => {
    await Bun.sleep(150)
    ran.push(0)
  })
  const next = leases.run(s, { waitMillis: 1000, backoffMillis: 10, renew: true, busy }, async () => void ran.push(1))
  const late = leases.run(s, { waitMillis: 50, backoffMillis: 10, renew: true, busy }, async () => void ran.push(2))
  await expect(late).rejects.toThrow('busy')
  await Promise.all([slow, next])
  expect(ran).toEqual([0, 1])
})

test('a lock index deleted by hand is recreated with its strict mapping, before the first lease and after', async () => {
  const leases = node()
  const once = () => leases.run(spec(5000), { waitMillis: 100, backoffMillis: 10, renew: false, busy }, async () => 'ran')
  for (let round = 0; round < 2; round++) {
    await store.deleteIndex({ index: RESOURCE_LOCKS.name })
    expect(await once()).toBe('ran')
    const mapping = await store.getMapping({ index: RESOURCE_LOCKS.name })
    expect(mapping[RESOURCE_LOCKS.name].mappings).toMatchObject({ dynamic: 'strict' })
  }
})

test('on a node-local store the queue alone makes callers take turns: no overlap, no lease document', async () => {
  const leases = new KeyedLeases({ store, now: Date.now, nodeLocal: true, ensureIndex: () => ensureIndex(store, RESOURCE_LOCKS) })
  const s = spec(5000)
  let inside = 0
  let most = 0
  let docs = 0
  await Promise.all(
    Array.from({ length: 20 }, () =>
      leases.run(s, { waitMillis: 10_000, backoffMillis: 10, renew: true, handOffMillis: 2500, busy }, async (lease) => {
        inside++
        most = Math.max(most, inside)
        docs += (await store.count({ index: s.index })).count
        expect(await lease.stillMine()).toBe(true)
        await Bun.sleep(5)
        inside--
      }),
    ),
  )
  expect(most).toBe(1)
  expect(docs).toBe(0)
})

test('waits and time-outs are reported once per caller: on the node queue and at a document another node holds', async () => {
  const events: string[] = []
  const onEvent = (e: { kind: string }) => void events.push(e.kind)
  const s = spec(60_000)
  const a = node()
  const b = node()
  let release!: () => void
  const holding = new Promise<void>((r) => (release = r))
  const held = a.run(s, { waitMillis: 1000, backoffMillis: 10, renew: false, busy, onEvent }, () => holding)
  await Bun.sleep(30)
  // Another node polls the held document until its wait runs out: one wait, one time-out, however many polls.
  await expect(b.run(s, { waitMillis: 120, backoffMillis: 10, renew: false, busy, onEvent }, async () => {})).rejects.toThrow('busy')
  expect(events.filter((k) => k === 'wait')).toHaveLength(1)
  expect(events.filter((k) => k === 'timeout')).toHaveLength(1)
  // Behind a local holder: the queued caller waits, then gets its turn (no time-out).
  const queued = a.run(s, { waitMillis: 1000, backoffMillis: 10, renew: false, busy, onEvent }, async () => 'ran')
  release()
  expect(await queued).toBe('ran')
  await held
  expect(events.filter((k) => k === 'wait')).toHaveLength(2)
  expect(events.filter((k) => k === 'timeout')).toHaveLength(1)
  expect(events.filter((k) => k === 'acquire').length).toBeGreaterThanOrEqual(2)
})

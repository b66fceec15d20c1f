import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SESSIONS_STREAM } from '../../src/setup/indices'
import { SESSION_BODY_LIMIT } from '../../src/setup/sessions/body'
import { startSetupServer, type SetupServer } from './harness'

let srv: SetupServer
beforeAll(async () => {
  srv = await startSetupServer()
})
afterAll(() => srv.stop())

const SESSIONS = '/_plugins/_setup/ai_assistant/sessions'
const CONFLICT = 'Session was updated by another session since you last loaded it. Refresh and retry.'
const VERSION = /^\d+:\d+$/

async function create(user: string, body: unknown = { title: 't', messages: [] }) {
  const r = await srv.request('POST', SESSIONS, { user, body })
  expect(r.status).toBe(200)
  return r.body as { id: string; title: string; created_at: string; updated_at: string; messages: unknown[]; version: string }
}

/** The stored document, read the way clients do (search on the stream), without DLS. */
async function stored(id: string) {
  const r = await srv.store.search({ index: SESSIONS_STREAM, body: { query: { ids: { values: [id] } }, seq_no_primary_term: true } })
  return r.hits.hits[0]
}

const count = async (user: string) => (await srv.store.count({ index: SESSIONS_STREAM, body: { query: { term: { user } } } })).count

/** Puts sessions straight into the stream (as a restore or an earlier boot would have). */
async function seed(user: string, n: number) {
  const now = new Date().toISOString()
  const body = []
  for (let i = 0; i < n; i++)
    body.push({ create: {} }, { user, title: `seed ${i}`, messages: [], created_at: now, updated_at: now, '@timestamp': now })
  const r = await srv.store.bulk({ index: SESSIONS_STREAM, body, refresh: true })
  expect(r.errors).toBe(false)
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('create', () => {
  test('200 with id, equal timestamps, messages verbatim and a version; the stored user is the caller', async () => {
    const messages = [{ role: 'user', content: 'hi', createdAt: 1788961419723, extra: { nested: [1, 'two', null] } }, 'free text', 42]
    const r = await srv.request('POST', SESSIONS, { user: 'alice', body: { title: 'Any brute force attempts today?', messages } })
    expect(r.status).toBe(200)
    expect(Object.keys(r.body).sort()).toEqual(['created_at', 'id', 'messages', 'title', 'updated_at', 'version'])
    expect(r.body.title).toBe('Any brute force attempts today?')
    expect(r.body.messages).toEqual(messages)
    expect(r.body.created_at).toBe(r.body.updated_at)
    expect(new Date(r.body.created_at).toISOString()).toBe(r.body.created_at)
    expect(r.body.version).toMatch(VERSION)
    const hit = await stored(r.body.id)
    expect(hit._index).toStartWith('.ds-svc-ai-assistant-sessions-')
    expect(hit._source).toEqual({
      user: 'alice',
      title: 'Any brute force attempts today?',
      messages,
      created_at: r.body.created_at,
      updated_at: r.body.created_at,
      '@timestamp': r.body.created_at,
    })
    expect(r.body.version).toBe(`${hit._seq_no}:${hit._primary_term}`)
  })

  test('client user, timestamps, id and unknown keys are discarded, not rejected', async () => {
    const r = await srv.request('POST', SESSIONS, {
      user: 'alice',
      body: {
        title: '  trimmed  ',
        messages: [],
        user: 'mallory',
        created_at: '2000-01-01T00:00:00Z',
        '@timestamp': 'x',
        id: 'mine',
        colour: 'red',
      },
    })
    expect(r.status).toBe(200)
    expect(r.body.title).toBe('trimmed')
    expect(r.body.id).not.toBe('mine')
    expect(r.body.created_at).not.toStartWith('2000')
    const src = (await stored(r.body.id))._source!
    expect(Object.keys(src).sort()).toEqual(['@timestamp', 'created_at', 'messages', 'title', 'updated_at', 'user'])
    expect(src.user).toBe('alice')
    expect(src.title).toBe('trimmed')
  })

  test('validation messages, in order, and nothing stored', async () => {
    const before = await count('bob')
    const cases: Array<[unknown, string]> = [
      [{ messages: [] }, 'Session title is required.'],
      [{ title: '   ', messages: [] }, 'Session title is required.'],
      [{ title: 5, messages: [] }, 'Session title is required.'],
      [{ title: 'x'.repeat(201), messages: [] }, 'Session title must be 200 characters or fewer.'],
      [{ title: 't' }, 'Session messages are required.'],
      [{ title: 't', messages: { a: 1 } }, 'Session messages are required.'],
      [{ title: 't', messages: new Array(1001).fill({ role: 'user' }) }, 'A session cannot hold more than 1000 messages.'],
      // The title is checked before the messages.
      [{ title: '', messages: new Array(1001).fill(1) }, 'Session title is required.'],
      [[{ title: 't', messages: [] }], 'Invalid request body.'],
      ['just a string', 'Invalid request body.'],
    ]
    for (const [body, message] of cases) {
      const r = await srv.request('POST', SESSIONS, { user: 'bob', body })
      expect(r).toEqual({ status: 400, body: { message, status: 400 } })
    }
    expect(await count('bob')).toBe(before)
  })

  test('200-character title and 1000 messages are accepted', async () => {
    const r = await create('bob', { title: 'y'.repeat(200), messages: new Array(1000).fill({ role: 'assistant', content: 'ok' }) })
    expect(r.title).toHaveLength(200)
    expect(r.messages).toHaveLength(1000)
  })

  test('empty, blank and malformed bodies are 400', async () => {
    for (const raw of ['', '   \n', '{', '{"title": "t", "messages": []} trailing', '\xff']) {
      const r = await srv.request('POST', SESSIONS, { user: 'bob', raw })
      expect(r.status).toBe(400)
      expect(r.body.status).toBe(400)
    }
    expect((await srv.request('POST', SESSIONS, { user: 'bob', raw: '' })).body.message).toContain('request body must not be empty')
    expect((await srv.request('POST', SESSIONS, { user: 'bob', raw: '{' })).body.message).toBe('Invalid request body.')
  })

  test('a body of exactly 5 MiB passes; one byte more is refused before parsing', async () => {
    const frame = (pad: number) => JSON.stringify({ title: 'big', messages: [{ content: 'x'.repeat(pad) }] })
    const overhead = frame(0).length
    const exact = frame(SESSION_BODY_LIMIT - overhead)
    expect(Buffer.byteLength(exact)).toBe(SESSION_BODY_LIMIT)
    const ok = await srv.request('POST', SESSIONS, { user: 'bob', raw: exact })
    expect(ok.status).toBe(200)
    const over = await srv.request('POST', SESSIONS, { user: 'bob', raw: exact + ' ' })
    expect(over).toEqual({ status: 400, body: { message: 'Session payload must be 5 MiB or smaller.', status: 400 } })
    // Not JSON at all: the size is what is reported, so nothing was parsed.
    const junk = await srv.request('POST', SESSIONS, { user: 'bob', raw: '{'.repeat(SESSION_BODY_LIMIT + 1) })
    expect(junk.body.message).toBe('Session payload must be 5 MiB or smaller.')
  })

  test('an over-size streamed body (no Content-Length) is refused too, on every write route', async () => {
    const s = await create('bob')
    for (const [method, path] of [
      ['POST', SESSIONS],
      ['PUT', `${SESSIONS}/${s.id}`],
      ['PATCH', `${SESSIONS}/${s.id}`],
    ] as const) {
      const chunk = new Uint8Array(1024 * 1024).fill(0x20)
      let sent = 0
      const stream = new ReadableStream({
        pull(c) {
          if (sent++ < 6) c.enqueue(chunk)
          else c.close()
        },
      })
      const res = await fetch(srv.url + path, {
        method,
        headers: { authorization: `Basic ${Buffer.from('bob:pw-123456').toString('base64')}` },
        body: stream,
        duplex: 'half',
      } as RequestInit)
      expect(res.status).toBe(400)
      expect(((await res.json()) as { message: string }).message).toBe('Session payload must be 5 MiB or smaller.')
    }
  })

  test('401 without credentials, 403 without the session permission', async () => {
    const anon = await fetch(srv.url + SESSIONS, { method: 'POST', body: JSON.stringify({ title: 't', messages: [] }) })
    expect(anon.status).toBe(401)
    const r = await srv.request('POST', SESSIONS, { user: 'carol', body: { title: 't', messages: [] } })
    expect(r.status).toBe(403)
    expect(r.body.status).toBe(403)
    expect(await count('carol')).toBe(0)
  })
})

describe('replace', () => {
  test('swaps the transcript, keeps created_at and @timestamp, re-stamps updated_at, fresh version', async () => {
    const s = await create('alice', { title: 'keep me', messages: [{ n: 1 }] })
    await sleep(5)
    const r = await srv.request('PUT', `${SESSIONS}/${s.id}`, {
      user: 'alice',
      body: { messages: [{ n: 2 }, { n: 3 }], created_at: '1999-01-01T00:00:00Z' },
    })
    expect(r.status).toBe(200)
    expect(Object.keys(r.body).sort()).toEqual(['created_at', 'id', 'messages', 'title', 'updated_at', 'version'])
    expect(r.body).toMatchObject({ id: s.id, title: 'keep me', created_at: s.created_at, messages: [{ n: 2 }, { n: 3 }] })
    expect(r.body.updated_at > s.updated_at).toBe(true)
    expect(r.body.version).not.toBe(s.version)
    const hit = await stored(s.id)
    expect(hit._source).toMatchObject({
      user: 'alice',
      title: 'keep me',
      messages: [{ n: 2 }, { n: 3 }],
      created_at: s.created_at,
      '@timestamp': s.created_at,
      updated_at: r.body.updated_at,
    })
    expect(r.body.version).toBe(`${hit._seq_no}:${hit._primary_term}`)
  })

  test('a present title is validated and trimmed; null or blank is refused', async () => {
    const s = await create('alice')
    const r = await srv.request('PUT', `${SESSIONS}/${s.id}`, { user: 'alice', body: { title: '  new  ', messages: [] } })
    expect(r.body.title).toBe('new')
    expect((await stored(s.id))._source!.title).toBe('new')
    for (const [title, message] of [
      [null, 'Session title is required.'],
      ['  ', 'Session title is required.'],
      ['z'.repeat(201), 'Session title must be 200 characters or fewer.'],
    ]) {
      const bad = await srv.request('PUT', `${SESSIONS}/${s.id}`, { user: 'alice', body: { title, messages: [] } })
      expect(bad).toEqual({ status: 400, body: { message, status: 400 } })
    }
  })

  test('without a title the stored (renamed) title is kept', async () => {
    const s = await create('alice')
    expect((await srv.request('PATCH', `${SESSIONS}/${s.id}`, { user: 'alice', body: { title: 'Renamed' } })).status).toBe(200)
    const r = await srv.request('PUT', `${SESSIONS}/${s.id}`, { user: 'alice', body: { messages: ['m'] } })
    expect(r.body.title).toBe('Renamed')
  })

  test('a stale expected_version is a 409 and nothing is written; the current one chains', async () => {
    const s = await create('alice', { title: 't', messages: ['first'] })
    const v1 = (
      await srv.request('PUT', `${SESSIONS}/${s.id}`, { user: 'alice', body: { messages: ['second'], expected_version: s.version } })
    ).body.version
    const stale = await srv.request('PUT', `${SESSIONS}/${s.id}`, {
      user: 'alice',
      body: { messages: ['lost'], expected_version: s.version },
    })
    expect(stale).toEqual({ status: 409, body: { message: CONFLICT, status: 409 } })
    expect((await stored(s.id))._source!.messages).toEqual(['second'])
    const chained = await srv.request('PUT', `${SESSIONS}/${s.id}`, { user: 'alice', body: { messages: ['third'], expected_version: v1 } })
    expect(chained.status).toBe(200)
    const again = await srv.request('PUT', `${SESSIONS}/${s.id}`, {
      user: 'alice',
      body: { messages: ['fourth'], expected_version: chained.body.version },
    })
    expect(again.status).toBe(200)
    expect((await stored(s.id))._source!.messages).toEqual(['fourth'])
    // A made-up version that the session never had is a conflict as well.
    const bogus = await srv.request('PUT', `${SESSIONS}/${s.id}`, { user: 'alice', body: { messages: ['x'], expected_version: '0:1' } })
    expect(bogus.status).toBe(409)
  })

  test("an undecodable expected_version is ignored (checked against the request's own read)", async () => {
    const s = await create('alice')
    for (const expected_version of ['abc', 5, null, '1:2:3', { seq: 1 }]) {
      const r = await srv.request('PUT', `${SESSIONS}/${s.id}`, {
        user: 'alice',
        body: { messages: [String(expected_version)], expected_version },
      })
      expect(r.status).toBe(200)
    }
  })

  test('validation precedes the lookup: a bad body on an unknown id is 400, a good one 404', async () => {
    const bad = await srv.request('PUT', `${SESSIONS}/nope`, { user: 'alice', body: { title: 't' } })
    expect(bad).toEqual({ status: 400, body: { message: 'Session messages are required.', status: 400 } })
    const missing = await srv.request('PUT', `${SESSIONS}/nope`, { user: 'alice', body: { messages: [] } })
    expect(missing).toEqual({ status: 404, body: { message: 'Session not found: nope', status: 404 } })
    const tooMany = await srv.request('PUT', `${SESSIONS}/nope`, { user: 'alice', body: { title: '', messages: new Array(1001).fill(0) } })
    expect(tooMany.body.message).toBe('A session cannot hold more than 1000 messages.')
  })

  test("another user's session is 404 and stays untouched", async () => {
    const s = await create('alice', { title: 'private', messages: ['secret'] })
    const r = await srv.request('PUT', `${SESSIONS}/${s.id}`, { user: 'bob', body: { messages: ['hijack'], expected_version: s.version } })
    expect(r).toEqual({ status: 404, body: { message: `Session not found: ${s.id}`, status: 404 } })
    const hit = await stored(s.id)
    expect(hit._source).toMatchObject({ user: 'alice', messages: ['secret'] })
    expect(`${hit._seq_no}:${hit._primary_term}`).toBe(s.version)
  })

  test('20 concurrent replaces with the same expected_version: exactly one 200', async () => {
    const s = await create('alice', { title: 'race', messages: [] })
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        srv.request('PUT', `${SESSIONS}/${s.id}`, { user: 'alice', body: { messages: [`writer ${i}`], expected_version: s.version } }),
      ),
    )
    const ok = results.filter((r) => r.status === 200)
    expect(ok).toHaveLength(1)
    expect(results.filter((r) => r.status === 409).every((r) => r.body.message === CONFLICT)).toBe(true)
    expect(results.filter((r) => r.status === 409)).toHaveLength(19)
    const hit = await stored(s.id)
    expect(hit._source!.messages).toEqual(ok[0].body.messages)
    expect(`${hit._seq_no}:${hit._primary_term}`).toBe(ok[0].body.version)
  })
})

describe('rename', () => {
  test('changes only the title (trimmed), keeps updated_at, returns a fresh version and no transcript', async () => {
    const s = await create('alice', { title: 'old', messages: [{ keep: true }] })
    await sleep(5)
    const r = await srv.request('PATCH', `${SESSIONS}/${s.id}`, {
      user: 'alice',
      body: { title: '  Agent 003 connectivity ', messages: ['ignored'] },
    })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ id: s.id, title: 'Agent 003 connectivity', updated_at: s.updated_at, version: expect.stringMatching(VERSION) })
    expect(r.body.version).not.toBe(s.version)
    const hit = await stored(s.id)
    expect(hit._source).toEqual({
      user: 'alice',
      title: 'Agent 003 connectivity',
      messages: [{ keep: true }],
      created_at: s.created_at,
      updated_at: s.updated_at,
      '@timestamp': s.created_at,
    })
  })

  test('rename ignores expected_version', async () => {
    const s = await create('alice')
    await srv.request('PUT', `${SESSIONS}/${s.id}`, { user: 'alice', body: { messages: [1] } })
    const r = await srv.request('PATCH', `${SESSIONS}/${s.id}`, { user: 'alice', body: { title: 'fine', expected_version: s.version } })
    expect(r.status).toBe(200)
  })

  test('blank, missing and over-long titles are 400; unknown or foreign ids 404', async () => {
    const s = await create('alice')
    for (const [body, message] of [
      [{ title: ' ' }, 'Session title is required.'],
      [{}, 'Session title is required.'],
      [{ title: 'q'.repeat(201) }, 'Session title must be 200 characters or fewer.'],
    ] as const) {
      expect(await srv.request('PATCH', `${SESSIONS}/${s.id}`, { user: 'alice', body })).toEqual({
        status: 400,
        body: { message, status: 400 },
      })
    }
    expect((await srv.request('PATCH', `${SESSIONS}/${s.id}`, { user: 'bob', body: { title: 'mine now' } })).status).toBe(404)
    expect((await srv.request('PATCH', `${SESSIONS}/unknown-id`, { user: 'alice', body: { title: 'x' } })).body.message).toBe(
      'Session not found: unknown-id',
    )
    expect((await stored(s.id))._source!.title).toBe('t')
  })

  test('concurrent renames: each one either wins or is told to refresh', async () => {
    const s = await create('alice')
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => srv.request('PATCH', `${SESSIONS}/${s.id}`, { user: 'alice', body: { title: `r${i}` } })),
    )
    expect(results.every((r) => r.status === 200 || (r.status === 409 && r.body.message === CONFLICT))).toBe(true)
    const winners = results.filter((r) => r.status === 200)
    expect(winners.length).toBeGreaterThanOrEqual(1)
    const hit = await stored(s.id)
    expect(winners.map((w) => w.body.title)).toContain(hit._source!.title)
    expect(winners.map((w) => w.body.version)).toContain(`${hit._seq_no}:${hit._primary_term}`)
  })
})

describe('delete', () => {
  test("envelope with the id, then 404 on repeat; another user's session is 404 and untouched", async () => {
    const s = await create('alice')
    expect(await srv.request('DELETE', `${SESSIONS}/${s.id}`, { user: 'bob' })).toEqual({
      status: 404,
      body: { message: `Session not found: ${s.id}`, status: 404 },
    })
    expect(await stored(s.id)).toBeDefined()
    expect(await srv.request('DELETE', `${SESSIONS}/${s.id}`, { user: 'alice', raw: 'ignored body' })).toEqual({
      status: 200,
      body: { message: 'Session deleted.', status: 200, id: s.id },
    })
    expect(await stored(s.id)).toBeUndefined()
    expect((await srv.request('DELETE', `${SESSIONS}/${s.id}`, { user: 'alice' })).status).toBe(404)
    expect((await srv.request('PUT', `${SESSIONS}/${s.id}`, { user: 'alice', body: { messages: [] } })).status).toBe(404)
  })

  test('a blank id is refused', async () => {
    const r = await srv.request('DELETE', `${SESSIONS}/%20`, { user: 'alice' })
    expect(r.status).toBe(400)
  })

  test('403 without the session permission', async () => {
    const s = await create('alice')
    expect((await srv.request('DELETE', `${SESSIONS}/${s.id}`, { user: 'carol' })).status).toBe(403)
    expect((await srv.request('PATCH', `${SESSIONS}/${s.id}`, { user: 'carol', body: { title: 'x' } })).status).toBe(403)
    expect((await srv.request('PUT', `${SESSIONS}/${s.id}`, { user: 'carol', body: { messages: [] } })).status).toBe(403)
  })
})

describe('500-session cap', () => {
  test('the owner at 500 gets 409, replace and rename still succeed, delete frees a slot', async () => {
    const before = await count('bob')
    await seed('bob', 500 - before)
    expect(await count('bob')).toBe(500)
    const refused = await srv.request('POST', SESSIONS, { user: 'bob', body: { title: 'one more', messages: [] } })
    expect(refused).toEqual({ status: 409, body: { message: 'You have reached the maximum of 500 saved sessions.', status: 409 } })
    expect(await count('bob')).toBe(500)
    const some = (await srv.store.search({ index: SESSIONS_STREAM, body: { query: { term: { user: 'bob' } }, size: 1 } })).hits.hits[0]
    expect((await srv.request('PUT', `${SESSIONS}/${some._id}`, { user: 'bob', body: { messages: ['still editable'] } })).status).toBe(200)
    expect((await srv.request('PATCH', `${SESSIONS}/${some._id}`, { user: 'bob', body: { title: 'renamed at cap' } })).status).toBe(200)
    expect((await srv.request('POST', SESSIONS, { user: 'alice', body: { title: 'alice is fine', messages: [] } })).status).toBe(200)
    expect((await srv.request('DELETE', `${SESSIONS}/${some._id}`, { user: 'bob' })).status).toBe(200)
    expect((await srv.request('POST', SESSIONS, { user: 'bob', body: { title: 'freed', messages: [] } })).status).toBe(200)
    expect((await srv.request('POST', SESSIONS, { user: 'bob', body: { title: 'full again', messages: [] } })).status).toBe(409)
  })

  test('100 concurrent creates starting at 450 stored sessions end with exactly 500', async () => {
    await seed('dave', 450)
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => srv.request('POST', SESSIONS, { user: 'dave', body: { title: `c${i}`, messages: [i] } })),
    )
    expect(results.filter((r) => r.status === 200)).toHaveLength(50)
    const refused = results.filter((r) => r.status === 409)
    expect(refused).toHaveLength(50)
    expect(refused.every((r) => r.body.message === 'You have reached the maximum of 500 saved sessions.')).toBe(true)
    expect(await count('dave')).toBe(500)
  })

  test("concurrent creates of different owners do not wait on each other's cap", async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        srv.request('POST', SESSIONS, { user: i % 2 ? 'erin' : 'alice', body: { title: `p${i}`, messages: [] } }),
      ),
    )
    expect(results.every((r) => r.status === 200)).toBe(true)
  })
})

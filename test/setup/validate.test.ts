import { describe, expect, test } from 'bun:test'
import { ApiError } from '../../src/http/errors'
import { ownerOf, SHARED_OWNER } from '../../src/setup/sessions/owner'
import { checkBody } from '../../src/http/validate'
import {
  CreateSessionBody,
  decodeVersion,
  formatVersion,
  MESSAGES,
  RenameSessionBody,
  ReplaceSessionBody,
} from '../../src/setup/sessions/validate'
import { isUuid, pickSettings, validProvider } from '../../src/setup/ai-assistant/validate'
import { parseSettingsRecord, SETTINGS_MESSAGES } from '../../src/setup/settings'
import { thrownBy } from '../helpers/thrown'

const failure = (fn: () => unknown) => {
  const e = thrownBy(ApiError, fn)
  return { status: e.status, message: e.message }
}

describe('session version token', () => {
  test('only <n>:<n> strings decode; everything else is absent', () => {
    expect(decodeVersion('12:1')).toEqual({ seqNo: 12, primaryTerm: 1 })
    expect(decodeVersion(formatVersion(0, 3))).toEqual({ seqNo: 0, primaryTerm: 3 })
    for (const v of ['12', '1:2:3', ' 1:2', '-1:1', 'a:1', '', null, 5, { seqNo: 1 }, ['1:1'], '99999999999999999999:1']) {
      expect(decodeVersion(v)).toBeUndefined()
    }
  })
})

// The route schemas are the validation: what the service gets back from checkBody.
const validTitle = (title: unknown) => checkBody(RenameSessionBody, title === undefined ? {} : { title }).title.trim()
const validMessages = (messages: unknown) => checkBody(ReplaceSessionBody, messages === undefined ? {} : { messages }).messages

describe('session title and messages', () => {
  test('titles are trimmed and counted in UTF-16 code units', () => {
    expect(validTitle('  Any brute force?  ')).toBe('Any brute force?')
    expect(validTitle('x'.repeat(200))).toHaveLength(200)
    expect(validTitle('😀'.repeat(100))).toHaveLength(200)
    expect(failure(() => validTitle('😀'.repeat(100) + 'x'))).toEqual({ status: 400, message: MESSAGES.titleTooLong })
    expect(failure(() => validTitle(' '.repeat(3) + 'x'.repeat(201)))).toEqual({ status: 400, message: MESSAGES.titleTooLong })
  })

  test('missing, blank and non-string titles are required', () => {
    for (const v of [undefined, null, '', '   \t\n', 7, true, ['t'], { t: 1 }]) {
      expect(failure(() => validTitle(v))).toEqual({ status: 400, message: 'Session title is required.' })
    }
  })

  test('messages: an array of at most 1000 opaque entries', () => {
    const entries = [{ role: 'user', content: 'hi', createdAt: 1 }, 'text', 3, null, [1, [2]]]
    expect(validMessages(entries)).toBe(entries)
    expect(validMessages([])).toEqual([])
    expect(validMessages(new Array(1000).fill({}))).toHaveLength(1000)
    expect(failure(() => validMessages(new Array(1001).fill({})))).toEqual({
      status: 400,
      message: 'A session cannot hold more than 1000 messages.',
    })
    for (const v of [undefined, null, {}, '[]', 0]) {
      expect(failure(() => validMessages(v))).toEqual({ status: 400, message: 'Session messages are required.' })
    }
  })

  test('create checks the title first, then the messages; replace checks the messages first', () => {
    expect(failure(() => checkBody(CreateSessionBody, { title: 5 }))).toEqual({ status: 400, message: MESSAGES.titleRequired })
    expect(failure(() => checkBody(CreateSessionBody, { title: 'ok' }))).toEqual({ status: 400, message: MESSAGES.messagesRequired })
    expect(failure(() => checkBody(ReplaceSessionBody, { title: '', messages: 1 }))).toEqual({
      status: 400,
      message: MESSAGES.messagesRequired,
    })
    expect(failure(() => checkBody(ReplaceSessionBody, { title: '', messages: [] }))).toEqual({
      status: 400,
      message: MESSAGES.titleRequired,
    })
    // Any expected_version is accepted by the schema; only decodeVersion gives it meaning.
    expect(checkBody(ReplaceSessionBody, { messages: [], expected_version: { x: 1 } }).expected_version).toEqual({ x: 1 })
  })

  test('the owner is the trimmed caller name, or the shared owner when blank', () => {
    expect(ownerOf({ name: ' alice ' })).toBe('alice')
    expect(ownerOf({ name: 'a|b' })).toBe('a|b')
    expect(ownerOf({ name: '  ' })).toBe(SHARED_OWNER)
    expect(ownerOf(undefined)).toBe('_shared')
  })
})

describe('setup settings record', () => {
  test('rules in order, first failure wins', () => {
    const msg = (text: string | undefined) => failure(() => parseSettingsRecord(text)).message
    expect(msg(undefined)).toBe(SETTINGS_MESSAGES.invalidBody)
    expect(msg('  ')).toBe('Invalid request body.')
    expect(msg('{nope')).toBe('Invalid request body.')
    expect(msg('[]')).toBe("Missing required field: 'engine'.")
    expect(msg('{}')).toBe("Missing required field: 'engine'.")
    expect(msg('{"engine": true}')).toBe("Missing required field: 'engine'.")
    expect(msg('{"engine": [true]}')).toBe("Missing required field: 'engine'.")
    expect(msg('{"engine": {}}')).toBe("Missing required field: 'engine.index_raw_events'.")
    for (const v of ['"true"', 'null', '1', '{}']) {
      expect(msg(`{"engine": {"index_raw_events": ${v}}}`)).toBe("Field 'engine.index_raw_events' must be of type boolean.")
    }
  })

  test('only the one path is carried', () => {
    expect(parseSettingsRecord('{"engine": {"index_raw_events": true, "x": 1}, "y": 2}')).toEqual({ engine: { index_raw_events: true } })
  })
})

describe('assistant payloads', () => {
  test('settings keep the four keys, checked by type', () => {
    const body = {
      privacy_default_on: true,
      privacy_default_per_provider: { p1: true },
      user_can_override: false,
      field_policy: [
        { field: 'svc.agent.name', action: 'anonymize', kind: 'HOST' },
        { field: 'svc.agent.id', action: 'allow' },
      ],
      providers: [],
      access_token: 'x',
    }
    expect(pickSettings(body)).toEqual({
      privacy_default_on: true,
      privacy_default_per_provider: { p1: true },
      user_can_override: false,
      field_policy: body.field_policy,
    })
    expect(pickSettings({ privacy_default_on: null })).toEqual({})
    expect(failure(() => pickSettings({ privacy_default_on: 'yes' })).message).toBe("Field 'privacy_default_on' must be of type boolean.")
    expect(failure(() => pickSettings({ field_policy: {} })).message).toBe("Field 'field_policy' must be of type array.")
    expect(failure(() => pickSettings({ field_policy: [{ field: 'a', action: 'allow' }, { field: 'b' }] })).message).toContain(
      'field_policy[1]',
    )
    expect(failure(() => pickSettings({ field_policy: [{ field: 'a', action: 'allow', extra: 1 }] })).message).toContain('field_policy[0]')
    expect(failure(() => pickSettings({ privacy_default_per_provider: [] })).message).toBe(
      "Field 'privacy_default_per_provider' must be of type object.",
    )
  })

  test('providers: server-owned keys dropped, unknown keys refused', () => {
    expect(validProvider({ id: 'x', updated_at: 'then', name: 'n', is_default: true })).toEqual({ name: 'n', is_default: true })
    expect(failure(() => validProvider({ name: 'n', colour: 'red' })).message).toBe("Unknown provider field: 'colour'.")
    expect(failure(() => validProvider({ is_default: 'true' })).message).toBe("Field 'is_default' must be of type boolean.")
    expect(failure(() => validProvider({ model: 4 })).message).toBe("Field 'model' must be of type string.")
  })

  test('UUIDs', () => {
    expect(isUuid(crypto.randomUUID())).toBe(true)
    expect(isUuid('8f14e45f-ceea-467f-a8f7-5b9c1d4e2a10')).toBe(true)
    expect(isUuid('not-a-uuid')).toBe(false)
    expect(isUuid('8f14e45fceea467fa8f75b9c1d4e2a10')).toBe(false)
  })
})

// Reference 2.6: a document's hash is the SHA-256 of its compact JSON. An integration gains one id
// at the end of a list on every creation of its child, and listing 10,000 rules its JSON is 400 KB:
// hashing it whole on every creation made each one cost more than the last. SHA-256 is a stream,
// so the state after the bytes up to the list's last id is kept per document; the next append
// feeds only `,"<id>"` and the (short) rest of the document. The bytes hashed are the same; so is
// the JSON text, kept too (the list's text grows by the same bytes), which the store then writes
// instead of serialising the document again.
import { Lru } from '../lru'

/** What a document's JSON looks like around one list, and the hash state up to the list's last item. */
interface Kept {
  /** The stored hash this state led to: the document it was computed for. */
  hash: string
  head: string
  tail: string
  length: number
  last: string | undefined
  state: Bun.CryptoHasher
  /** The list's JSON up to its last item (without the closing bracket). */
  list: string
}

/** A document's hash and its compact JSON (the text hashed). */
export interface Appended {
  sha256: string
  json: string
}

/** Documents kept (integrations being written to). */
const MAX_KEPT = 64
const kept = new Lru<string, Kept>(MAX_KEPT)

/** Stands for the list in the document's JSON; its serialisation cannot occur elsewhere in it. */
const MARK = '\u0000\u0001list\u0001\u0000'
const MARK_JSON = JSON.stringify(MARK)

/**
 * The hash and JSON of `document` with `list` (stored under hash `storedHash`, `previous` its ids)
 * become `previous` plus `id` at the end, for the document known as `key`; undefined when the JSON
 * around the list cannot be told apart from the list (the caller then serialises the whole document).
 */
export function appendedHash(
  key: string,
  document: Record<string, unknown>,
  storedHash: string,
  list: string,
  previous: readonly string[],
  id: string,
): Appended | undefined {
  const parts = JSON.stringify({ ...document, [list]: MARK }).split(MARK_JSON)
  if (parts.length !== 2) return undefined
  const [head, tail] = parts
  const known = kept.get(key)
  let state: Bun.CryptoHasher
  let text: string
  if (
    known &&
    known.hash === storedHash &&
    known.head === head &&
    known.tail === tail &&
    known.length === previous.length &&
    known.last === previous.at(-1)
  )
    ((state = known.state), (text = known.list))
  else {
    text = JSON.stringify(previous).slice(0, -1)
    state = new Bun.CryptoHasher('sha256').update(head).update(text)
  }
  const added = (previous.length > 0 ? ',' : '') + JSON.stringify(id)
  state.update(added)
  text += added
  const hash = state.copy().update(']').update(tail).digest('hex')
  kept.set(key, { hash, head, tail, length: previous.length + 1, last: id, state, list: text })
  return { sha256: hash, json: `${head}${text}]${tail}` }
}

/** The JSON of `envelope` whose `document` has the JSON `documentJson`; undefined when the two cannot be told apart. */
export function envelopeJson(envelope: Record<string, unknown>, documentJson: string): string | undefined {
  const parts = JSON.stringify({ ...envelope, document: MARK }).split(MARK_JSON)
  return parts.length === 2 ? parts[0] + documentJson + parts[1] : undefined
}

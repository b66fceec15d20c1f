// An integration gaining one id per rule created is hashed and serialised from the state kept after
// its list's last id (src/content/appended-hash.ts): the hash and the JSON text the store writes must
// be exactly those of the whole document, however the appends and the other writes interleave.
import { expect, test } from 'bun:test'
import { appendedHash, envelopeJson } from '../../src/content/appended-hash'
import { documentHash } from '../../src/content/hash'

test('appended hash and JSON equal the whole document’s, through appends, other writes and a rewritten list', () => {
  let doc: Record<string, unknown> = {
    id: 'int-1',
    metadata: { title: 'win "é"', author: 'a' },
    decoders: [],
    rules: [],
    kvdbs: [],
    n: 5.5,
  }
  let hash = documentHash(doc)
  for (let i = 0; i < 300; i++) {
    const rules = doc.rules as string[]
    const id = i % 7 === 3 ? `id "${i}"\u2028` : crypto.randomUUID()
    const got = appendedHash('integrations/int-1', doc, hash, 'rules', rules, id)
    const next: Record<string, unknown> = { ...doc, rules: [...rules, id] }
    expect({ i, json: got?.json }).toEqual({ i, json: JSON.stringify(next) })
    expect({ i, hash: got?.sha256 }).toEqual({ i, hash: documentHash(next) })
    const envelope = { document: next, hash: { sha256: got!.sha256 }, space: { name: 'draft' }, offset: i }
    expect({ i, envelope: envelopeJson(envelope, got!.json) }).toEqual({ i, envelope: JSON.stringify(envelope) })
    // Now and then the document changes otherwise (its list too), as an update or a removal would.
    doc = i % 50 === 49 ? { ...next, rules: (next.rules as string[]).slice(1) } : i % 30 === 29 ? { ...next, n: i } : next
    hash = documentHash(doc)
  }
})

// Reference 2.6: a resource's hash is the SHA-256 of the compact JSON of its `document`, in the
// document's own key order. Nothing compares hashes across implementations; they must only change
// when content changes and be copied verbatim by promotion.

export function sha256Hex(text: string): string {
  return new Bun.CryptoHasher('sha256').update(text).digest('hex')
}

export function documentHash(document: Record<string, unknown>): string {
  return sha256Hex(JSON.stringify(document))
}

/**
 * A name-based UUID (RFC 4122 version 3, MD5), as upstream derives its well-known ids (default
 * policies, creation locks): every node computes the same id for the same name without talking.
 */
export function nameUuid(name: string): string {
  const bytes = new Bun.CryptoHasher('md5').update(name).digest()
  bytes[6] = (bytes[6] & 0x0f) | 0x30
  bytes[8] = (bytes[8] & 0x3f) | 0x80
  const hex = Buffer.from(bytes).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

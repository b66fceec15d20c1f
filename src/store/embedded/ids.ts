/** Ids: random ones (index uuids, PIT ids) and OpenSearch-shaped auto-generated document ids. */

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

export function randomId(chars: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(chars))
  let s = ''
  for (const b of bytes) s += B64[b & 63]
  return s
}

let lastMs = 0
let counter = 0
const pool = new Uint8Array(4096)
let poolAt = pool.length

/**
 * 20-character base64url ids like OpenSearch's auto-generated ones: 48 bits of time, a 24-bit
 * sequence and 48 random bits, so ids from one process are unique and roughly time-ordered.
 */
export function autoId(): string {
  const ms = Date.now()
  if (ms !== lastMs) {
    lastMs = ms
    counter = 0
  } else counter = (counter + 1) & 0xffffff
  if (poolAt + 6 > pool.length) {
    crypto.getRandomValues(pool)
    poolAt = 0
  }
  const b = new Uint8Array(15)
  let t = ms
  for (let i = 5; i >= 0; i--) {
    b[i] = t % 256
    t = Math.floor(t / 256)
  }
  b[6] = counter >> 16
  b[7] = (counter >> 8) & 255
  b[8] = counter & 255
  b.set(pool.subarray(poolAt, poolAt + 6), 9)
  poolAt += 6
  return Buffer.from(b).toString('base64url')
}

/**
 * Value transformations of the encoding modifiers (base64, base64offset, utf16/wide, windash),
 * computed at compile time like pySigma does, so the tree needs nothing beyond term/wildcard.
 */
import { SigmaInvalid, SigmaUnsupported } from './errors'
import { type Part, type SigmaString, hasWildcards, normalise } from './sigma-string'

const utf8 = new TextEncoder()

function bytesOf(s: SigmaString, modifier: string): Uint8Array {
  if (hasWildcards(s) || s.parts.some((p) => typeof p === 'object'))
    throw new SigmaInvalid(`modifier '${modifier}'`, 'the value must not contain wildcards')
  const text = s.parts.join('')
  if (!s.bytes) return utf8.encode(text)
  return Uint8Array.from(text, (c) => c.charCodeAt(0))
}

const base64Text = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')

export function base64(s: SigmaString): SigmaString {
  const text = base64Text(bytesOf(s, 'base64'))
  return { kind: 'str', parts: text === '' ? [] : [text], bytes: false }
}

// The three alignments of the value inside a longer base64 stream; the edge characters that
// depend on the neighbouring bytes are trimmed (pySigma's offsets).
const START = [0, 2, 3]
const END = [undefined, -3, -2]

export function base64offset(s: SigmaString): SigmaString[] {
  const bytes = bytesOf(s, 'base64offset')
  return [0, 1, 2].map((i) => {
    const padded = new Uint8Array(i + bytes.length)
    padded.fill(0x20, 0, i)
    padded.set(bytes, i)
    const text = base64Text(padded).slice(START[i], END[(bytes.length + i) % 3])
    return { kind: 'str', parts: text === '' ? [] : [text], bytes: false }
  })
}

export type Utf16 = 'utf16le' | 'utf16be' | 'utf16'

function encodeUtf16(run: string, bigEndian: boolean): string {
  let out = ''
  for (let i = 0; i < run.length; i++) {
    const code = run.charCodeAt(i)
    const hi = String.fromCharCode(code >> 8)
    const lo = String.fromCharCode(code & 0xff)
    out += bigEndian ? hi + lo : lo + hi
  }
  return out
}

export function utf16(s: SigmaString, variant: Utf16): SigmaString {
  if (s.bytes) throw new SigmaInvalid(`modifier '${variant}'`, 'the value is already encoded')
  const parts: Part[] = s.parts.map((p) => (typeof p === 'string' ? encodeUtf16(p, variant === 'utf16be') : p))
  // `utf16` = little endian with a byte-order mark in front of the whole value.
  if (variant === 'utf16') parts.unshift('\xff\xfe')
  return { kind: 'str', parts: normalise(parts), bytes: true }
}

const DASH = /(?<![\p{L}\p{N}_])[-/](?=[\p{L}\p{N}_])/gu
const DASHES = ['-', '/', '\u2013', '\u2014', '\u2015']
/** Beyond this a single value would blow OpenSearch's clause limit on its own. */
export const MAX_EXPANSION = 1024

export function windash(s: SigmaString): SigmaString[] {
  // Each literal run becomes alternating text / dash slots; every slot takes all five dashes.
  const kinds: (Part | null)[] = []
  for (const p of s.parts) {
    if (typeof p !== 'string') {
      kinds.push(p)
      continue
    }
    let last = 0
    for (const m of p.matchAll(DASH)) {
      kinds.push(p.slice(last, m.index))
      kinds.push(null)
      last = m.index! + 1
    }
    kinds.push(p.slice(last))
  }
  const count = kinds.filter((k) => k === null).length
  if (DASHES.length ** count > MAX_EXPANSION)
    throw new SigmaUnsupported("modifier 'windash'", `${count} dashes expand to more than ${MAX_EXPANSION} values`)
  let variants: Part[][] = [[]]
  for (const k of kinds) {
    if (k === null) variants = variants.flatMap((v) => DASHES.map((d) => [...v, d]))
    else variants = variants.map((v) => [...v, k])
  }
  return variants.map((parts) => ({ kind: 'str', parts: normalise(parts), bytes: s.bytes }))
}

/** `expand`: every placeholder takes each configured value (themselves Sigma strings). */
export function expand(s: SigmaString, values: (name: string) => SigmaString[] | undefined): SigmaString[] {
  let variants: Part[][] = [[]]
  for (const p of s.parts) {
    if (typeof p === 'object') {
      const options = values(p.placeholder)
      if (!options || options.length === 0)
        throw new SigmaUnsupported(`expand placeholder '%${p.placeholder}%'`, 'no values are configured for it')
      variants = variants.flatMap((v) => options.map((o) => [...v, ...o.parts]))
      if (variants.length > MAX_EXPANSION) throw new SigmaUnsupported("modifier 'expand'", `expands to more than ${MAX_EXPANSION} values`)
    } else variants = variants.map((v) => [...v, p])
  }
  return variants.map((parts) => ({ kind: 'str', parts: normalise(parts), bytes: s.bytes }))
}

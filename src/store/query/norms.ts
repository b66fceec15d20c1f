/**
 * Field lengths as Lucene's norms keep them (SmallFloat's one-byte encoding): exact below 24, else
 * the 4 highest bits of what is above. BM25 reads a document's length from its norm, so OpenSearch
 * scores a long field by this length, not the exact one.
 */

const FREE_VALUES = 24

/** The length a norm stores for a field of `n` tokens. */
export function normLength(n: number): number {
  return byte4ToInt(intToByte4(n))
}

/** SmallFloat.intToByte4. */
function intToByte4(i: number): number {
  if (i < FREE_VALUES) return i
  const v = i - FREE_VALUES
  const bits = 32 - Math.clz32(v)
  if (bits < 4) return FREE_VALUES + v
  const shift = bits - 4
  return FREE_VALUES + (((v >>> shift) & 0x07) | ((shift + 1) << 3))
}

/** SmallFloat.byte4ToInt. */
function byte4ToInt(b: number): number {
  if (b < FREE_VALUES) return b
  const i = b - FREE_VALUES
  const shift = (i >>> 3) - 1
  return FREE_VALUES + (shift === -1 ? i & 0x07 : ((i & 0x07) | 0x08) * 2 ** shift)
}

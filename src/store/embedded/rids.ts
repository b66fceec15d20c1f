/**
 * Each index owns the rowid range [ix * RID_SPAN, (ix + 1) * RID_SPAN) of the docs table; its own
 * module because the schema, its migrations and every reader need it.
 */

/** Rowids per index (2^32 documents); keeps every rid below 2^53 for up to 2^21 index ids. */
export const RID_SPAN = 2 ** 32

export const ridRange = (ix: number): [number, number] => [ix * RID_SPAN, (ix + 1) * RID_SPAN - 1]
export const MAX_IX = 2 ** 21 - 1

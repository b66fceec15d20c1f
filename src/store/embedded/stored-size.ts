/**
 * What a document adds to its index's `store.size`: its source, and its index entries counted
 * twice, as its `keys` list and as the field-value (and text index) rows they stand for.
 */
export const STORED_SIZE = 'length(src) + 2 * length(keys)'

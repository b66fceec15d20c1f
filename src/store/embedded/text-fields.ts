/**
 * The names under which the text index keeps a text field's postings and lengths in the field
 * table: a NUL first, so no real field name can clash. Apart from text-index.ts so that the
 * catalog, which tells them from real fields, does not depend on the index's code (a NUL is not
 * allowed in a field name's JSON path).
 */
export const termsField = (field: string): string => `\u0000terms ${field}`
export const lengthsField = (field: string): string => `\u0000len ${field}`
export const isLengthsField = (name: string): boolean => name.startsWith('\u0000len ')

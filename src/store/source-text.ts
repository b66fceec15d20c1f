/**
 * The JSON text a document's source was parsed from, for a source written as it was parsed (a
 * `_bulk` item's line): the embedded store keeps that text as the stored source instead of
 * serialising the object again (JSON.stringify of ~1 KB events was some 4% of a `_bulk` ingest's
 * CPU). OpenSearch keeps a source as it was sent, too. Whoever registers a text vouches that it is
 * one JSON object that parses to the source, and that the source is not changed afterwards.
 */
const texts = new WeakMap<object, string>()

/** Registers the text `source` was parsed from. */
export function parsedFrom(source: object, text: string): void {
  texts.set(source, text)
}

/** The source's JSON text: the one it was parsed from, else its serialisation. */
export const sourceJson = (source: object): string => texts.get(source) ?? JSON.stringify(source)

/** Whether `source` came with its text, and so is vouched not to change after its write (a store may keep it as read). */
export const hasText = (source: object): boolean => texts.has(source)

// Field names that are members of Object.prototype are data, in mappings, writes and partial updates.
import { expect, test } from "bun:test";
import { openEmbeddedStore } from "../../src/store/embedded";

test("__proto__ and constructor as field names neither pollute prototypes nor get lost", async () => {
  const s = openEmbeddedStore(":memory:");
  try {
    await s.createIndex({ index: "p" });
    await s.putMapping({ index: "p", body: JSON.parse('{"properties": {"constructor": {"type": "keyword"}, "__proto__": {"type": "keyword"}}}') });
    await s.index({ index: "p", id: "1", body: JSON.parse('{"constructor": "c", "x": 1}'), refresh: true });
    await s.update({ index: "p", id: "1", body: { doc: JSON.parse('{"__proto__": {"polluted": true}, "hasOwnProperty": 5}') }, refresh: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).type).toBeUndefined();
    expect((Object as unknown as Record<string, unknown>).properties).toBeUndefined();
    const got = await s.get({ index: "p", id: "1" });
    expect(got.found).toBe(true);
    const source = got.found ? (got._source as Record<string, unknown>) : {};
    expect(Object.hasOwn(source, "__proto__")).toBe(true);
    expect(source.hasOwnProperty).toBe(5);
    expect(source.constructor).toBe("c");
    const hits = await s.search({ index: "p", body: { query: { term: { constructor: "c" } } } });
    expect(hits.hits.total).toEqual({ value: 1, relation: "eq" });
  } finally {
    await s.close();
  }
});

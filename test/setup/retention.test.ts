import { describe, expect, test } from "bun:test";
import { ClusterSettings, memoryPersistence } from "../../src/config/cluster-settings";
import { buildNodeConfig } from "../../src/config/node-config";
import { runBootstrap } from "../../src/setup/bootstrap";
import { eventsStream, FINDINGS_SECURITY_STREAM, RAW_EVENTS_STREAM, SESSIONS_STREAM } from "../../src/setup/indices";
import { applyRetention, startRetentionJob } from "../../src/setup/retention";
import { openEmbeddedStore } from "../../src/store/embedded";
import { quietLog } from "./harness";

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const NOW = Date.parse("2026-10-01T12:00:00.000Z");

async function bootstrapped() {
  const store = openEmbeddedStore(":memory:");
  const settings = new ClusterSettings(buildNodeConfig({}, "test", "."), memoryPersistence());
  await runBootstrap({ store, settings, log: quietLog(), now: () => NOW });
  return store;
}

async function put(store: Awaited<ReturnType<typeof bootstrapped>>, stream: string, ageMillis: number, tag: string, extra: Record<string, unknown> = {}) {
  const at = new Date(NOW - ageMillis).toISOString();
  await store.index({ index: stream, op_type: "create", refresh: true, body: { "@timestamp": at, ...extra, ...(stream === SESSIONS_STREAM ? { title: tag, user: "u", messages: [], created_at: at, updated_at: at } : { tags: [tag] }) } });
}

const remaining = async (store: Awaited<ReturnType<typeof bootstrapped>>, stream: string) =>
  (await store.search({ index: stream, body: { size: 100 } })).hits.hits.map((h) => (stream === SESSIONS_STREAM ? h._source!.title : (h._source!.tags as string[])[0])).sort();

describe("embedded retention", () => {
  test("each stream keeps what is younger than its policy's delete age", async () => {
    const store = await bootstrapped();
    const events = eventsStream("security");
    await put(store, events, 30 * MIN, "fresh");
    await put(store, events, 61 * MIN, "old");
    await put(store, RAW_EVENTS_STREAM, 9 * MIN, "fresh");
    await put(store, RAW_EVENTS_STREAM, 11 * MIN, "old");
    await put(store, FINDINGS_SECURITY_STREAM, 89 * DAY, "fresh");
    await put(store, FINDINGS_SECURITY_STREAM, 91 * DAY, "old");
    await put(store, SESSIONS_STREAM, 6 * DAY, "fresh");
    await put(store, SESSIONS_STREAM, 8 * DAY, "old");
    const out = await applyRetention({ store, now: () => NOW, log: quietLog() });
    for (const s of [events, RAW_EVENTS_STREAM, FINDINGS_SECURITY_STREAM, SESSIONS_STREAM]) expect(await remaining(store, s)).toEqual(["fresh"]);
    expect(out.find((o) => o.stream === SESSIONS_STREAM)).toEqual({ stream: SESSIONS_STREAM, policy: "ai-assistant-sessions-policy", deleted: 1 });
    expect(out.find((o) => o.stream === events)?.policy).toBe("stream-events-policy");
    expect(out.reduce((n, o) => n + o.deleted, 0)).toBe(4);
  });

  test("more expired documents than one page are all removed", async () => {
    const store = await bootstrapped();
    const body = [];
    for (let i = 0; i < 2500; i++) body.push({ create: {} }, { "@timestamp": new Date(NOW - 2 * 60 * MIN).toISOString(), tags: ["old"] });
    await store.bulk({ index: RAW_EVENTS_STREAM, body, refresh: true });
    await put(store, RAW_EVENTS_STREAM, MIN, "fresh");
    const out = await applyRetention({ store, now: () => NOW, log: quietLog() });
    expect(out.find((o) => o.stream === RAW_EVENTS_STREAM)?.deleted).toBe(2500);
    expect(await remaining(store, RAW_EVENTS_STREAM)).toEqual(["fresh"]);
  });

  test("the scheduled job runs the pass and stops", async () => {
    const store = await bootstrapped();
    await put(store, RAW_EVENTS_STREAM, 20 * MIN, "old");
    const job = startRetentionJob({ store, now: () => NOW, log: quietLog() }, "* * * * * *");
    try {
      for (let i = 0; i < 30 && (await remaining(store, RAW_EVENTS_STREAM)).length > 0; i++) await Bun.sleep(100);
      expect(await remaining(store, RAW_EVENTS_STREAM)).toEqual([]);
    } finally {
      job.stop();
    }
  });
});

import { Cron } from "croner";
import type { Logger } from "../http/log";
import type { Store } from "../store/port";
import { LIFECYCLE_POLICIES, type LifecyclePolicy } from "./indices";

/**
 * Retention in embedded mode, where no ISM runs. The reference deletes whole
 * backing indices once they are older than the policy's delete age, but only
 * after a rollover that a low-volume stream practically never reaches. The
 * embedded store has no rollover, so the job applies the delete age to each
 * document instead: a data-stream document whose `@timestamp` is older than
 * its policy's age is deleted (events 1h, raw events 10m, findings 90d,
 * metrics 30d, active responses 3d, AI assistant sessions 7d). The sessions
 * policy's daily rollover is therefore not needed: a session lives 7 days
 * from its creation (`@timestamp` equals `created_at`).
 */

export interface RetentionDeps {
  store: Store;
  now: () => number;
  log: Logger;
}

export interface RetentionOutcome {
  stream: string;
  policy: string;
  deleted: number;
}

const PAGE = 1000;

const policyFor = (stream: string, policies: LifecyclePolicy[]) => policies.find((p) => p.streams.some((prefix) => stream.startsWith(prefix)));

/** One pass over every existing data stream that a policy governs. */
export async function applyRetention(deps: RetentionDeps, policies: LifecyclePolicy[] = LIFECYCLE_POLICIES): Promise<RetentionOutcome[]> {
  const { data_streams } = await deps.store.getDataStream();
  const out: RetentionOutcome[] = [];
  for (const ds of data_streams) {
    const policy = policyFor(ds.name, policies);
    if (!policy) continue;
    const cutoff = new Date(deps.now() - policy.deleteAfterMillis).toISOString();
    let deleted = 0;
    for (;;) {
      const page = await deps.store.search({
        index: ds.name,
        body: { query: { range: { "@timestamp": { lt: cutoff } } }, size: PAGE, _source: false },
      });
      const hits = page.hits.hits;
      if (hits.length === 0) break;
      const r = await deps.store.bulk({ body: hits.map((h) => ({ delete: { _index: h._index, _id: h._id } })), refresh: true });
      const failed = r.items.filter((i) => (i.delete?.status ?? 500) >= 300 && i.delete?.status !== 404).length;
      deleted += hits.length - failed;
      // A page that deleted nothing would come back forever: leave the rest for the next run.
      if (failed === hits.length) break;
      if (hits.length < PAGE) break;
    }
    if (deleted > 0) deps.log.info("retention deleted expired documents", { stream: ds.name, policy: policy.id, deleted, older_than: cutoff });
    out.push({ stream: ds.name, policy: policy.id, deleted });
  }
  return out;
}

/** Schedules `applyRetention` (every 5 minutes by default); overlapping runs are skipped. */
export function startRetentionJob(deps: RetentionDeps, pattern = "0 */5 * * * *"): { stop(): void } {
  const job = new Cron(pattern, { protect: true, catch: (e) => deps.log.error("retention run failed", { error: e }) }, async () => {
    await applyRetention(deps);
  });
  return { stop: () => job.stop() };
}

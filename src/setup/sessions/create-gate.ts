import { ApiError } from "../../http/errors";
import { releaseLease, tryAcquireLease, type HeldLease, type LeaseSpec } from "../../jobs/lease";
import { IndexNotFound } from "../../store/errors";
import type { Store } from "../../store/port";
import { ensureIndex } from "../ensure";
import { RESOURCE_LOCKS } from "../indices";

export interface CreateGateDeps {
  store: Store;
  now: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export interface GateLimits {
  /** Give up waiting for the owner's lease after this long (503). */
  waitMillis: number;
  /** A lease older than this belongs to a dead holder and is taken over. */
  staleMillis: number;
}

export const GATE_BUSY = "Too many concurrent session creations for this user. Retry later.";

/**
 * Serialises session creation per owner so that the count-then-write of the
 * 500 cap cannot overshoot: within a node a promise chain per owner queues
 * the creates (no store traffic while waiting), across nodes a lease document
 * per owner in the resource-locks index does. Replace, rename and delete
 * never pass through here, so the cap never blocks an update.
 */
export class CreateGate {
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: CreateGateDeps) {}

  async run<T>(owner: string, limits: GateLimits, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(owner) ?? Promise.resolve();
    const mine = previous.catch(() => {}).then(() => this.underLease(owner, limits, fn));
    const tail = mine.catch(() => {});
    this.tails.set(owner, tail);
    try {
      return await mine;
    } finally {
      if (this.tails.get(owner) === tail) this.tails.delete(owner);
    }
  }

  private async underLease<T>(owner: string, limits: GateLimits, fn: () => Promise<T>): Promise<T> {
    const spec: LeaseSpec = { index: RESOURCE_LOCKS.name, id: leaseId(owner), staleMillis: limits.staleMillis };
    const held = await this.acquire(spec, limits.waitMillis);
    try {
      return await fn();
    } finally {
      await releaseLease(this.deps, held);
    }
  }

  private async acquire(spec: LeaseSpec, waitMillis: number): Promise<HeldLease> {
    const sleep = this.deps.sleep ?? ((ms: number) => Bun.sleep(ms));
    const deadline = this.deps.now() + waitMillis;
    let recreated = false;
    for (let attempt = 0; ; attempt++) {
      let held: HeldLease | undefined;
      try {
        held = await tryAcquireLease(this.deps, spec);
      } catch (e) {
        // The lock index was deleted by hand: recreate it (with its strict mapping) and try again.
        if (!(e instanceof IndexNotFound) || recreated) throw e;
        recreated = true;
        await ensureIndex(this.deps.store, RESOURCE_LOCKS);
        continue;
      }
      if (held) return held;
      if (this.deps.now() >= deadline) throw new ApiError(503, GATE_BUSY);
      await sleep(Math.min(50, 5 * 2 ** Math.min(attempt, 4)) + Math.random() * 5);
    }
  }
}

/** Owner names are free text; the lease id is a digest of it. */
export function leaseId(owner: string): string {
  return `ai-assistant-session-create-${new Bun.CryptoHasher("sha256").update(owner).digest("hex").slice(0, 32)}`;
}

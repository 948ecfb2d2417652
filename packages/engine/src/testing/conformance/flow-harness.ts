import type { FlowKeyState, FlowNeed, FlowStore } from '../../store/flow.js';
import type { Store } from '../../store/store.js';
import type { SuiteContext } from './context.js';

// What the flow parts share: needs, times, a store's flow and its whole listing.

/** A time the flow parts count from (every flow call takes the caller's `now`). */
export const T0 = 1_700_000_000_000;

/** A concurrency need. */
export const slot = (scope: string, key: string, limit: number): FlowNeed => ({ scope, key, limit });

/** A rate need. */
export const rate = (scope: string, key: string, limit: number, periodMs: number): FlowNeed => ({
  scope,
  key,
  limit,
  periodMs,
});

/** A fresh store and its flow. */
export async function freshFlow(ctx: SuiteContext): Promise<{ store: Store; flow: FlowStore }> {
  const store = await ctx.fresh();
  return { store, flow: store.flow! };
}

/** Every counter listed at `now` (of `scope`), read in pages of `pageSize`. */
export async function listAll(
  flow: FlowStore,
  now: number,
  scope?: string,
  pageSize = 100,
): Promise<FlowKeyState[]> {
  const out: FlowKeyState[] = [];
  let cursor: string | null = null;
  do {
    const page = await flow.list({ limit: pageSize, cursor, now, ...(scope === undefined ? {} : { scope }) });
    out.push(...page.items);
    cursor = page.cursor;
  } while (cursor !== null);
  return out;
}

/** The counter of (scope, key) and, for a rate, its period, as listed at `now`; undefined when not listed. */
export async function counter(
  flow: FlowStore,
  now: number,
  scope: string,
  key: string,
  periodMs?: number,
): Promise<FlowKeyState | undefined> {
  const all = await listAll(flow, now, scope);
  return all.find((c) => c.key === key && c.periodMs === periodMs);
}

/** The holders of a listed counter, sorted (none when it is not listed). */
export const heldBy = (c: FlowKeyState | undefined): string[] =>
  (c?.holders.map((h) => h.holder) ?? []).sort();

/** The waiting holders of a listed counter, in the store's order (oldest first). */
export const waitingOn = (c: FlowKeyState | undefined): string[] => c?.waiting.map((w) => w.holder) ?? [];

/** A small seeded generator (mulberry32), so a failing randomised run can be told by its seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

import type { FlowGrant, FlowKeyPage, FlowKeyState, FlowNeed } from '../store/flow.js';

// The harness's flow counts: the `FlowStore` contract, synchronous and in memory, so a harness
// drives limited definitions with no store and no promises (`asFlowStore` wraps it for a runner).

/** One key's count: its holders' leases, its rate window's starts, its waiters. */
interface KeyCount {
  need: FlowNeed;
  holders: Map<string, number>;
  starts: Array<{ holder: string; at: number }>;
  waiting: Map<string, { instance: string; since: number }>;
}

/** A lease this late is one that ends with its holder's instance: no time to wait for. */
const OPEN_LEASE = 8.64e15;

/** Per-key concurrency slots and sliding rate windows, counted in memory, synchronously. */
export class FlowCounter {
  private readonly keys = new Map<string, KeyCount>();

  private count(need: FlowNeed): KeyCount {
    const id = `${need.scope}\u0000${need.key}`;
    let c = this.keys.get(id);
    if (!c) {
      c = { need, holders: new Map(), starts: [], waiting: new Map() };
      this.keys.set(id, c);
    }
    c.need = need;
    return c;
  }

  /** The first need `holder` cannot have now, with when it could and what was counted; undefined when all fit. */
  private refused(holder: string, needs: readonly FlowNeed[], now: number): FlowGrant | undefined {
    for (const need of needs) {
      const c = this.count(need);
      if (need.periodMs === undefined) {
        const live = [...c.holders].filter(([h, until]) => h !== holder && until > now);
        if (live.length >= need.limit) {
          const soonest = Math.min(...live.map(([, until]) => until));
          return { granted: false, need, until: soonest >= OPEN_LEASE ? null : soonest, count: live.length };
        }
      } else {
        const window = c.starts.filter((s) => s.at > now - need.periodMs!);
        if (window.some((s) => s.holder === holder)) continue;
        if (window.length >= need.limit) {
          const oldest = window.slice(-need.limit)[0]!.at;
          return { granted: false, need, until: oldest + need.periodMs, count: window.length };
        }
      }
    }
    return undefined;
  }

  /** {@link FlowStore.acquire}, synchronously. */
  acquire(
    holder: string,
    instance: string,
    needs: readonly FlowNeed[],
    now: number,
    until: number,
  ): FlowGrant {
    const no = this.refused(holder, needs, now);
    if (no && !no.granted) {
      const waiting = this.count(no.need).waiting;
      waiting.set(holder, { instance, since: waiting.get(holder)?.since ?? now });
      return no;
    }
    for (const need of needs) {
      const c = this.count(need);
      if (need.periodMs === undefined) c.holders.set(holder, until);
      else {
        c.starts = c.starts.filter((s) => s.at > now - need.periodMs!);
        if (!c.starts.some((s) => s.holder === holder)) c.starts.push({ holder, at: now });
      }
    }
    for (const c of this.keys.values()) c.waiting.delete(holder);
    return { granted: true };
  }

  /** {@link FlowStore.release}, synchronously: the waiters to wake, oldest first, at most as many per key as slots freed. */
  release(holders: readonly string[], now: number): string[] {
    const wake: string[] = [];
    for (const [id, c] of this.keys) {
      let freed = 0;
      for (const h of holders) {
        const until = c.holders.get(h);
        if (until !== undefined && c.holders.delete(h) && until > now) freed++;
        c.waiting.delete(h);
      }
      if (freed > 0) {
        const oldest = [...c.waiting.values()].sort((a, b) => a.since - b.since).slice(0, freed);
        wake.push(...oldest.map((w) => w.instance));
      }
      if (c.need.periodMs !== undefined) c.starts = c.starts.filter((s) => s.at > now - c.need.periodMs!);
      if (c.holders.size === 0 && c.waiting.size === 0 && c.starts.length === 0) this.keys.delete(id);
    }
    return wake;
  }

  /** {@link FlowStore.renew}, synchronously. */
  renew(holders: readonly string[], until: number): void {
    for (const c of this.keys.values())
      for (const h of holders) if (c.holders.has(h)) c.holders.set(h, until);
  }

  /** {@link FlowStore.list}, synchronously: keys with live holders, starts in the window or waiters. */
  list(query: {
    scope?: string | undefined;
    limit: number;
    cursor?: string | null | undefined;
    now: number;
  }): FlowKeyPage {
    const { now } = query;
    const all: Array<[string, FlowKeyState]> = [];
    for (const [id, c] of this.keys) {
      if (query.scope !== undefined && c.need.scope !== query.scope) continue;
      const holders =
        c.need.periodMs === undefined
          ? [...c.holders].filter(([, until]) => until > now).map(([holder, until]) => ({ holder, until }))
          : c.starts
              .filter((s) => s.at > now - c.need.periodMs!)
              .map((s) => ({ holder: s.holder, until: s.at + c.need.periodMs! }));
      const waiting = [...c.waiting]
        .map(([holder, w]) => ({ holder, instance: w.instance, since: w.since }))
        .sort((a, b) => a.since - b.since);
      if (holders.length === 0 && waiting.length === 0) continue;
      const { scope, key, limit, periodMs } = c.need;
      all.push([
        id,
        { scope, key, limit, ...(periodMs === undefined ? {} : { periodMs }), holders, waiting },
      ]);
    }
    all.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const from = query.cursor ? all.findIndex(([id]) => id > query.cursor!) : 0;
    const page = from < 0 ? [] : all.slice(from, from + query.limit);
    const more = from >= 0 && from + query.limit < all.length;
    return { items: page.map(([, k]) => k), cursor: more ? page[page.length - 1]![0] : null };
  }
}

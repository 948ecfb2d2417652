import { expect, it } from 'vitest';
import type { FlowGrant, FlowStore } from '../../store/flow.js';
import type { SuiteContext } from './context.js';
import { counter, freshFlow, heldBy, listAll, rate, seeded, slot, T0 } from './flow-harness.js';

// Acquirers racing on the same counters through two store objects over one database (where the
// suite can open a second): the counts hold whatever the interleaving.

const FAR = T0 + 1_000_000;

/** A fresh store's flow, and the flows of two store objects over its database. */
async function twoFlows(ctx: SuiteContext): Promise<FlowStore[]> {
  const { store, flow } = await freshFlow(ctx);
  const twin = await ctx.twin(store);
  return [flow, twin.flow!];
}

const granted = (grants: FlowGrant[], holders: string[]) => holders.filter((_, i) => grants[i]!.granted);

/** Races on concurrency slots and rate windows. */
export function describeFlowRaces(ctx: SuiteContext): void {
  it('racing acquirers never hold more slots than the limit, and fill every free one', async () => {
    const flows = await twoFlows(ctx);
    const need = [slot('race', 'k', 3)];
    const holders = Array.from({ length: 16 }, (_, i) => `rh${i}`);
    const held = new Set<string>();
    for (let round = 0; round < 5; round++) {
      const now = T0 + round * 10;
      const contenders = holders.filter((h) => !held.has(h));
      const grants = await Promise.all(
        contenders.map((h, i) => flows[i % 2]!.acquire(h, `i-${h}`, need, now, FAR)),
      );
      const won = granted(grants, contenders);
      expect(held.size + won.length).toBe(3);
      for (const h of won) held.add(h);
      for (const g of grants)
        if (!g.granted) expect(g).toMatchObject({ need: need[0], until: FAR, count: 3 });
      const listed = await counter(flows[1]!, now, 'race', 'k');
      expect(heldBy(listed)).toEqual([...held].sort());
      expect(listed?.waiting.length).toBe(holders.length - 3);
      // Releases racing each other: each frees one slot and names one waiter.
      const out = [...held].slice(0, 1 + (round % 2));
      const woken = await Promise.all(out.map((h, i) => flows[i % 2]!.release([h], now + 1)));
      expect(woken.map((w) => w.length)).toEqual(out.map(() => 1));
      for (const [instance] of woken) expect(contenders).toContain(instance!.slice(2));
      for (const h of out) held.delete(h);
    }
    await flows[0]!.release(holders, T0 + 100);
    expect(await listAll(flows[0]!, T0 + 100)).toEqual([]);
  });

  it('free-running acquirers and releasers never overlap more holders than the limit', async () => {
    const flows = await twoFlows(ctx);
    const need = [slot('free', 'k', 2)];
    const inside = new Set<string>();
    let most = 0;
    let grants = 0;
    const all: string[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async (_, w) => {
        for (let n = 0; n < 8; n++) {
          const holder = `f${w}-${n}`;
          all.push(holder);
          const flow = flows[(w + n) % 2]!;
          if (!(await flow.acquire(holder, `i-${w}`, need, T0 + n, FAR)).granted) continue;
          // Between the grant and the release the store counts the holder: never more than the limit.
          inside.add(holder);
          most = Math.max(most, inside.size);
          grants++;
          await flows[(w + n + 1) % 2]!.list({ limit: 1, now: T0 + n });
          inside.delete(holder);
          await flow.release([holder], T0 + n);
        }
      }),
    );
    expect(most).toBeLessThanOrEqual(2);
    expect(grants).toBeGreaterThan(0);
    await flows[1]!.release(all, T0 + 100);
    expect(await listAll(flows[0]!, T0 + 100)).toEqual([]);
  });

  it('racing acquirers of two counters take both or neither', async () => {
    const flows = await twoFlows(ctx);
    const holders = Array.from({ length: 16 }, (_, i) => `ah${i}`);
    const needsOf = (i: number) => [slot('aon-race', 'shared', 4), slot('aon-race', `g${i % 2}`, 1)];
    for (let round = 0; round < 3; round++) {
      const now = T0 + round * 10;
      const grants = await Promise.all(
        holders.map((h, i) => flows[i % 2]!.acquire(h, `i-${h}`, needsOf(i), now, FAR)),
      );
      const won = granted(grants, holders);
      // At most one per group (its own counter has one slot), and at least one overall.
      expect(won.length).toBeGreaterThanOrEqual(1);
      expect(new Set(won.map((h) => Number(h.slice(2)) % 2)).size).toBe(won.length);
      const listed = await listAll(flows[0]!, now, 'aon-race');
      const of = (key: string) => heldBy(listed.find((c) => c.key === key));
      expect(of('shared')).toEqual([...won].sort());
      expect([...of('g0'), ...of('g1')].sort()).toEqual([...won].sort());
      await flows[1]!.release(won, now + 1);
    }
    await flows[0]!.release(holders, T0 + 100);
    expect(await listAll(flows[0]!, T0 + 100)).toEqual([]);
  });

  it('racing starts on a rate: exactly `limit` granted, the rest told when the window frees', async () => {
    const flows = await twoFlows(ctx);
    const need = [rate('rate-race', 'k', 5, 1000)];
    const holders = Array.from({ length: 20 }, (_, i) => `sh${i}`);
    const grants = await Promise.all(holders.map((h, i) => flows[i % 2]!.acquire(h, 'i', need, T0, T0 + 10)));
    expect(granted(grants, holders).length).toBe(5);
    for (const g of grants) if (!g.granted) expect(g).toMatchObject({ until: T0 + 1000, count: 5 });
  });

  it('no window of periodMs ever holds more than limit starts (randomised times, racing callers)', async () => {
    const flows = await twoFlows(ctx);
    const seed = (Date.now() ^ (Math.random() * 2 ** 31)) >>> 0;
    const rnd = seeded(seed);
    const limit = 1 + Math.floor(rnd() * 4);
    const period = 50 + Math.floor(rnd() * 450);
    const need = [rate('window', 'k', limit, period)];
    const why = `seed ${seed}, limit ${limit}, period ${period}`;
    const starts: number[] = [];
    const holders: string[] = [];
    let now = T0;
    for (let step = 0; step < 40; step++) {
      now += Math.floor((rnd() * period) / 2);
      const callers = Array.from({ length: 1 + Math.floor(rnd() * 4) }, (_, j) => `w${step}-${j}`);
      holders.push(...callers);
      const at = now;
      const grants = await Promise.all(
        callers.map((h, j) => flows[j % 2]!.acquire(h, 'i', need, at, at + 10)),
      );
      for (const g of grants) if (g.granted) starts.push(at);
      const window = starts.filter((s) => s + period > at).sort((a, b) => a - b);
      expect(window.length, why).toBeLessThanOrEqual(limit);
      for (const g of grants) {
        if (g.granted) continue;
        // Denied only when full, and told exactly when the start that must leave has left.
        expect(window.length, why).toBe(limit);
        expect(g.until, why).toBe(window[0]! + period);
      }
    }
    for (const s of starts)
      expect(starts.filter((t) => t >= s && t < s + period).length, why).toBeLessThanOrEqual(limit);
    await flows[0]!.release(holders, now);
    expect(await listAll(flows[0]!, now + period), why).toEqual([]);
  });
}

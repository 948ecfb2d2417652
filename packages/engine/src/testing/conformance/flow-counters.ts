import { expect, it } from 'vitest';
import { counterOf } from '../../flow-holders.js';
import type { Snapshot } from '../../snapshot.js';
import { makeTestSnapshot } from '../test-snapshot.js';
import type { SuiteContext } from './context.js';
import { counter, freshFlow, heldBy, listAll, rate, slot, T0, waitingOn } from './flow-harness.js';

// Release and renew told where the holders are (`counters`, as the runner tells them): the same
// answers as without, whether the store looks only there or finds the holders by itself.

/** The part's tests, run within the flow part. */
export function describeFlowCounters(ctx: SuiteContext): void {
  it('release and renew with the counters named: holds end and move, waiters go and are woken, as without', async () => {
    const { flow } = await freshFlow(ctx);
    const a = slot('at', 'a', 1);
    const b = slot('at', 'b', 2);
    const r = rate('at', 'a', 5, 1000);
    expect((await flow.acquire('h1', 'i-h1', [a, r], T0, T0 + 100)).granted).toBe(true);
    expect((await flow.acquire('h2', 'i-h2', [b], T0, T0 + 100)).granted).toBe(true);
    expect((await flow.acquire('w1', 'i-w1', [b, a], T0 + 1, T0 + 100)).granted).toBe(false);
    await flow.renew(['h1', 'h2'], T0 + 5000, [counterOf(a), counterOf(b), counterOf(r)]);
    expect((await counter(flow, T0 + 200, 'at', 'a'))?.holders).toEqual([{ holder: 'h1', until: T0 + 5000 }]);
    expect((await counter(flow, T0 + 200, 'at', 'b'))?.holders).toEqual([{ holder: 'h2', until: T0 + 5000 }]);
    // Counters that hold none of the holders, or do not exist, change nothing and create nothing.
    const elsewhere = [counterOf(slot('at', 'none', 1)), counterOf(b)];
    expect(await flow.release(['nobody'], T0 + 200, elsewhere)).toEqual([]);
    await flow.renew(['nobody'], T0 + 9000, elsewhere);
    expect(await counter(flow, T0 + 200, 'at', 'none')).toBeUndefined();
    expect((await counter(flow, T0 + 200, 'at', 'b'))?.holders).toEqual([{ holder: 'h2', until: T0 + 5000 }]);
    expect(await flow.release(['h1'], T0 + 300, [counterOf(a), counterOf(r)])).toEqual(['i-w1']);
    expect(heldBy(await counter(flow, T0 + 300, 'at', 'a'))).toEqual([]);
    expect(waitingOn(await counter(flow, T0 + 300, 'at', 'a'))).toEqual(['w1']);
    expect(await flow.release(['w1', 'h2'], T0 + 400, [counterOf(a), counterOf(b)])).toEqual([]);
    // The rate's start stays in its window; nothing else is left.
    expect((await listAll(flow, T0 + 400)).map((c) => [c.key, c.periodMs, heldBy(c)])).toEqual([
      ['a', 1000, ['h1']],
    ]);
  });

  it('a save releasing holders on the counters it names frees them in the same write', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inSave) return;
    const s: Snapshot = makeTestSnapshot('at-save');
    await store.create(s);
    const a = slot('at-save', 'a', 1);
    const next = slot('at-save', 'b', 1);
    expect((await flow.acquire('at-save#run#1', 'at-save', [a], T0, T0 + 1000)).granted).toBe(true);
    expect((await flow.acquire('other#run#1', 'other', [a], T0 + 1, T0 + 1000)).granted).toBe(false);
    let woken: string[] = [];
    await store.save({ ...s, version: 2 }, 1, {
      flow: {
        take: { holder: 'at-save#run#2', needs: [next], until: T0 + 2000 },
        release: ['at-save#run#1'],
        counters: [counterOf(a)],
        now: T0 + 10,
        woken: (ids) => {
          woken = ids;
        },
      },
    });
    expect(woken).toEqual(['other']);
    expect(heldBy(await counter(flow, T0 + 10, 'at-save', 'a'))).toEqual([]);
    expect(heldBy(await counter(flow, T0 + 10, 'at-save', 'b'))).toEqual(['at-save#run#2']);
  });
}

import { expect, it } from 'vitest';
import { isStepfoldError } from '../../errors.js';
import type { Snapshot } from '../../snapshot.js';
import type { FlowTake } from '../../store/flow.js';
import type { Store } from '../../store/store.js';
import { makeTestSnapshot } from '../test-snapshot.js';
import type { SuiteContext } from './context.js';
import { counter, freshFlow, heldBy, rate, slot, T0, waitingOn } from './flow-harness.js';

// A save that takes a flow holder in the same write (`SaveOptions.flow`), on a store whose
// `flow.inSave` is true: both or neither. A store without it takes holders with `acquire` alone,
// and these tests have nothing to check on it.

/** A stored instance at version 1 and its next version, to save with a holder. */
async function stored(store: Store, id: string): Promise<{ next: Snapshot }> {
  const s = makeTestSnapshot(id);
  await store.create(s);
  return { next: { ...s, version: 2 } };
}

/** Whether `e` is the store's refusal of a holder taken with a save. */
const refused = (e: unknown) => isStepfoldError(e, 'FLOW_REFUSED');

/** The part's tests, run within the flow part. */
export function describeFlowInSave(ctx: SuiteContext): void {
  it('a save taking a holder writes the row and the hold together', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inSave) return;
    const { next } = await stored(store, 'take-1');
    const take: FlowTake = { holder: 'take-1#run#1', needs: [slot('in-save', 'k', 1)], now: T0, until: T0 + 500 };
    await store.save(next, 1, { flow: take });
    expect((await store.load('take-1'))?.version).toBe(2);
    expect((await counter(flow, T0, 'in-save', 'k'))?.holders).toEqual([{ holder: 'take-1#run#1', until: T0 + 500 }]);
    // The slot is its: another holder is refused, and the lease lapses at `until`.
    expect((await flow.acquire('other#run#1', 'other', take.needs, T0 + 1, T0 + 900)).granted).toBe(false);
    expect((await flow.acquire('other#run#1', 'other', take.needs, T0 + 500, T0 + 900)).granted).toBe(true);
  });

  it('a refused holder writes nothing: not the row, not a hold, not a waiter entry', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inSave) return;
    const need = slot('in-save-full', 'k', 1);
    expect((await flow.acquire('first#run#1', 'first', [need], T0, T0 + 1000)).granted).toBe(true);
    const { next } = await stored(store, 'take-2');
    const free = slot('in-save-free', 'k', 1);
    const error = await store
      .save(next, 1, { flow: { holder: 'take-2#run#1', needs: [free, need], now: T0 + 1, until: T0 + 500 } })
      .then(() => undefined, (e: unknown) => e);
    expect(refused(error)).toBe(true);
    expect((await store.load('take-2'))?.version).toBe(1);
    const full = await counter(flow, T0 + 1, need.scope, need.key);
    expect(heldBy(full)).toEqual(['first#run#1']);
    expect(waitingOn(full)).toEqual([]);
    expect(heldBy(await counter(flow, T0 + 1, free.scope, free.key))).toEqual([]);
  });

  it('a save that loses its race takes nothing', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inSave) return;
    const { next } = await stored(store, 'take-3');
    await store.save(next, 1);
    const need = slot('in-save-lost', 'k', 1);
    const error = await store
      .save({ ...next, version: 3 }, 1, { flow: { holder: 'take-3#run#1', needs: [need], now: T0, until: T0 + 500 } })
      .then(() => undefined, (e: unknown) => e);
    expect(isStepfoldError(error, 'VERSION_CONFLICT')).toBe(true);
    expect(heldBy(await counter(flow, T0, need.scope, need.key))).toEqual([]);
    expect((await flow.acquire('other#run#1', 'other', [need], T0 + 1, T0 + 900)).granted).toBe(true);
  });

  it('a rate taken with a save records its start at now, and a holder already holding is granted again', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inSave) return;
    const need = rate('in-save-rate', 'k', 1, 1000);
    const { next } = await stored(store, 'take-4');
    const take: FlowTake = { holder: 'take-4#run#1', needs: [need], now: T0, until: T0 + 500 };
    await store.save(next, 1, { flow: take });
    await store.save({ ...next, version: 3 }, 2, { flow: { ...take, now: T0 + 10 } });
    expect((await counter(flow, T0 + 10, need.scope, need.key, 1000))?.holders).toEqual([
      { holder: 'take-4#run#1', until: T0 + 1000 },
    ]);
    expect((await flow.acquire('other#run#1', 'other', [need], T0 + 20, T0 + 900)).granted).toBe(false);
  });

  it('racing saves taking one key never hold more than its limit', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inSave) return;
    const other = await ctx.twin(store);
    const need = slot('in-save-race', 'k', 2);
    const ids = Array.from({ length: 8 }, (_, i) => `race-${i}`);
    const nexts = await Promise.all(ids.map((id) => stored(store, id)));
    const outcomes = await Promise.all(
      nexts.map(({ next }, i) =>
        (i % 2 ? other : store)
          .save(next, 1, { flow: { holder: `${next.id}#run#1`, needs: [need], now: T0, until: T0 + 5000 } })
          .then(
            () => 'written',
            (e: unknown) => (refused(e) ? 'refused' : e),
          ),
      ),
    );
    expect(outcomes.filter((o) => o === 'written')).toHaveLength(2);
    expect(outcomes.filter((o) => o === 'refused')).toHaveLength(6);
    const written = ids.filter((_, i) => outcomes[i] === 'written').map((id) => `${id}#run#1`);
    expect(heldBy(await counter(flow, T0, need.scope, need.key))).toEqual(written.sort());
  });
}

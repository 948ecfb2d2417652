import { expect, it } from 'vitest';
import { isStepfoldError } from '../../errors.js';
import type { Snapshot } from '../../snapshot.js';
import type { FlowNeed, SaveFlow } from '../../store/flow.js';
import type { Store } from '../../store/store.js';
import { makeTestSnapshot } from '../test-snapshot.js';
import type { SuiteContext } from './context.js';
import { counter, freshFlow, heldBy, rate, slot, T0, waitingOn } from './flow-harness.js';

// A save that takes and releases flow holders in the same write (`SaveOptions.flow`), on a store
// whose `flow.inSave` is true: all or nothing. A store without it does its flow work with
// `acquire` and `release` alone, and these tests have nothing to check on it.

/** A stored instance at version 1, and its next version to save with flow work. */
async function stored(store: Store, id: string): Promise<Snapshot> {
  const s = makeTestSnapshot(id);
  await store.create(s);
  return { ...s, version: 2 };
}

/** The save's flow work: `holder` taking `needs` at `now`, held until `until`. */
const taking = (holder: string, needs: FlowNeed[], now: number, until: number): SaveFlow => ({
  take: { holder, needs, until },
  now,
});

/** What `p` rejected with, or undefined. */
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

/** The part's tests, run within the flow part. */
export function describeFlowInSave(ctx: SuiteContext): void {
  it('a save taking a holder writes the row and the hold together', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inSave) return;
    const next = await stored(store, 'take-1');
    const need = slot('in-save', 'k', 1);
    await store.save(next, 1, { flow: taking('take-1#run#1', [need], T0, T0 + 500) });
    expect((await store.load('take-1'))?.version).toBe(2);
    expect((await counter(flow, T0, 'in-save', 'k'))?.holders).toEqual([
      { holder: 'take-1#run#1', until: T0 + 500 },
    ]);
    // The slot is its: another holder is refused, until the lease lapses at `until`.
    expect((await flow.acquire('other#run#1', 'other', [need], T0 + 1, T0 + 900)).granted).toBe(false);
    expect((await flow.acquire('other#run#1', 'other', [need], T0 + 500, T0 + 900)).granted).toBe(true);
  });

  it('a refused take writes nothing: not the row, not a hold, not a waiter entry, not its release', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inSave) return;
    const full = slot('in-save-full', 'k', 1);
    const mine = slot('in-save-mine', 'k', 1);
    expect((await flow.acquire('first#run#1', 'first', [full], T0, T0 + 1000)).granted).toBe(true);
    expect((await flow.acquire('take-2#run#0', 'take-2', [mine], T0, T0 + 1000)).granted).toBe(true);
    const next = await stored(store, 'take-2');
    const free = slot('in-save-free', 'k', 1);
    const flowWork = { ...taking('take-2#run#1', [free, full], T0 + 1, T0 + 500), release: ['take-2#run#0'] };
    expect(isStepfoldError(await failure(store.save(next, 1, { flow: flowWork })), 'FLOW_REFUSED')).toBe(
      true,
    );
    expect((await store.load('take-2'))?.version).toBe(1);
    const listed = await counter(flow, T0 + 1, full.scope, full.key);
    expect(heldBy(listed)).toEqual(['first#run#1']);
    expect(waitingOn(listed)).toEqual([]);
    expect(heldBy(await counter(flow, T0 + 1, free.scope, free.key))).toEqual([]);
    expect(heldBy(await counter(flow, T0 + 1, mine.scope, mine.key))).toEqual(['take-2#run#0']);
  });

  it('a save that loses its race takes and releases nothing', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inSave) return;
    const next = await stored(store, 'take-3');
    await store.save(next, 1);
    const need = slot('in-save-lost', 'k', 1);
    const held = slot('in-save-kept', 'k', 1);
    expect((await flow.acquire('take-3#run#0', 'take-3', [held], T0, T0 + 1000)).granted).toBe(true);
    const flowWork = { ...taking('take-3#run#1', [need], T0, T0 + 500), release: ['take-3#run#0'] };
    const lost = await failure(store.save({ ...next, version: 3 }, 1, { flow: flowWork }));
    expect(isStepfoldError(lost, 'VERSION_CONFLICT')).toBe(true);
    expect(heldBy(await counter(flow, T0, need.scope, need.key))).toEqual([]);
    expect(heldBy(await counter(flow, T0, held.scope, held.key))).toEqual(['take-3#run#0']);
  });

  it('a save releasing holders frees their slots in its write and answers the waiters it woke', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inSave) return;
    const need = slot('in-save-release', 'k', 1);
    expect((await flow.acquire('take-4#run#1', 'take-4', [need], T0, T0 + 5000)).granted).toBe(true);
    expect((await flow.acquire('waiter#run#1', 'waiter', [need], T0 + 1, T0 + 5000)).granted).toBe(false);
    const next = await stored(store, 'take-4');
    const woken: string[][] = [];
    await store.save(next, 1, {
      flow: { release: ['take-4#run#1'], now: T0 + 2, woken: (ids) => woken.push(ids) },
    });
    expect(woken).toEqual([['waiter']]);
    expect(heldBy(await counter(flow, T0 + 2, need.scope, need.key))).toEqual([]);
    expect((await flow.acquire('waiter#run#1', 'waiter', [need], T0 + 3, T0 + 5000)).granted).toBe(true);
  });

  it('a release and a take of one counter: the release counts first', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inSave) return;
    const need = slot('in-save-handover', 'k', 1);
    expect((await flow.acquire('take-5#charge#1', 'take-5', [need], T0, T0 + 5000)).granted).toBe(true);
    const next = await stored(store, 'take-5');
    const flowWork = { ...taking('take-5#ship#1', [need], T0 + 1, T0 + 6000), release: ['take-5#charge#1'] };
    await store.save(next, 1, { flow: flowWork });
    expect((await counter(flow, T0 + 1, need.scope, need.key))?.holders).toEqual([
      { holder: 'take-5#ship#1', until: T0 + 6000 },
    ]);
  });

  it('a rate taken with a save records its start at now, and a holder already holding is granted again', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inSave) return;
    const need = rate('in-save-rate', 'k', 1, 1000);
    const next = await stored(store, 'take-6');
    await store.save(next, 1, { flow: taking('take-6#run#1', [need], T0, T0 + 500) });
    await store.save({ ...next, version: 3 }, 2, { flow: taking('take-6#run#1', [need], T0 + 10, T0 + 500) });
    expect((await counter(flow, T0 + 10, need.scope, need.key, 1000))?.holders).toEqual([
      { holder: 'take-6#run#1', until: T0 + 1000 },
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
      nexts.map((next, i) =>
        (i % 2 ? other : store)
          .save(next, 1, { flow: taking(`${next.id}#run#1`, [need], T0, T0 + 5000) })
          .then(
            () => 'written',
            (e: unknown) => (isStepfoldError(e, 'FLOW_REFUSED') ? 'refused' : e),
          ),
      ),
    );
    expect(outcomes.filter((o) => o === 'written')).toHaveLength(2);
    expect(outcomes.filter((o) => o === 'refused')).toHaveLength(6);
    const written = ids.filter((_, i) => outcomes[i] === 'written').map((id) => `${id}#run#1`);
    expect(heldBy(await counter(flow, T0, need.scope, need.key))).toEqual(written.sort());
  });
}

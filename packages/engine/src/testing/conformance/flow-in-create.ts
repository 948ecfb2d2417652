import { expect, it } from 'vitest';
import { isStepfoldError } from '../../errors.js';
import type { CreateFlow, FlowNeed } from '../../store/flow.js';
import { FLOW_HELD_UNTIL_RELEASED } from '../../store/flow-calls.js';
import { makeTestSnapshot } from '../test-snapshot.js';
import type { SuiteContext } from './context.js';
import { counter, freshFlow, heldBy, rate, slot, T0, waitingOn } from './flow-harness.js';

// A create that takes a flow holder in the same write (`CreateOptions.flow`), on a store whose
// `flow.inCreate` is true: the instance and the hold, or neither. A store without it takes the
// holder with `acquire` before the create, and these tests have nothing to check on it.

/** A create's flow work: `holder` taking `needs` at `now`, held until `until`; `told` counts the store's confirmations. */
function taking(holder: string, needs: FlowNeed[], now: number, until: number) {
  const told = { taken: 0 };
  const flow: CreateFlow = { take: { holder, needs, until }, now, taken: () => told.taken++ };
  return { flow, told };
}

/** What `p` rejected with, or undefined. */
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

/** The part's tests, run within the flow part. */
export function describeFlowInCreate(ctx: SuiteContext): void {
  it('a create taking a holder writes the instance and the hold together, and says so', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inCreate) return;
    const need = slot('in-create', 'k', 1);
    const { flow: work, told } = taking('make-1#run#1', [need], T0, T0 + 500);
    await store.create(makeTestSnapshot('make-1'), { flow: work });
    expect(told.taken).toBe(1);
    expect((await store.load('make-1'))?.version).toBe(1);
    expect((await counter(flow, T0, 'in-create', 'k'))?.holders).toEqual([
      { holder: 'make-1#run#1', until: T0 + 500 },
    ]);
    // The slot is its: another holder is refused, until the lease lapses at `until`.
    expect((await flow.acquire('other#run#1', 'other', [need], T0 + 1, T0 + 900)).granted).toBe(false);
    expect((await flow.acquire('other#run#1', 'other', [need], T0 + 500, T0 + 900)).granted).toBe(true);
  });

  it('a refused take writes nothing: not the instance, not a hold, not a waiter entry', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inCreate) return;
    const full = slot('in-create-full', 'k', 1);
    const free = slot('in-create-free', 'k', 1);
    expect((await flow.acquire('first#run#1', 'first', [full], T0, T0 + 1000)).granted).toBe(true);
    const { flow: work, told } = taking('make-2#run#1', [free, full], T0 + 1, T0 + 500);
    const refused = await failure(store.create(makeTestSnapshot('make-2'), { flow: work }));
    expect(isStepfoldError(refused, 'FLOW_REFUSED')).toBe(true);
    expect(told.taken).toBe(0);
    expect(await store.load('make-2')).toBeNull();
    const listed = await counter(flow, T0 + 1, full.scope, full.key);
    expect(heldBy(listed)).toEqual(['first#run#1']);
    expect(waitingOn(listed)).toEqual([]);
    expect(heldBy(await counter(flow, T0 + 1, free.scope, free.key))).toEqual([]);
  });

  it('a create on an id taken takes nothing (ALREADY_EXISTS)', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inCreate) return;
    const kept = makeTestSnapshot('make-3');
    await store.create(kept);
    const need = slot('in-create-taken', 'k', 1);
    const { flow: work, told } = taking('make-3#run#1', [need], T0, T0 + 500);
    const exists = await failure(store.create({ ...kept, input: 'other' }, { flow: work }));
    expect(isStepfoldError(exists, 'ALREADY_EXISTS')).toBe(true);
    expect(told.taken).toBe(0);
    expect((await store.load('make-3'))?.input).toEqual(kept.input);
    expect(heldBy(await counter(flow, T0, need.scope, need.key))).toEqual([]);
    expect((await flow.acquire('other#run#1', 'other', [need], T0 + 1, T0 + 900)).granted).toBe(true);
  });

  it('a take alongside an instance limit counts the instance holds, and takes every need or none', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inCreate) return;
    // A workflow-wide counter of 2 that one instance holds until released, as an instance limit does.
    const instances = slot('in-create-wf', 'k', 2);
    const step = slot('in-create-step', 'k', 5);
    const held = await flow.acquire('old', 'old', [instances], T0, FLOW_HELD_UNTIL_RELEASED);
    expect(held.granted).toBe(true);
    const first = taking('make-4#run#1', [step, instances], T0, T0 + 500);
    await store.create(makeTestSnapshot('make-4'), { flow: first.flow });
    expect(first.told.taken).toBe(1);
    expect(heldBy(await counter(flow, T0, instances.scope, instances.key))).toEqual(['make-4#run#1', 'old']);
    const second = taking('make-5#run#1', [step, instances], T0 + 1, T0 + 500);
    const refused = await failure(store.create(makeTestSnapshot('make-5'), { flow: second.flow }));
    expect(isStepfoldError(refused, 'FLOW_REFUSED')).toBe(true);
    expect(await store.load('make-5')).toBeNull();
    expect(heldBy(await counter(flow, T0 + 1, step.scope, step.key))).toEqual(['make-4#run#1']);
  });

  it('a take on a counter with waiters, lapsed holds or a rate is decided as acquire decides it', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inCreate) return;
    const busy = slot('in-create-busy', 'k', 1);
    expect((await flow.acquire('a#run#1', 'a', [busy], T0, T0 + 100)).granted).toBe(true);
    expect((await flow.acquire('b#run#1', 'b', [busy], T0 + 1, T0 + 100)).granted).toBe(false);
    // At T0 + 100 the hold of `a` lapsed; `b` waits: a create's take is granted as acquire's would be.
    const late = taking('make-6#run#1', [busy], T0 + 100, T0 + 600);
    await store.create(makeTestSnapshot('make-6'), { flow: late.flow });
    expect(late.told.taken).toBe(1);
    const listed = await counter(flow, T0 + 100, busy.scope, busy.key);
    expect(heldBy(listed)).toEqual(['make-6#run#1']);
    expect(waitingOn(listed)).toEqual(['b#run#1']);
    const once = rate('in-create-rate', 'k', 1, 1000);
    await store.create(makeTestSnapshot('make-7'), {
      flow: taking('make-7#run#1', [once], T0, T0 + 500).flow,
    });
    expect((await counter(flow, T0, once.scope, once.key, 1000))?.holders).toEqual([
      { holder: 'make-7#run#1', until: T0 + 1000 },
    ]);
    const again = taking('make-8#run#1', [once], T0 + 10, T0 + 500);
    const refused = await failure(store.create(makeTestSnapshot('make-8'), { flow: again.flow }));
    expect(isStepfoldError(refused, 'FLOW_REFUSED')).toBe(true);
    expect(await store.load('make-8')).toBeNull();
  });

  it('racing creates taking one key never hold more than its limit', async () => {
    const { store, flow } = await freshFlow(ctx);
    if (!flow.inCreate) return;
    const other = await ctx.twin(store);
    const need = slot('in-create-race', 'k', 2);
    const ids = Array.from({ length: 8 }, (_, i) => `make-race-${i}`);
    const outcomes = await Promise.all(
      ids.map((id, i) =>
        (i % 2 ? other : store)
          .create(makeTestSnapshot(id), { flow: taking(`${id}#run#1`, [need], T0, T0 + 5000).flow })
          .then(
            () => 'written',
            (e: unknown) => (isStepfoldError(e, 'FLOW_REFUSED') ? 'refused' : e),
          ),
      ),
    );
    expect(outcomes.filter((o) => o === 'written')).toHaveLength(2);
    expect(outcomes.filter((o) => o === 'refused')).toHaveLength(6);
    const written = ids.filter((_, i) => outcomes[i] === 'written');
    expect(heldBy(await counter(flow, T0, need.scope, need.key))).toEqual(
      written.map((id) => `${id}#run#1`).sort(),
    );
    for (const [i, id] of ids.entries())
      expect((await store.load(id)) === null).toBe(outcomes[i] === 'refused');
  });
}

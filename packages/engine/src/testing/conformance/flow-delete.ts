import { expect, it } from 'vitest';
import { instanceHolder, taskHolder } from '../../flow-holders.js';
import type { TaskState } from '../../snapshot.js';
import { FLOW_HELD_UNTIL_RELEASED } from '../../store/flow-calls.js';
import { makeTestSnapshot } from '../test-snapshot.js';
import type { SuiteContext } from './context.js';
import { counter, freshFlow, heldBy, slot } from './flow-harness.js';

// A deleted instance takes its slots with it: `store.delete` releases what the stored snapshot
// holds (an instance limit, which never lapses, and its running attempts' slots), so the next
// holder is granted at once rather than when a lease lapses.

const admitted = slot('deleted-admission', 'tenant-1', 1);
const charging = slot('deleted-charge', 'customer-1', 1);

/** A running attempt of step `charge` that holds `charging`. */
function attempt(id: string, now: number): TaskState {
  return {
    step: 'charge',
    phase: 'run',
    attempt: 1,
    idempotencyKey: `${id}/1/charge/1`,
    handler: 'charge',
    dispatchedAt: now,
    deadline: now + 300_000,
    leaseUntil: now + 600_000,
    dispatchVersion: 1,
    needs: [charging],
  };
}

/** The part's tests, run within the flow part. */
export function describeFlowDelete(ctx: SuiteContext): void {
  it('a deleted instance releases its slots: the next holder is granted at once, not after the lease', async () => {
    const { store, flow } = await freshFlow(ctx);
    const now = Date.now();
    const task = attempt('gone-1', now);
    const s = makeTestSnapshot('gone-1', {
      holds: [admitted],
      tasks: { charge: task },
      wakeAt: task.leaseUntil!,
      createdAt: now,
      updatedAt: now,
    });
    expect(await flow.acquire(instanceHolder(s), s.id, [admitted], now, FLOW_HELD_UNTIL_RELEASED)).toEqual({
      granted: true,
    });
    expect((await flow.acquire(taskHolder(task), s.id, [charging], now, task.leaseUntil!)).granted).toBe(
      true,
    );
    await store.create(s);
    expect((await flow.acquire('other#run#1', 'other', [charging], now + 1, now + 60_000)).granted).toBe(
      false,
    );

    expect(await store.delete(s.id)).toBe(true);
    const later = now + 2;
    expect(heldBy(await counter(flow, later, admitted.scope, admitted.key))).toEqual([]);
    expect(heldBy(await counter(flow, later, charging.scope, charging.key))).toEqual([]);
    expect((await flow.acquire('other#run#1', 'other', [charging], later, later + 60_000)).granted).toBe(
      true,
    );
    expect((await flow.acquire('next', 'next', [admitted], later, FLOW_HELD_UNTIL_RELEASED)).granted).toBe(
      true,
    );
  });

  it('a conditional delete releases only when it deletes; a lost race keeps the slots', async () => {
    const { store, flow } = await freshFlow(ctx);
    const now = Date.now();
    const s = makeTestSnapshot('kept-1', { holds: [admitted], createdAt: now, updatedAt: now });
    await flow.acquire(instanceHolder(s), s.id, [admitted], now, FLOW_HELD_UNTIL_RELEASED);
    await store.create(s);
    await store.save({ ...s, version: 2 }, 1);
    await expect(store.delete(s.id, { version: 1 })).rejects.toMatchObject({ code: 'VERSION_CONFLICT' });
    expect(heldBy(await counter(flow, now + 1, admitted.scope, admitted.key))).toEqual(['kept-1']);
    expect(await store.delete(s.id, { version: 2 })).toBe(true);
    expect(heldBy(await counter(flow, now + 2, admitted.scope, admitted.key))).toEqual([]);
  });

  it('deleting an instance that holds nothing leaves the other holders be', async () => {
    const { store, flow } = await freshFlow(ctx);
    const now = Date.now();
    await flow.acquire('someone', 'someone', [admitted], now, FLOW_HELD_UNTIL_RELEASED);
    await store.create(makeTestSnapshot('idle-1', { createdAt: now, updatedAt: now }));
    expect(await store.delete('idle-1')).toBe(true);
    expect(await store.delete('idle-1')).toBe(false);
    expect(heldBy(await counter(flow, now + 1, admitted.scope, admitted.key))).toEqual(['someone']);
  });
}

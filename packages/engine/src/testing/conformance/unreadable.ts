import { expect, it } from 'vitest';
import { isStepfoldError } from '../../errors.js';
import type { Store } from '../../store/store.js';
import { makeTestSnapshot } from '../test-snapshot.js';
import type { Corrupt, SuiteContext } from './context.js';

const ACCEPT = ['conformance@1@conformance-hash'];
const signal = (n: number) => ({ type: 'signal', name: 'go', payload: { n }, at: n }) as const;

/** Collects what a claim reports as unreadable. */
function reported() {
  const errors: unknown[] = [];
  return { errors, onUnreadable: (e: unknown) => void errors.push(e) };
}

const codes = (errors: unknown[]) => errors.map((e) => (isStepfoldError(e) ? e.code : String(e)));

/**
 * Rows that cannot be read (a torn snapshot, a torn sent signal) among readable ones: a claim with
 * `onUnreadable` reports each (INVALID_SNAPSHOT) and returns the rest, whatever the store. Run for a
 * store whose options can spoil a row (`corrupt`).
 */
export function describeUnreadable({ fresh }: SuiteContext, corrupt: Corrupt): void {
  const create = async (store: Store, ids: string[], patch = {}) => {
    for (const id of ids) await store.create(makeTestSnapshot(id, patch));
  };

  it('a due claim reports a row it cannot read and returns the others, by lane and by id', async () => {
    const store = await fresh();
    if (!store.claims) return;
    const ids = ['ur-1', 'ur-2', 'ur-3', 'ur-4', 'ur-5'];
    await create(store, ids, { wakeAt: 1 });
    await corrupt(store, 'ur-2', 'snapshot');
    // Without the callback the claim fails, as every other read of the row does.
    await expect(store.claims.claimDue(100, 10, { leaseMs: 0 })).rejects.toSatisfy((e) =>
      isStepfoldError(e, 'INVALID_SNAPSHOT'),
    );
    const lane = reported();
    const got = await store.claims.claimDue(200, 10, { leaseMs: 0, onUnreadable: lane.onUnreadable });
    expect(got.map((s) => s.id).sort()).toEqual(['ur-1', 'ur-3', 'ur-4', 'ur-5']);
    expect(codes(lane.errors)).toEqual(['INVALID_SNAPSHOT']);
    const named = reported();
    const byId = await store.claims.claimDue(300, 10, {
      ids: ['ur-1', 'ur-2', 'ur-3'],
      leaseMs: 0,
      onUnreadable: named.onUnreadable,
    });
    expect(byId.map((s) => s.id).sort()).toEqual(['ur-1', 'ur-3']);
    expect(codes(named.errors)).toEqual(['INVALID_SNAPSHOT']);
  });

  it('an inbox claim reports an instance whose snapshot or sent signal it cannot read and returns the others', async () => {
    const store = await fresh();
    if (!store.inbox) return;
    const ids = ['us-1', 'us-2', 'us-3', 'us-4'];
    await create(store, ids, { status: 'waiting' });
    for (const [i, id] of ids.entries()) expect(await store.inbox.send(id, signal(i + 1), ACCEPT)).toBe(true);
    await corrupt(store, 'us-2', 'sent');
    await corrupt(store, 'us-3', 'snapshot');
    const named = reported();
    const byId = await store.inbox.claim(0, 10, ids, named.onUnreadable);
    expect(byId.map((d) => d.snapshot.id).sort()).toEqual(['us-1', 'us-4']);
    expect(byId.find((d) => d.snapshot.id === 'us-4')?.sent.map((p) => p.event)).toEqual([signal(4)]);
    expect(codes(named.errors)).toEqual(['INVALID_SNAPSHOT', 'INVALID_SNAPSHOT']);
    // The inbox's own lane (signals a second old): the same, and the torn ones stay leased.
    const lane = reported();
    const polled = await store.inbox.claim(10_000, 10, undefined, lane.onUnreadable);
    expect(polled.map((d) => d.snapshot.id).sort()).toEqual(['us-1', 'us-4']);
    expect(codes(lane.errors)).toEqual(['INVALID_SNAPSHOT', 'INVALID_SNAPSHOT']);
    expect(await store.inbox.claim(10_001, 10, undefined, lane.onUnreadable)).toEqual([]);
    expect(lane.errors).toHaveLength(2);
  });
}

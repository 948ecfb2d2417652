import { expect, it } from 'vitest';
import type { Snapshot } from '../../snapshot.js';
import type { DueQuery, Store } from '../../store/store.js';
import { makeTestSnapshot } from '../test-snapshot.js';
import type { SuiteContext } from './context.js';

const wf = (name: string) => ({ name, version: 1, hash: 'h' });
const NOW = 1_000_000;

/** Creates due instances, a few at a time (a thousand one by one is slow on a remote server). */
async function createAll(store: Store, snapshots: readonly Snapshot[]): Promise<void> {
  for (let i = 0; i < snapshots.length; i += 50)
    await Promise.all(snapshots.slice(i, i + 50).map((s) => store.create(s)));
}

/** `listDue`'s page without keeping it: a store with claims gives its claims straight back. */
async function peek(store: Store, limit: number, query?: DueQuery): Promise<string[]> {
  const ids = await store.listDue(NOW, limit, query);
  if (store.claims && ids.length) await store.claims.release(ids);
  return ids;
}

const keyed = (id: string, fairKey: string | undefined, wakeAt: number, workflow = 'fair') =>
  makeTestSnapshot(id, { workflow: wf(workflow), wakeAt, ...(fairKey === undefined ? {} : { fairKey }) });

/**
 * The due order across fairness keys (`Snapshot.fairKey`): round-robin over the keys, each key's
 * earliest first, so a key's backlog never holds back another key's first due instance.
 */
export function describeFairness({ options, fresh }: SuiteContext): void {
  const claims = options.capabilities.includes('claims');

  it("a key's backlog of 1,000 does not hold back another key's one instance", async () => {
    const store = await fresh();
    const flood = Array.from({ length: 1000 }, (_, i) =>
      keyed(`flood-${String(i).padStart(4, '0')}`, 'tenant-a', 1000 + i),
    );
    await createAll(store, [...flood, keyed('light-0', 'tenant-b', 5000)]);
    const a = (i: number) => `flood-${String(i).padStart(4, '0')}`;
    expect(await peek(store, 2)).toEqual([a(0), 'light-0']);
    expect(await peek(store, 5)).toEqual([a(0), 'light-0', a(1), a(2), a(3)]);
    expect(await peek(store, 3, { workflow: 'fair' })).toEqual([a(0), 'light-0', a(1)]);
    if (!claims) return;
    const cl = store.claims!;
    // Claimed instances stay claimed: the next page is A's next, and B's is out until released.
    expect((await cl.claimDue(NOW, 2)).map((s) => s.id)).toEqual([a(0), 'light-0']);
    expect(await store.listDue(NOW, 2)).toEqual([a(1), a(2)]);
    await cl.release(['light-0']);
    expect((await cl.claimDue(NOW, 2, { workflow: 'fair' })).map((s) => s.id)).toEqual([a(3), 'light-0']);
    // Claimed by id: the same order among the ids named.
    const named = await cl.claimDue(NOW, 2, { ids: [a(5), a(4), a(6)] });
    expect(named.map((s) => s.id)).toEqual([a(4), a(5)]);
  });

  it('three keys and the group without one interleave, groups by their head, each earliest first', async () => {
    // A store per look: a page handed out counts as the keys' turn (see the test below).
    const seeded = async () => {
      const store = await fresh();
      await createAll(store, [
        keyed('x1', 'x', 10),
        keyed('x2', 'x', 11),
        keyed('x3', 'x', 12),
        keyed('x4', 'x', 13),
        keyed('y1', 'y', 20),
        keyed('y2', 'y', 21),
        keyed('z1', 'z', 5),
        keyed('z2', 'z', 30),
        keyed('p1', undefined, 15),
        keyed('p2', '', 16), // an empty key is no key
        keyed('x-later', 'x', NOW + 1), // not due: no part of the order
        keyed('q1', 'x', 1, 'other'), // another workflow: left out of the lane
      ]);
      return store;
    };
    const order = ['z1', 'x1', 'p1', 'y1', 'z2', 'x2', 'p2', 'y2', 'x3', 'x4'];
    expect(await peek(await seeded(), 20, { workflow: 'fair' })).toEqual(order);
    expect(await peek(await seeded(), 3, { workflow: 'fair' })).toEqual(order.slice(0, 3));
    expect(await peek(await seeded(), 6, { workflow: 'fair' })).toEqual(order.slice(0, 6));
    // Every workflow: q1 joins key x, whose head it now is (at 1), so x's group goes first.
    expect(await peek(await seeded(), 20)).toEqual([
      'q1',
      'z1',
      'p1',
      'y1',
      'x1',
      'z2',
      'p2',
      'y2',
      'x2',
      'x3',
      'x4',
    ]);
  });

  it("calls of limit 1 take the keys in turn, not the oldest backlog's head each time", async () => {
    const store = await fresh();
    await createAll(store, [
      ...Array.from({ length: 6 }, (_, i) => keyed(`turn-a${i}`, 'a', 1 + i)),
      keyed('turn-b0', 'b', 20),
      keyed('turn-c0', 'c', 30),
      keyed('turn-p0', undefined, 40),
    ]);
    // Each call's `now` a little later: a key handed out last goes after the keys waiting since.
    const taken: string[] = [];
    for (let i = 0; i < 7; i++) {
      const ids = await store.listDue(NOW + i, 1, { leaseMs: 60_000 });
      taken.push(...ids);
      // Without claims, taken means saved out of the due order.
      if (!claims)
        for (const id of ids) await store.save(makeTestSnapshot(id, { workflow: wf('fair'), version: 2 }), 1);
    }
    expect(taken).toEqual(['turn-a0', 'turn-b0', 'turn-c0', 'turn-p0', 'turn-a1', 'turn-a2', 'turn-a3']);
  });

  it('groups whose heads are due at the same time go by key, the group without one first', async () => {
    const store = await fresh();
    await createAll(store, [
      keyed('t-b1', 'b', 7),
      keyed('t-b2', 'b', 8),
      keyed('t-a1', 'a', 7),
      keyed('t-p1', undefined, 7),
      keyed('t-a2', 'a', 9),
    ]);
    expect(await peek(store, 10)).toEqual(['t-p1', 't-a1', 't-b1', 't-a2', 't-b2']);
  });

  it('no key starves: every page while keys have due work holds the next of each', async () => {
    const store = await fresh();
    const counts: Record<string, number> = { heavy: 30, mid: 6, light: 2 };
    const made: Snapshot[] = [];
    for (const [key, n] of Object.entries(counts))
      for (let i = 0; i < n; i++) made.push(keyed(`${key}-${String(i).padStart(2, '0')}`, key, 100 + i));
    await createAll(store, made);
    const seen: string[] = [];
    for (let page = 0; page < 20; page++) {
      const ids = await store.listDue(NOW, 4);
      if (ids.length === 0) break;
      const left = Object.keys(counts).filter(
        (k) => seen.filter((id) => id.startsWith(`${k}-`)).length < counts[k]!,
      );
      for (const key of left)
        expect(
          ids.some((id) => id.startsWith(`${key}-`)),
          `page ${page}: ${key}`,
        ).toBe(true);
      // Done with them: saved with no wake time, out of the due order.
      for (const id of ids)
        await store.save(makeTestSnapshot(id, { workflow: wf('fair'), version: 2, wakeAt: null }), 1);
      seen.push(...ids);
    }
    expect(seen.sort()).toEqual(made.map((s) => s.id).sort());
  });

  if (claims) {
    it('racing claimers get disjoint fair batches that together cover every due instance', async () => {
      const store = await fresh();
      const made: Snapshot[] = [];
      for (const [key, n] of [
        ['r-a', 40],
        ['r-b', 3],
        ['r-c', 3],
      ] as const)
        for (let i = 0; i < n; i++) made.push(keyed(`${key}-${String(i).padStart(2, '0')}`, key, 10 + i));
      await createAll(store, made);
      const got: string[] = [];
      for (let round = 0; round < 10 && got.length < made.length; round++) {
        const batches = await Promise.all([
          store.listDue(NOW, 5, { leaseMs: 60_000 }),
          store.claims!.claimDue(NOW, 5, { leaseMs: 60_000 }).then((s) => s.map((x) => x.id)),
          store.listDue(NOW, 5, { workflow: 'fair', leaseMs: 60_000 }),
        ]);
        got.push(...batches.flat());
      }
      expect(new Set(got).size).toBe(got.length);
      expect(got.sort()).toEqual(made.map((s) => s.id).sort());
    });
  }
}

import { expect, it } from 'vitest';
import { makeTestSnapshot } from '../test-snapshot.js';
import type { SuiteContext } from './context.js';

const wf = (name: string) => ({ name, version: 1, hash: 'h' });

/** Claims on due instances (`store.claims`): disjoint batches, leases, tokens, claim-and-load. */
export function describeClaims({ fresh }: SuiteContext): void {
  it('claimed ids come back after a release or a save, not before', async () => {
    const store = await fresh();
    const claims = store.claims!;
    for (const id of ['rel-1', 'rel-2', 'rel-3']) await store.create(makeTestSnapshot(id, { wakeAt: 1 }));
    expect(await store.listDue(100, 10)).toEqual(['rel-1', 'rel-2', 'rel-3']);
    expect(await store.listDue(100, 10)).toEqual([]);
    await claims.release(['rel-2']);
    // A save ends the claim too: the instance is due again at its new time.
    await store.save(makeTestSnapshot('rel-3', { version: 2, wakeAt: 2 }), 1);
    expect(await store.listDue(100, 10)).toEqual(['rel-2', 'rel-3']);
    // A lane claims as well.
    await store.create(makeTestSnapshot('rel-4', { workflow: wf('lane'), wakeAt: 1 }));
    expect(await store.listDue(100, 10, { workflow: 'lane' })).toEqual(['rel-4']);
    expect(await store.listDue(100, 10)).toEqual([]);
  });

  it('leaseMs sets how long one call claims; a lapsed claim is due again', async () => {
    const store = await fresh();
    const claims = store.claims!;
    for (const id of ['lease-1', 'lease-2', 'lease-3'])
      await store.create(makeTestSnapshot(id, { workflow: wf('leased'), wakeAt: 1 }));
    expect(await store.listDue(1000, 1, { leaseMs: 50 })).toEqual(['lease-1']);
    expect(await store.listDue(1000, 1, { workflow: 'leased', leaseMs: 5000 })).toEqual(['lease-2']);
    // Inside the short lease neither is handed out again; the third one is.
    expect(await store.listDue(1049, 10)).toEqual(['lease-3']);
    // At 1050 the 50 ms lease has lapsed, the 5 s one (and the default one) have not.
    expect(await store.listDue(1050, 10, { leaseMs: 0 })).toEqual(['lease-1']);
    // A lease of 0 ends at `now`: due again at once.
    expect(await store.listDue(1050, 10, { workflow: 'leased' })).toEqual(['lease-1']);
    expect(await store.listDue(6000, 10)).toEqual(['lease-2']);
    await store.create(makeTestSnapshot('lease-4', { wakeAt: 1 }));
    expect((await claims.claimDue(7000, 1, { ids: ['lease-4'], leaseMs: 100 })).map((s) => s.id)).toEqual([
      'lease-4',
    ]);
    expect(await claims.claimDue(7099, 1, { ids: ['lease-4'] })).toEqual([]);
    expect((await claims.claimDue(7100, 1, { ids: ['lease-4'] })).map((s) => s.id)).toEqual(['lease-4']);
    // A bad lease is refused before anything is claimed.
    await store.create(makeTestSnapshot('lease-5', { wakeAt: 1 }));
    for (const leaseMs of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])
      await expect(store.listDue(1e9, 10, { leaseMs })).rejects.toThrow(RangeError);
    expect(await store.listDue(1e9, 10, { workflow: 'conformance' })).toContain('lease-5');
  });

  it('claimed instances do not hold back the unclaimed ones behind them', async () => {
    const store = await fresh();
    const ids = Array.from({ length: 40 }, (_, i) => `clog-${String(i).padStart(2, '0')}`);
    for (const [i, id] of ids.entries()) await store.create(makeTestSnapshot(id, { wakeAt: i }));
    // The 30 earliest claimed for long: each later poll gets the rest, earliest first.
    const head = await store.listDue(100, 30, { leaseMs: 60_000 });
    expect(head).toEqual(ids.slice(0, 30));
    expect(await store.listDue(200, 4, { leaseMs: 60_000 })).toEqual(ids.slice(30, 34));
    expect(await store.listDue(300, 10)).toEqual(ids.slice(34));
    expect(await store.listDue(400, 10)).toEqual([]);
  });

  it('claimDue claims as listDue does and returns the stored snapshots', async () => {
    const store = await fresh();
    const claims = store.claims!;
    const rows: Array<[string, string, number | null]> = [
      ['cd-3', 'one', 30],
      ['cd-1', 'one', 10],
      ['cd-2', 'two', 20],
      ['cd-4', 'one', 5000],
      ['cd-5', 'two', null],
    ];
    for (const [id, name, wakeAt] of rows)
      await store.create(makeTestSnapshot(id, { workflow: wf(name), wakeAt, input: { id } }));
    // Only the named ones, only if due: a future one, one without a wake time and an unknown id give nothing.
    const named = await claims.claimDue(100, 10, { ids: ['cd-3', 'cd-4', 'cd-5', 'cd-none'] });
    expect(named).toEqual([await store.load('cd-3')]);
    // Claimed: neither claimDue nor listDue returns it again until it is saved or released.
    expect(await claims.claimDue(100, 10, { ids: ['cd-3'] })).toEqual([]);
    expect(await store.listDue(100, 10, { workflow: 'one' })).toEqual(['cd-1']);
    await claims.release(['cd-1']);
    // A lane, earliest first, at most `limit`.
    const lane = await claims.claimDue(100, 1, { workflow: 'one', ids: ['cd-1', 'cd-2', 'cd-3'] });
    expect(lane).toEqual([await store.load('cd-1')]);
    const rest = await claims.claimDue(100, 10, { workflow: 'two' });
    expect(rest.map((s) => [s.id, s.input])).toEqual([['cd-2', { id: 'cd-2' }]]);
    expect(await claims.claimDue(100, 10)).toEqual([]);
    // A save ends the claim.
    await store.save(makeTestSnapshot('cd-3', { version: 2, workflow: wf('one'), wakeAt: 40 }), 1);
    expect((await claims.claimDue(100, 10, { ids: ['cd-3'] })).map((s) => s.version)).toEqual([2]);
    expect(await claims.claimDue(100, 10, { ids: [] })).toEqual([]);
    expect(await claims.claimDue(6000, 10, { workflow: 'not a valid id \u0000' })).toEqual([]);
    expect((await claims.claimDue(6000, 10, { ids: ['cd-4', 'cd-5'] })).map((s) => s.id)).toEqual(['cd-4']);
  });

  it('a release gives back only the claims taken with its token', async () => {
    const store = await fresh();
    const claims = store.claims!;
    for (const id of ['tok-1', 'tok-2', 'tok-3']) await store.create(makeTestSnapshot(id, { wakeAt: 1 }));
    expect(await store.listDue(100, 1, { token: 'worker-a' })).toEqual(['tok-1']);
    expect((await claims.claimDue(100, 1, { token: 'worker-b' })).map((s) => s.id)).toEqual(['tok-2']);
    expect(await store.listDue(100, 1)).toEqual(['tok-3']); // the store's own token
    // Worker b gives back every id it knows of: only its own claim ends.
    await claims.release(['tok-1', 'tok-2', 'tok-3'], 'worker-b');
    expect(await store.listDue(100, 10, { token: 'worker-c' })).toEqual(['tok-2']);
    // Without a token, the store's own claims.
    await claims.release(['tok-1', 'tok-3']);
    expect(await store.listDue(100, 10, { token: 'worker-c' })).toEqual(['tok-3']);
    await claims.release(['tok-1'], 'worker-a');
    expect(await store.listDue(100, 10, { token: 'worker-c' })).toEqual(['tok-1']);
    await expect(store.listDue(100, 10, { token: '' })).rejects.toThrow(TypeError);
  });
}

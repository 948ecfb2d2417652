import { expect, it } from 'vitest';
import { isStepfoldError, VersionConflictError } from '../../errors.js';
import type { Snapshot } from '../../snapshot.js';
import type { Store } from '../../store/store.js';
import { makeTestSnapshot } from '../test-snapshot.js';
import type { SuiteContext } from './context.js';

// `delete(id, { version })`: what moving an instance between stores and retention stand on. One
// conditional operation, so a delete at a version a writer just moved on from loses, and the save
// that moved it on is not undone.

/** What `makeTestSnapshot` runs on, as an inbox's `accept` names it. */
const ACCEPT = ['conformance@1@conformance-hash'];

/** Runs `op`; true if it resolved, false if it lost its race (`VERSION_CONFLICT`, or `NOT_FOUND` after a delete won). */
async function wins(op: Promise<unknown>): Promise<boolean> {
  try {
    await op;
    return true;
  } catch (e) {
    if (isStepfoldError(e, 'VERSION_CONFLICT') || isStepfoldError(e, 'NOT_FOUND')) return false;
    throw e;
  }
}

/** Signals waiting for `id`, counted through the inbox's claim by id. */
const waiting = async (store: Store, id: string) =>
  (await store.inbox!.claim(0, 1, [id])).reduce((n, d) => n + d.sent.length, 0);

/** Conditional delete: wins at the stored version only, races a save fairly, takes the inbox with it. */
export function describeConditionalDelete({ options, fresh }: SuiteContext): void {
  const rounds = Math.max(20, Math.round((options.rounds ?? 200) / 2));

  it('delete at the stored version removes it; at another is VERSION_CONFLICT and keeps it; a missing id is false', async () => {
    const store = await fresh();
    await store.create(makeTestSnapshot('cdel-1', { wakeAt: 10 }));
    const v2 = makeTestSnapshot('cdel-1', { version: 2, wakeAt: 10, input: 'v2' });
    await store.save(v2, 1);
    for (const version of [1, 3, 0]) {
      const err = await store.delete('cdel-1', { version }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(VersionConflictError);
      expect(err).toMatchObject({ code: 'VERSION_CONFLICT', expectedVersion: version, actualVersion: 2 });
    }
    expect(await store.load('cdel-1')).toEqual(v2);
    expect(await store.listDue(100, 10)).toEqual(['cdel-1']);
    expect(await store.delete('cdel-1', { version: 2 })).toBe(true);
    expect(await store.load('cdel-1')).toBeNull();
    expect((await store.list({ limit: 10 })).items).toEqual([]);
    expect(await store.listDue(100, 10)).toEqual([]);
    // Gone, or never there: false, as an unconditional delete says.
    expect(await store.delete('cdel-1', { version: 2 })).toBe(false);
    expect(await store.delete('cdel-never', { version: 1 })).toBe(false);
    await expect(store.delete('cdel-1', { version: 1.5 })).rejects.toBeInstanceOf(RangeError);
  });

  it(`a save to v+1 racing a delete at v, ${rounds} rounds: exactly one of them wins`, async () => {
    const store = await fresh();
    const id = 'cdel-race';
    let deletes = 0;
    for (let round = 0; round < rounds; round++) {
      const current = await store.load(id);
      if (current === null) await store.create(makeTestSnapshot(id, { input: { round } }));
      const at = (await store.load(id)) as Snapshot;
      const next = { ...at, version: at.version + 1, input: { round, saved: true } };
      // Alternate who is sent first, so neither wins by order alone.
      const save = () => wins(store.save(next, at.version));
      const del = () => wins(store.delete(id, { version: at.version }));
      const [saved, deleted] =
        round % 2 === 0
          ? await Promise.all([save(), del()])
          : await Promise.all([del(), save()]).then(([d, s]) => [s, d]);
      const after = await store.load(id);
      if (deleted) {
        deletes++;
        expect(saved).toBe(false);
        expect(after).toBeNull();
      } else {
        expect(saved).toBe(true);
        expect(after).toEqual(next);
      }
    }
    // Both outcomes are possible; the invariant above is what matters, not the split.
    expect(deletes).toBeLessThanOrEqual(rounds);
  });

  it('a save racing a delete: the save that lost is NOT_FOUND or VERSION_CONFLICT, never a write', async () => {
    const store = await fresh();
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const id = `cdel-pair-${i}`;
        await store.create(makeTestSnapshot(id));
        const save = store.save(makeTestSnapshot(id, { version: 2 }), 1).then(
          () => 'saved',
          (e: unknown) => (isStepfoldError(e, 'NOT_FOUND') ? 'lost' : Promise.reject(e)),
        );
        const del = store.delete(id, { version: 1 }).then(
          (ok) => (ok ? 'deleted' : 'missing'),
          (e: unknown) => (isStepfoldError(e, 'VERSION_CONFLICT') ? 'conflict' : Promise.reject(e)),
        );
        const [s, d] = await Promise.all([save, del]);
        return { s, d, after: await store.load(id) };
      }),
    );
    for (const { s, d, after } of outcomes) {
      if (s === 'saved') {
        expect(d).toBe('conflict');
        expect(after?.version).toBe(2);
      } else {
        expect(d).toBe('deleted');
        expect(after).toBeNull();
      }
    }
  });

  if (options.capabilities.includes('inbox')) {
    it('signals sent to an instance go with its conditional delete, and only with it', async () => {
      const store = await fresh();
      await store.create(makeTestSnapshot('cdel-box'));
      const signal = { type: 'signal' as const, name: 'go', id: 'cdel-s1', at: 1 };
      expect(await store.inbox!.send('cdel-box', signal, ACCEPT)).toBe(true);
      expect(await waiting(store, 'cdel-box')).toBe(1);
      await expect(store.delete('cdel-box', { version: 7 })).rejects.toMatchObject({
        code: 'VERSION_CONFLICT',
      });
      expect(await waiting(store, 'cdel-box')).toBe(1);
      expect(await store.delete('cdel-box', { version: 1 })).toBe(true);
      // The id is free again, with an empty inbox: nothing of the old instance reaches the new one.
      await store.create(makeTestSnapshot('cdel-box'));
      expect(await waiting(store, 'cdel-box')).toBe(0);
    });
  }
}

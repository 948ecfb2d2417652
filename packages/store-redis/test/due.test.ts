import { makeTestSnapshot } from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore, DEFAULT_CLAIM_MS } from '../src/index.js';
import { describeClaims } from './claims-suite.js';
import { dropPrefix, keysUnder, openStore, requireServer, type TestStore, testClient } from './server.js';

const client = testClient();
const opened: TestStore[] = [];

function open(label: string, options: { claimMs?: number; maxSkippedClaims?: number } = {}): TestStore {
  const t = openStore(client, label, options);
  opened.push(t);
  return t;
}

const wf = (name: string) => ({ name, version: 1, hash: 'h' });

beforeAll(() => requireServer(client));
afterAll(async () => {
  for (const t of opened) await dropPrefix(client, t.prefix);
  client.disconnect();
});

describe('redis adapter: claims', () => {
  it('a claim lasts claimMs against listDue’s now, then the id is due again', async () => {
    const { store, prefix } = open('claim-expiry', { claimMs: 1000 });
    expect(store.claims).toBeDefined();
    expect(store.claimMs).toBe(1000);
    for (const id of ['c-1', 'c-2']) await store.create(makeTestSnapshot(id, { wakeAt: 10 }));
    expect(await store.listDue(100, 10)).toEqual(['c-1', 'c-2']);
    // The claim is the due entry's score: its expiry.
    const due = () => client.zrange(`${prefix}due`, 0, -1, 'WITHSCORES');
    expect(await due()).toEqual(['c-1', '1100', 'c-2', '1100']);
    expect(await store.listDue(1099, 10)).toEqual([]);
    // Lapsed at 1100: due again, and claimed again until 2100.
    expect(await store.listDue(1100, 10)).toEqual(['c-1', 'c-2']);
    expect(await due()).toEqual(['c-1', '2100', 'c-2', '2100']);
    expect(await store.listDue(2099, 10, { workflow: 'conformance' })).toEqual([]);
    expect(await store.listDue(2100, 10, { workflow: 'conformance' })).toEqual(['c-1', 'c-2']);
  });

  it('defaults to 30 s and refuses a claimMs that is not a non-negative integer', () => {
    expect(DEFAULT_CLAIM_MS).toBe(30_000);
    expect(createRedisStore({ client }).claimMs).toBe(30_000);
    expect(createRedisStore({ client, claimMs: 0 }).claimMs).toBe(0);
    for (const claimMs of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createRedisStore({ client, claimMs }), String(claimMs)).toThrow(RangeError);
    }
    for (const maxSkippedClaims of [-1, 1.5, Number.NaN]) {
      expect(() => createRedisStore({ client, maxSkippedClaims }), String(maxSkippedClaims)).toThrow(
        RangeError,
      );
    }
  });

  it('concurrent pollers get disjoint batches that cover every due id', async () => {
    const { store } = open('disjoint');
    const ids = Array.from({ length: 40 }, (_, i) => `p-${String(i).padStart(2, '0')}`);
    for (const id of ids) await store.create(makeTestSnapshot(id, { wakeAt: 1 }));
    const batches = await Promise.all(Array.from({ length: 8 }, () => store.listDue(50, 5)));
    const all = batches.flat();
    expect(new Set(all).size).toBe(all.length);
    expect(all.sort()).toEqual(ids);
    expect(await store.listDue(50, 100)).toEqual([]);
  });

  it('a save, a delete or a release ends a claim; a failed save does not', async () => {
    const { store, prefix } = open('ends');
    for (const id of ['e-1', 'e-2', 'e-3', 'e-4']) await store.create(makeTestSnapshot(id, { wakeAt: 1 }));
    expect(await store.listDue(10, 10)).toEqual(['e-1', 'e-2', 'e-3', 'e-4']);
    await store.save(makeTestSnapshot('e-1', { version: 2, wakeAt: 2 }), 1);
    await expect(store.save(makeTestSnapshot('e-2', { version: 3, wakeAt: 2 }), 2)).rejects.toMatchObject({
      code: 'VERSION_CONFLICT',
    });
    expect(await store.delete('e-3')).toBe(true);
    await store.claims.release([]);
    await store.claims.release(['e-4', 'never-claimed']);
    // e-2 is still claimed (its save failed): its entry sits at the expiry; the others at their wake time.
    expect(await client.zrange(`${prefix}due`, 0, -1, 'WITHSCORES')).toEqual([
      'e-4',
      '1',
      'e-1',
      '2',
      'e-2',
      '30010',
    ]);
    expect(await store.listDue(10, 10)).toEqual(['e-4', 'e-1']);
    await expect(store.claims.release(['not an id'])).rejects.toMatchObject({ code: 'INVALID_ID' });
  });
});

describe('redis adapter: due lanes', () => {
  it('keeps each workflow’s lane as the instance moves between workflows, wake times and deletion', async () => {
    const { store, prefix } = open('lanes');
    const lane = (name: string) => client.zrange(`${prefix}due-workflow:${name}`, 0, -1, 'WITHSCORES');
    await store.create(makeTestSnapshot('l-1', { workflow: wf('alpha'), wakeAt: 5 }));
    await store.create(makeTestSnapshot('l-2', { workflow: wf('alpha'), wakeAt: null }));
    expect(await lane('alpha')).toEqual(['l-1', '5']);

    // Workflow and wake time change together: out of the old lane, into the new one.
    await store.save(makeTestSnapshot('l-1', { version: 2, workflow: wf('beta'), wakeAt: 6 }), 1);
    expect(await lane('alpha')).toEqual([]);
    expect(await lane('beta')).toEqual(['l-1', '6']);
    expect(await store.listDue(100, 10, { workflow: 'alpha' })).toEqual([]);
    expect(await store.listDue(100, 10, { workflow: 'beta' })).toEqual(['l-1']);

    // Workflow changes while claimed, status unchanged: the claim ends, the new lane serves it.
    await store.save(makeTestSnapshot('l-1', { version: 3, workflow: wf('gamma'), wakeAt: 7 }), 2);
    expect(await lane('beta')).toEqual([]);
    expect(await store.listDue(100, 10, { workflow: 'gamma' })).toEqual(['l-1']);

    // No wake time: out of its lane; one comes: into it.
    await store.save(makeTestSnapshot('l-1', { version: 4, workflow: wf('gamma'), wakeAt: null }), 3);
    await store.save(makeTestSnapshot('l-2', { version: 2, workflow: wf('alpha'), wakeAt: 9 }), 1);
    expect(await lane('gamma')).toEqual([]);
    expect(await lane('alpha')).toEqual(['l-2', '9']);
    expect(await store.delete('l-2')).toBe(true);
    expect(await lane('alpha')).toEqual([]);
    expect(await store.delete('l-1')).toBe(true);
    // Every claim ended with a save, so no claims key is left either.
    expect(await keysUnder(client, prefix)).toEqual([]);
  });
});

describeClaims('one server', client);

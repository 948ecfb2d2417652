import type { Store } from '@stepfold/engine';
import { makeTestSnapshot } from '@stepfold/engine';
import type { Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { CLAIM_DUE, LIST_DUE } from '../src/due-scripts.js';
import { keysFor, type RedisStoreOptions } from '../src/index.js';
import { runScript } from '../src/scripts.js';
import { dropPrefix, openStore } from './server.js';

const wf = (name: string) => ({ name, version: 1, hash: 'h' });
const pad = (i: number, n = 4) => String(i).padStart(n, '0');

/**
 * Claims on the due indexes, on one server or a cluster: a claim moves the instance's entries to
 * its expiry, so claimed instances never hold back the unclaimed ones behind them.
 */
export function describeClaims(name: string, client: Redis | Cluster): void {
  const prefixes: string[] = [];
  const open = (label: string, options: Omit<RedisStoreOptions, 'client' | 'prefix'> = {}) => {
    const t = openStore(client, label, options);
    prefixes.push(t.prefix);
    const keys = keysFor(t.prefix);
    const scores = (key: string) => client.zrange(key, 0, -1, 'WITHSCORES');
    const record = (id: string) => client.hmget(keys.instance(id), 'claimVersion', 'claimWake');
    return {
      store: t.store,
      keys,
      scores,
      record,
    };
  };
  const create = (store: Store, ids: string[], wakeAt: (i: number) => number, workflow = 'clog') =>
    Promise.all(
      ids.map((id, i) => store.create(makeTestSnapshot(id, { workflow: wf(workflow), wakeAt: wakeAt(i) }))),
    );

  describe(`redis adapter: claims on the due order (${name})`, () => {
    afterAll(async () => {
      for (const p of prefixes) await dropPrefix(client, p);
    });

    it('2,000 claimed at the head: a poll of 10 reads 10 entries and gets the unclaimed ones behind them', async () => {
      const { store, keys } = open('clog');
      const head = Array.from({ length: 2000 }, (_, i) => `h-${pad(i)}`);
      const free = Array.from({ length: 30 }, (_, i) => `u-${pad(i)}`);
      await create(store, head, (i) => i);
      await create(store, free, (i) => 5000 + i);
      expect(await store.listDue(10_000, 2000)).toEqual(head);

      // The scripts themselves report how many index entries they read: `limit`, not 2,000 more.
      const args = ['10000', 10, '40000', 1000, keys.prefix, 'poller'];
      // The last argument: the lane's workflow ('' for every workflow).
      const global = (await runScript(
        client,
        LIST_DUE,
        [keys.due, keys.due, keys.claims],
        [...args, ''],
      )) as unknown[];
      expect(global).toEqual([10, ...free.slice(0, 10)]);
      const lane = keys.dueWorkflow('clog');
      const byLane = (await runScript(
        client,
        CLAIM_DUE,
        [lane, keys.due, keys.claims],
        [...args, 'clog'],
      )) as unknown[];
      expect(byLane[0]).toBe(10);
      expect(byLane.filter((_, i) => i % 2 === 1)).toEqual(free.slice(10, 20));
      // And through the store, one call, a full batch.
      expect(await store.listDue(10_000, 10)).toEqual(free.slice(20));
      expect(await store.listDue(10_000, 10)).toEqual([]);
      expect(await client.exists(keys.claims)).toBe(0);
    });

    it('moves a claimed entry in due and its lane to the expiry; release and save put the wake time back', async () => {
      const { store, keys, scores, record } = open('move', { claimMs: 1000 });
      await create(store, ['a-1', 'a-2'], (i) => [10, 20][i]!, 'alpha');
      await create(store, ['b-1'], () => 15, 'beta');
      expect(await store.listDue(100, 10)).toEqual(['a-1', 'b-1', 'a-2']);
      expect(await scores(keys.due)).toEqual(['a-1', '1100', 'a-2', '1100', 'b-1', '1100']);
      expect(await scores(keys.dueWorkflow('alpha'))).toEqual(['a-1', '1100', 'a-2', '1100']);
      expect(await scores(keys.dueWorkflow('beta'))).toEqual(['b-1', '1100']);
      expect(await record('a-1')).toEqual(['1', '10']);
      expect(await store.listDue(1099, 10, { workflow: 'alpha' })).toEqual([]);

      // Lapsed at 1100 and claimed again: the record keeps the wake time it first moved from.
      expect(await store.listDue(1100, 1, { workflow: 'alpha', leaseMs: 500 })).toEqual(['a-1']);
      expect(await scores(keys.due)).toEqual(['a-2', '1100', 'b-1', '1100', 'a-1', '1600']);
      expect(await record('a-1')).toEqual(['1', '10']);

      await store.claims.release(['a-1', 'b-1', 'never-claimed']);
      await store.save(makeTestSnapshot('a-2', { version: 2, workflow: wf('alpha'), wakeAt: 50 }), 1);
      expect(await scores(keys.due)).toEqual(['a-1', '10', 'b-1', '15', 'a-2', '50']);
      expect(await scores(keys.dueWorkflow('alpha'))).toEqual(['a-1', '10', 'a-2', '50']);
      expect(await scores(keys.dueWorkflow('beta'))).toEqual(['b-1', '15']);
      for (const id of ['a-1', 'a-2', 'b-1']) expect(await record(id)).toEqual([null, null]);
      expect(await store.listDue(100, 10)).toEqual(['a-1', 'b-1', 'a-2']);
    });

    it('release puts back exact wake times: negative, fractional, tiny', async () => {
      const { store, keys, scores } = open('exact');
      const wakes = [-1.5, 0.25, 5e-324];
      await create(store, ['x-1', 'x-2', 'x-3'], (i) => wakes[i]!);
      const before = await scores(keys.due);
      expect(await store.listDue(1, 10)).toEqual(['x-1', 'x-3', 'x-2']);
      await store.claims.release(['x-1', 'x-2', 'x-3']);
      expect(await scores(keys.due)).toEqual(before);
      expect(await store.listDue(1, 10)).toEqual(['x-1', 'x-3', 'x-2']);
    });

    it('a claim writes its token with it: release ends only that owner’s claim, a save any', async () => {
      const { store, keys, scores, record } = open('token');
      const token = (id: string) => client.hget(keys.instance(id), 'claimToken');
      await create(store, ['t-1', 't-2'], () => 10);
      expect(await store.listDue(100, 1, { token: 'w-a' })).toEqual(['t-1']);
      expect((await store.claims.claimDue(100, 1, { token: 'w-b' })).map((s) => s.id)).toEqual(['t-2']);
      expect([await token('t-1'), await token('t-2')]).toEqual(['w-a', 'w-b']);
      await store.claims.release(['t-1', 't-2'], 'w-b');
      expect(await token('t-1')).toBe('w-a');
      expect([await token('t-2'), ...(await record('t-2'))]).toEqual([null, null, null]);
      expect(await scores(keys.due)).toEqual(['t-2', '10', 't-1', '30100']);
      // Lapsed and claimed again: the new owner's, with the wake time first moved from kept.
      expect(await store.listDue(30_100, 10, { token: 'w-c' })).toEqual(['t-2', 't-1']);
      await store.claims.release(['t-1'], 'w-a');
      expect([await token('t-1'), ...(await record('t-1'))]).toEqual(['w-c', '1', '10']);
      await store.save(makeTestSnapshot('t-1', { version: 2, workflow: wf('clog'), wakeAt: 20 }), 1);
      expect([await token('t-1'), ...(await record('t-1'))]).toEqual([null, null, null]);
      await store.claims.release(['t-2'], 'w-c');
      expect(await scores(keys.due)).toEqual(['t-2', '10', 't-1', '20']);
    });

    it('a claim record that a later write left behind (an older adapter’s save) is not put back', async () => {
      const { store, keys, scores, record } = open('stale');
      await create(store, ['m-1', 'm-2'], () => 10);
      expect(await store.listDue(100, 10)).toEqual(['m-1', 'm-2']);
      // What a save of the previous version does: the hash and the due entries, not the record.
      for (const id of ['m-1', 'm-2']) {
        await client.hset(keys.instance(id), 'version', '2');
        await client.zadd(keys.due, 40, id);
        await client.zadd(keys.dueWorkflow('clog'), 40, id);
      }
      await store.claims.release(['m-1']);
      expect(await record('m-1')).toEqual([null, null]);
      expect(await store.listDue(100, 1)).toEqual(['m-1']);
      // m-2 is claimed again from 40, its wake time now: that is what release puts back.
      expect(await store.listDue(100, 1)).toEqual(['m-2']);
      expect(await record('m-2')).toEqual(['2', '40']);
      await store.claims.release(['m-2']);
      expect(await scores(keys.dueWorkflow('clog'))).toEqual(['m-2', '40', 'm-1', '30100']);
    });

    it('honours claims an older version left in the claims set, moving each out of the head when met', async () => {
      const { store, keys, scores, record } = open('legacy', { claimMs: 1000, maxSkippedClaims: 2 });
      const ids = ['o-a', 'o-b', 'o-c', 'o-d', 'o-e', 'o-f', 'o-g'];
      await create(store, ids, (i) => i);
      // Old-scheme claims: id scored with its expiry, the due entry left at its wake time.
      await client.zadd(keys.claims, 5000, 'o-a', 5000, 'o-b', 5000, 'o-c', 5000, 'o-d', 50, 'o-f');
      expect((await store.claims.claimDue(100, 5, { ids: ['o-a', 'o-g'] })).map((s) => s.id)).toEqual([
        'o-g',
      ]);
      // o-f's claim lapsed at 50. Four live ones lead; a call reads limit + 2 entries while any are
      // left, moving each one it meets to its expiry: the first call returns none, the next one.
      expect(await store.listDue(100, 1)).toEqual([]);
      expect(await store.listDue(100, 1)).toEqual(['o-e']);
      expect(await scores(keys.due)).toEqual(
        ['o-f', 5, 'o-e', 1100, 'o-g', 1100, 'o-a', 5000, 'o-b', 5000, 'o-c', 5000, 'o-d', 5000].map(String),
      );
      expect(await scores(keys.dueWorkflow('clog'))).toEqual(await scores(keys.due));
      expect(await record('o-a')).toEqual(['1', '0']);
      expect(await client.exists(keys.claims)).toBe(0);
      expect(await store.listDue(100, 3)).toEqual(['o-f']);
      // An old worker's claim has no token: no release ends it, moved or not yet met; it lapses.
      await store.claims.release(['o-a', 'o-c']);
      await store.create(makeTestSnapshot('o-h', { workflow: wf('clog'), wakeAt: 7 }));
      await client.zadd(keys.claims, 9000, 'o-h');
      await store.claims.release(['o-h']);
      expect(await store.listDue(200, 10)).toEqual([]);
      expect(await client.zscore(keys.due, 'o-h')).toBe('9000');
      expect(await client.exists(keys.claims)).toBe(0);
      expect(await store.listDue(5000, 20, { leaseMs: 100_000 })).toEqual([
        'o-e',
        'o-f',
        'o-g',
        'o-a',
        'o-b',
        'o-c',
        'o-d',
      ]);
      expect(await store.listDue(9000, 20)).toEqual(['o-h']);
    });

    it("an instance with a fairness key lives in its key's sets, scored as due, the key by its head", async () => {
      const { store, keys, scores, record } = open('fair', { claimMs: 1000 });
      const keyed = (id: string, fairKey: string, wakeAt: number | null, version = 1, workflow = 'clog') =>
        makeTestSnapshot(id, { workflow: wf(workflow), fairKey, wakeAt, version });
      await store.create(keyed('k-1', 'acme', 10));
      await store.create(keyed('k-2', 'acme', 20));
      await store.create(keyed('k-3', 'zeta', 15, 1, 'other'));
      await store.create(makeTestSnapshot('k-4', { workflow: wf('clog'), wakeAt: 30 }));
      // Only the instance without a key is in due and its lane.
      expect(await scores(keys.due)).toEqual(['k-4', '30']);
      expect(await scores(keys.dueWorkflow('clog'))).toEqual(['k-4', '30']);
      expect(await scores(keys.fairDue('acme'))).toEqual(['k-1', '10', 'k-2', '20']);
      expect(await scores(keys.fairLane('clog', 'acme'))).toEqual(['k-1', '10', 'k-2', '20']);
      expect(await scores(keys.fairKeys)).toEqual(['acme', '10', 'zeta', '15']);
      expect(await scores(keys.fairKeysLane('clog'))).toEqual(['acme', '10']);
      expect(await scores(keys.fairKeysLane('other'))).toEqual(['zeta', '15']);

      // A claim moves the entry to its expiry and the key to its next head; release puts both back.
      expect(await store.listDue(100, 1, { workflow: 'clog' })).toEqual(['k-1']);
      expect(await scores(keys.fairDue('acme'))).toEqual(['k-2', '20', 'k-1', '1100']);
      expect(await scores(keys.fairKeys)).toEqual(['zeta', '15', 'acme', '20']);
      expect(await record('k-1')).toEqual(['1', '10']);
      await store.claims.release(['k-1']);
      expect(await scores(keys.fairLane('clog', 'acme'))).toEqual(['k-1', '10', 'k-2', '20']);
      expect(await scores(keys.fairKeysLane('clog'))).toEqual(['acme', '10']);

      // A save moves it; one without a wake time, another key, or none takes it out of the old sets.
      await store.save(keyed('k-1', 'acme', 50, 2), 1);
      expect(await scores(keys.fairKeys)).toEqual(['zeta', '15', 'acme', '20']);
      await store.save(keyed('k-2', 'acme', null, 2), 1);
      expect(await scores(keys.fairDue('acme'))).toEqual(['k-1', '50']);
      await store.save(keyed('k-1', 'bolt', 40, 3), 2);
      expect(await client.exists(keys.fairDue('acme'), keys.fairLane('clog', 'acme'))).toBe(0);
      expect(await scores(keys.fairKeys)).toEqual(['zeta', '15', 'bolt', '40']);
      await store.save(makeTestSnapshot('k-3', { workflow: wf('other'), wakeAt: 15, version: 2 }), 1);
      expect(await scores(keys.fairKeys)).toEqual(['bolt', '40']);
      expect(await scores(keys.due)).toEqual(['k-3', '15', 'k-4', '30']);
      expect(await client.hget(keys.instance('k-3'), 'fairKey')).toBeNull();
      // A delete takes it out of its key's sets; the key goes with its last instance.
      expect(await store.delete('k-1')).toBe(true);
      expect(await client.exists(keys.fairDue('bolt'), keys.fairKeys, keys.fairKeysLane('clog'))).toBe(0);
    });

    it("a poll reads about limit entries of one key's 2,000 due, and finds another key's one", async () => {
      const { store, keys } = open('fair-flood');
      const flood = Array.from({ length: 2000 }, (_, i) => `f-${pad(i)}`);
      await Promise.all(
        flood.map((id, i) =>
          store.create(makeTestSnapshot(id, { workflow: wf('clog'), fairKey: 'big', wakeAt: i })),
        ),
      );
      await store.create(makeTestSnapshot('light', { workflow: wf('clog'), fairKey: 'small', wakeAt: 5000 }));
      const args = ['10000', 10, '40000', 1000, keys.prefix, 'poller'];
      for (const [read, lane] of [
        [keys.due, ''],
        [keys.dueWorkflow('clog'), 'clog'],
      ] as const) {
        const reply = (await runScript(
          client,
          LIST_DUE,
          [read, keys.due, keys.claims],
          [...args, lane],
        )) as unknown[];
        // Nine of the flood (limit - 2 keys + 1) and the light one, taken from 2,001 due.
        expect(reply[0]).toBe(10);
        expect(reply.slice(1)).toEqual([flood[0], 'light', ...flood.slice(1, 9)]);
        await store.claims.release(reply.slice(1) as string[], 'poller');
      }
    });
  });
}

import { makeTestSnapshot } from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysFor } from '../src/index.js';
import { dropPrefix, openStore, requireServer, type TestStore, testClient } from './server.js';

// Data the previous version of this adapter left: the same keys and hash fields, without the
// claim's token. Redis has no schema: setup only loads the scripts, and the new field is written
// by the next claim.

const client = testClient();
const opened: TestStore[] = [];

function open(label: string): TestStore & { keys: ReturnType<typeof keysFor> } {
  const t = openStore(client, label);
  opened.push(t);
  return { ...t, keys: keysFor(t.prefix) };
}

beforeAll(() => requireServer(client));
afterAll(async () => {
  for (const t of opened) await dropPrefix(client, t.prefix);
  client.disconnect();
});

describe('redis adapter: a store the previous version wrote', () => {
  it('a claim it took (no token) is released by no token: it lapses, and the next claim records its owner', async () => {
    const { store, keys } = open('old-claim');
    await store.create(makeTestSnapshot('old-1', { wakeAt: 10 }));
    // The previous version's claim: the due entries moved to the expiry, the wake time kept, no token.
    await client.hset(keys.instance('old-1'), 'claimVersion', '1', 'claimWake', '10');
    await client.zadd(keys.due, 5000, 'old-1');
    await client.zadd(keys.dueWorkflow('conformance'), 5000, 'old-1');
    await store.setup();
    await store.setup();
    const fields = () => client.hmget(keys.instance('old-1'), 'claimVersion', 'claimWake', 'claimToken');

    await store.claims.release(['old-1']);
    await store.claims.release(['old-1'], 'anyone');
    expect(await fields()).toEqual(['1', '10', null]);
    expect(await client.zscore(keys.due, 'old-1')).toBe('5000');
    expect(await store.listDue(4999, 10)).toEqual([]);

    expect(await store.listDue(5000, 10, { token: 'new-worker' })).toEqual(['old-1']);
    expect(await fields()).toEqual(['1', '10', 'new-worker']);
    await store.claims.release(['old-1'], 'new-worker');
    expect(await fields()).toEqual([null, null, null]);
    expect(await client.zscore(keys.due, 'old-1')).toBe('10');
    expect(await client.zscore(keys.dueWorkflow('conformance'), 'old-1')).toBe('10');
  });

  it('signals it wrote are claimed, consumed and numbered on from as the new ones', async () => {
    const { store, keys } = open('old-inbox');
    const stored = makeTestSnapshot('old-2', { status: 'waiting' });
    await store.create(stored);
    const event = { type: 'signal', name: 'go', payload: { n: 1 }, at: 1 };
    // The previous version's send: the event under its seq, the counter, the poll's due time.
    await client.hset(keys.sent('old-2'), '7', JSON.stringify(event));
    await client.set(keys.sentSeq, '7');
    await client.zadd(keys.sentDue, 1001, 'old-2');

    const accept = ['conformance@1@conformance-hash'];
    expect(
      await store.inbox.send('old-2', { type: 'signal', name: 'go', payload: { n: 2 }, at: 2 }, accept),
    ).toBe(true);
    const [due] = await store.inbox.claim(5000, 10);
    expect(due?.snapshot).toEqual(stored);
    expect(due?.sent.map((s) => [s.seq, (s.event as { payload: unknown }).payload])).toEqual([
      [7, { n: 1 }],
      [8, { n: 2 }],
    ]);
    await store.save({ ...stored, version: 2 }, 1, { consumed: due!.sent });
    expect(await client.exists(keys.sent('old-2'), keys.sentDue, keys.sentClaims)).toBe(0);
  });
});

import { DeleteTableCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import {
  makeTestSnapshot,
  parseEvent,
  type Snapshot,
  snapshotOfSize,
  type WorkflowEvent,
} from '@stepfold/engine';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sortableNumber } from '../src/encode.js';
import {
  createDynamoStore,
  DEFAULT_DUE_SHARDS,
  DEFAULT_MAX_SNAPSHOT_BYTES,
  MAX_WAITING,
  shardOf,
} from '../src/index.js';
import { requireServer, testClient } from './server.js';

// The commands the store sends, by name, as DynamoDB sees them.
const sent: string[] = [];
const client = testClient();
client.middlewareStack.add(
  (next, context) => async (args) => {
    sent.push(context.commandName ?? '?');
    return next(args);
  },
  { step: 'initialize', name: 'recordCommands' },
);
const table = `stepfold_inbox_${process.pid}`;
const store = createDynamoStore({ client, table, claimMs: 5000, setup: { pollMs: 50 } });
const inbox = store.inbox!;
const ACCEPT = ['wf@1@h'];

const snap = (id: string, patch: Partial<Snapshot> = {}) =>
  makeTestSnapshot(id, { workflow: { name: 'wf', version: 1, hash: 'h' }, status: 'waiting', ...patch });
const signal = (at: number, payload: unknown = null): WorkflowEvent =>
  parseEvent({ type: 'signal', at, name: 'go', payload });
const item = async (id: string) =>
  (await client.send(new GetItemCommand({ TableName: table, Key: { id: { S: id } }, ConsistentRead: true })))
    .Item;
const waiting = async (id: string) => (await inbox.claim(0, 1, [id]))[0]?.sent ?? [];

beforeAll(async () => {
  await requireServer(client);
  await store.setup();
});
beforeEach(() => {
  sent.length = 0;
});
afterAll(async () => {
  await client.send(new DeleteTableCommand({ TableName: table })).catch(() => {});
  client.destroy();
});

describe('dynamo inbox', () => {
  it('a send is one UpdateItem appending to the item’s list, refused unless the instance runs an accepted definition', async () => {
    await store.create(snap('one'));
    sent.length = 0;
    expect(await inbox.send('one', signal(1000, { n: 1 }), ACCEPT)).toBe(true);
    expect(sent).toEqual(['UpdateItemCommand']);
    const due = sortableNumber(2000); // at + SENT_CLAIM_AFTER_MS
    expect(await item('one')).toMatchObject({
      definition: { S: 'wf@1@h' },
      sent: { L: [{ M: { e: { S: JSON.stringify(signal(1000, { n: 1 })) }, d: { S: due } } }] },
      sentBase: { N: '1' },
      sentKey: { S: due },
      sentShard: { S: `sent#${shardOf('one', DEFAULT_DUE_SHARDS)}` },
    });
    // A second one: seqs in send order, the key stays at the oldest.
    expect(await inbox.send('one', signal(1500, { n: 2 }), ACCEPT)).toBe(true);
    expect((await item('one'))?.['sentKey']).toEqual({ S: due });
    expect(await waiting('one')).toEqual([
      { seq: 1, event: signal(1000, { n: 1 }) },
      { seq: 2, event: signal(1500, { n: 2 }) },
    ]);
    // Refused in the same one request, writing nothing: another definition, a finished or missing
    // instance. A finished one on an accepted definition is told by the item the refusal returns.
    sent.length = 0;
    expect(await inbox.send('one', signal(1600), ['wf@2@h', 'other@1@h'])).toBe(false);
    await store.create(snap('done', { status: 'completed' }));
    sent.length = 0;
    expect(await inbox.send('done', signal(1600), ACCEPT)).toBe('completed');
    expect(await inbox.send('done', signal(1600), ['wf@2@h'])).toBe(false);
    expect(await inbox.send('missing', signal(1600), ACCEPT)).toBe(false);
    expect(sent).toEqual(['UpdateItemCommand', 'UpdateItemCommand', 'UpdateItemCommand']);
    expect(await waiting('one')).toHaveLength(2);
    expect((await item('done'))?.['sent']).toBeUndefined();
  });

  it('a save never touches the inbox; a consuming save takes the oldest off in the same UpdateItem', async () => {
    await store.create(snap('eat', { wakeAt: 5 }));
    for (const n of [1, 2, 3]) await inbox.send('eat', signal(1000 * n, n), ACCEPT);
    sent.length = 0;
    await store.save(snap('eat', { version: 2, input: 'plain' }), 1);
    expect(sent).toEqual(['UpdateItemCommand']);
    expect((await item('eat'))?.['wakeAt']).toBeUndefined();
    const three = await waiting('eat');
    expect(three.map((s) => s.seq)).toEqual([1, 2, 3]);

    sent.length = 0;
    await store.save(snap('eat', { version: 3 }), 2, { consumed: three.slice(0, 2) });
    expect(sent).toEqual(['UpdateItemCommand']);
    expect(await item('eat')).toMatchObject({
      sent: { L: [{ M: { d: { S: sortableNumber(4000) } } }] },
      sentBase: { N: '3' },
      sentKey: { S: sortableNumber(4000) }, // the next signal's own time
    });
    // Not the oldest waiting (seq 3 is): refused as a lost race, nothing written.
    await expect(
      store.save(snap('eat', { version: 4 }), 3, { consumed: [{ seq: 4, event: signal(1) }] }),
    ).rejects.toMatchObject({ code: 'VERSION_CONFLICT' });
    await store.save(snap('eat', { version: 4 }), 3, { consumed: three.slice(2) });
    expect(await item('eat')).toMatchObject({ sent: { L: [] }, sentBase: { N: '4' }, sentKey: { S: '~' } });
    // Seqs go on from the base.
    await inbox.send('eat', signal(9000), ACCEPT);
    expect((await waiting('eat')).map((s) => s.seq)).toEqual([4]);
    expect((await item('eat'))?.['sentKey']).toEqual({ S: sortableNumber(10_000) });
  });

  it('a consuming save matching a snapshot compares the texts, the most signals at once included', async () => {
    await store.create(snap('full'));
    for (let n = 0; n < MAX_WAITING; n++) expect(await inbox.send('full', signal(n, n), ACCEPT)).toBe(true);
    expect(await inbox.send('full', signal(MAX_WAITING), ACCEPT)).toBe(false);
    const all = await waiting('full');
    expect(all).toHaveLength(MAX_WAITING);
    const stored = (await store.load('full'))!;
    const forged = all.map((s, i) => (i === 57 ? { ...s, event: signal(999_999, 57) } : s));
    await expect(
      store.save(snap('full', { version: 2 }), 1, { consumed: forged, matches: stored }),
    ).rejects.toMatchObject({ code: 'NOTICE_MISMATCH' });
    await expect(
      store.save(snap('full', { version: 2 }), 1, { consumed: all, matches: { ...stored, input: 'x' } }),
    ).rejects.toMatchObject({ code: 'NOTICE_MISMATCH' });
    expect(await waiting('full')).toHaveLength(MAX_WAITING);
    await store.save(snap('full', { version: 2 }), 1, { consumed: all, matches: stored });
    expect(await waiting('full')).toEqual([]);
    expect(await inbox.send('full', signal(1), ACCEPT)).toBe(true);
  });

  it('the inbox’s claim moves the instance’s key to the claim’s end; a send while claimed keeps it', async () => {
    await store.create(snap('lease'));
    await inbox.send('lease', signal(100_000), ACCEPT); // claimable from 101 000
    const mine = async (now: number) =>
      (await inbox.claim(now, 100)).filter((r) => r.snapshot.id === 'lease');
    expect(await mine(100_999)).toEqual([]);
    expect((await mine(101_000)).map((r) => r.sent.length)).toEqual([1]);
    const until = sortableNumber(106_000); // now + claimMs
    expect(await item('lease')).toMatchObject({
      sentKey: { S: until },
      sent: { L: [{ M: { d: { S: until } } }] },
    });
    await inbox.send('lease', signal(100_500), ACCEPT);
    expect((await item('lease'))?.['sentKey']).toEqual({ S: until });
    expect(await mine(105_999)).toEqual([]);
    expect((await mine(106_000)).map((r) => r.sent.map((s) => s.seq))).toEqual([[1, 2]]);
  });

  it('drop removes the leading run of the seqs given, only at the version given', async () => {
    await store.create(snap('drop'));
    for (const n of [1, 2, 3]) await inbox.send('drop', signal(n), ACCEPT);
    await inbox.drop('drop', [1, 2], 2);
    expect(await waiting('drop')).toHaveLength(3);
    // Seq 3 follows a gap: only 1 goes.
    await inbox.drop('drop', [1, 3], 1);
    expect((await waiting('drop')).map((s) => s.seq)).toEqual([2, 3]);
    await inbox.drop('drop', [1, 2, 3], 1);
    expect(await item('drop')).toMatchObject({ sent: { L: [] }, sentBase: { N: '4' }, sentKey: { S: '~' } });
  });

  it('a send with no room left in the 400 KB item is refused; a save with none beside waiting signals is SNAPSHOT_TOO_LARGE', async () => {
    const wf = { name: 'wf', version: 1, hash: 'h' };
    await store.create(
      snapshotOfSize('big', DEFAULT_MAX_SNAPSHOT_BYTES, { workflow: wf, status: 'waiting' }),
    );
    expect(await inbox.send('big', signal(1, 'x'.repeat(2000)), ACCEPT)).toBe(false);
    expect((await item('big'))?.['sent']).toBeUndefined();
    expect(await inbox.send('big', signal(1, 'small'), ACCEPT)).toBe(true);

    await store.create(snapshotOfSize('grow', 300_000, { workflow: wf, status: 'waiting' }));
    for (const n of [1, 2, 3])
      expect(await inbox.send('grow', signal(n, 'y'.repeat(30_000)), ACCEPT)).toBe(true);
    const bigger = snapshotOfSize('grow', DEFAULT_MAX_SNAPSHOT_BYTES, { workflow: wf, version: 2 });
    const e = await store.save(bigger, 1).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'SNAPSHOT_TOO_LARGE', limit: 400 * 1024 });
    expect((e as { bytes: number }).bytes).toBeGreaterThan(400 * 1024);
    expect((await store.load('grow'))?.version).toBe(1);
    // Consuming them makes the room.
    await store.save(bigger, 1, { consumed: await waiting('grow') });
    expect((await store.load('grow'))?.version).toBe(2);
  });
});

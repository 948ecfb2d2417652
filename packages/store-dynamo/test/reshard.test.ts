import { DeleteTableCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { createRunner, defineWorkflow, type Store } from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoStore, reshardDue } from '../src/index.js';
import { requireServer, testClient } from './server.js';

// Changing dueShards online (8 to 1, the old default to the new): every process first polls the
// eight shards and writes one, reshardDue moves what is left while a worker ticks instances, and
// a store on one shard then finds every due instance and every sent signal.

const client = testClient();
const table = `stepfold_reshard_${process.pid}`;
const napping = defineWorkflow({
  name: 'napping',
  version: 1,
  start: 'nap',
  steps: { nap: { kind: 'sleep', ms: 1000, next: 'done' }, done: { kind: 'task', handler: 'done' } },
});
const held = defineWorkflow({
  name: 'held',
  version: 1,
  start: 'hold',
  steps: { hold: { kind: 'wait', signal: 'go' } },
});
let now = 0;
const runnerOn = (store: Store) =>
  createRunner({ store, workflows: [napping, held], handlers: { done: () => null }, clock: () => now });
const item = async (id: string) =>
  (await client.send(new GetItemCommand({ TableName: table, Key: { id: { S: id } }, ConsistentRead: true })))
    .Item;

beforeAll(() => requireServer(client));
afterAll(async () => {
  await client.send(new DeleteTableCommand({ TableName: table })).catch(() => {});
  client.destroy();
});

describe('dynamo reshardDue', () => {
  it('moves a table from eight due shards to one while instances run, and loses no due instance or sent signal', async () => {
    const eight = createDynamoStore({ client, table, dueShards: 8, setup: { pollMs: 50 } });
    await eight.setup();
    const before = runnerOn(eight);
    const early = Array.from({ length: 40 }, (_, i) => `early-${i}`);
    const waiting = Array.from({ length: 12 }, (_, i) => `held-${i}`);
    for (const id of early) await before.start('napping', id);
    for (const id of waiting) {
      await before.start('held', id);
      expect(await before.send(id, 'go')).toEqual({ status: 'queued' });
    }
    const onShards = new Set(await Promise.all(early.map(async (id) => (await item(id))?.['dueShard']?.S)));
    expect(onShards.size).toBeGreaterThan(4);

    // Step one: poll eight, write one. A store that would poll one shard is refused until the move.
    const during = createDynamoStore({ client, table, dueShards: 1, readDueShards: 8 });
    await during.setup();
    await expect(createDynamoStore({ client, table }).setup()).rejects.toThrow(
      /dueShards 8; this store has 1/,
    );
    const mid = runnerOn(during);
    const late = Array.from({ length: 10 }, (_, i) => `late-${i}`);
    for (const id of late) await mid.start('napping', id);
    expect((await item('late-0'))?.['dueShard']).toEqual({ S: 'due#0' });

    // Step two, while a worker on the changing store ticks instances that fell due.
    now = 5_000;
    const ticked: string[] = [];
    const [result] = await Promise.all([
      reshardDue({ client, table, dueShards: 1 }),
      (async () => {
        for (let round = 0; round < 4; round++) ticked.push(...(await mid.processDue(now, 6)));
      })(),
    ]);
    expect(result.from).toBe(8);
    expect(result.to).toBe(1);
    expect(result.moved).toBeGreaterThan(0);
    expect(ticked.length).toBeGreaterThan(0);

    // Step three: one shard. Every instance still due is found, and every sent signal.
    const one = createDynamoStore({ client, table, setup: { pollMs: 50 } });
    await one.setup();
    const after = runnerOn(one);
    const sent = await one.inbox!.claim(now + 60_000, 100);
    expect(sent.map((s) => s.sent.length)).toEqual(waiting.map(() => 1));
    expect(sent.map((s) => s.snapshot.id).sort()).toEqual([...waiting].sort());
    for (let round = 0; round < 20; round++) if ((await after.processDue(now, 25)).length === 0) break;
    for (const id of [...early, ...late])
      expect([id, (await one.load(id))?.status]).toEqual([id, 'completed']);
    for (const id of waiting) expect((await item(id))?.['sentShard']).toEqual({ S: 'sent#0' });
    // A store still writing eight shards is refused now: it would put items where none polls.
    await expect(createDynamoStore({ client, table, dueShards: 8 }).setup()).rejects.toThrow(RangeError);
  });
});

/**
 * The sweep picks up what no stream record announced: here no stream reader runs at all, as when
 * a start is written before the stream's reader opened at LATEST.
 */
import { createRunner } from '@stepfold/engine';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaApp, type LambdaLogEntry } from '../src/index.js';
import { countRequests } from '../src/local/index.js';
import { type Call, clients, createHandlers, http, provision, workflows } from './support.js';

const c = clients();
let res: Awaited<ReturnType<typeof provision>>;
const calls: Call[] = [];
const log: LambdaLogEntry[] = [];
let app: ReturnType<typeof createLambdaApp>;

beforeAll(async () => {
  res = await provision(c, 'sweep');
  app = createLambdaApp({
    workflows,
    handlers: createHandlers(calls),
    dynamodb: c.dynamodb,
    table: res.table,
    log: (e) => log.push(e),
  });
});
afterAll(async () => {
  await res?.drop();
});

describe('sweep', () => {
  it('a start whose stream record was never delivered progresses at the next sweep', async () => {
    const id = `order-lost-${process.pid}`;
    const r = await app.api(http('POST', `/workflows/order/instances/${id}`, { sku: 'LOST', amount: 1 }));
    expect(r.statusCode).toBe(201);
    const store = createDynamoStore({ client: c.dynamodb, table: res.table });
    // Written, handed off, and nobody told: nothing ran.
    const handed = await store.load(id);
    expect(Object.values(handed?.tasks ?? {}).map((t) => [t.step, t.queued])).toEqual([
      ['reserve-stock', true],
    ]);
    expect(calls).toEqual([]);

    const swept = await app.sweep({}, { getRemainingTimeInMillis: () => 60_000 });
    expect(swept.ticked).toEqual([id]);
    const s = await store.load(id);
    expect(s?.status).toBe('waiting');
    expect(s?.active).toEqual(['approve']);
    expect(calls.map((x) => x.step)).toEqual(['reserve-stock']);
  });

  it('a sweep with nothing due costs one Query (one due shard) and writes nothing', async () => {
    const count = countRequests(c.dynamodb);
    const swept = await app.sweep();
    expect(swept.ticked).toEqual([]);
    expect(count.byCommand).toEqual({ QueryCommand: 1 });
  });

  it('an instance a runner elsewhere started with its task handed off is run by the sweep', async () => {
    // Another service writing with its own runner (execute: false) on the same table.
    const store = createDynamoStore({ client: c.dynamodb, table: res.table, dueShards: 1 });
    const elsewhere = createRunner({ store, workflows, execute: false });
    await elsewhere.start('reminder', `reminder-handed-${process.pid}`);
    // The sleep is written at start: due in 45 minutes, not now.
    expect((await app.sweep()).ticked).toEqual([]);
    const due = Date.now() + 45 * 60_000 + 1_000;
    const later = createLambdaApp({
      workflows,
      handlers: createHandlers(calls),
      dynamodb: c.dynamodb,
      table: res.table,
      clock: () => due,
      log: () => {},
    });
    expect((await later.sweep()).ticked).toEqual([`reminder-handed-${process.pid}`]);
    expect((await store.load(`reminder-handed-${process.pid}`))?.status).toBe('completed');
  });
});

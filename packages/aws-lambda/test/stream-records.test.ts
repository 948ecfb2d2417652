/**
 * The stream handler called with records made from the table's items (what a stream of new images
 * carries), no stream reader: what it does with each kind of record, and what it costs.
 */
import { createRunner } from '@stepfold/engine';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLambdaApp,
  type DynamoDBStreamEvent,
  type LambdaLogEntry,
  type WakeToArm,
} from '../src/index.js';
import { countRequests } from '../src/local/index.js';
import { type Call, clients, createHandlers, provision, recordsOf, workflows } from './support.js';

const c = clients();
let res: Awaited<ReturnType<typeof provision>>;
const pid = process.pid;

beforeAll(async () => {
  res = await provision(c, 'records');
});
afterAll(async () => {
  await res?.drop();
});

/** The record the last write of `id` put on the stream. */
const recordOf = (id: string) => recordsOf(c, res.table, [id]);

function appWith(clock: () => number) {
  const calls: Call[] = [];
  const log: LambdaLogEntry[] = [];
  const armed: WakeToArm[] = [];
  const cleared: string[] = [];
  const app = createLambdaApp({
    workflows,
    handlers: createHandlers(calls),
    dynamodb: c.dynamodb,
    table: res.table,
    clock,
    timers: {
      send: async () => {},
      arm: async (w) => {
        armed.push(w);
        return { how: w.blocking ? 'delay' : 'schedule', name: w.id, expression: '' } as never;
      },
      clear: async (id) => {
        cleared.push(id);
        return true;
      },
    },
    log: (e) => log.push(e),
  });
  return { app, calls, log, armed, cleared };
}

describe('stream records', () => {
  it('a task handed off by a function whose clock is ahead is taken at once, not armed as a timer', async () => {
    const store = createDynamoStore({ client: c.dynamodb, table: res.table, dueShards: 1 });
    const writer = createRunner({ store, workflows, execute: false, clock: () => Date.now() + 5_000 });
    const id = `rec-skew-${pid}`;
    await writer.start('order', id, { sku: 'K', amount: 1 });
    const behind = appWith(() => Date.now());
    const count = countRequests(c.dynamodb);
    await behind.app.stream(await recordOf(id));
    // The tick: two writes (the task taken, its result), no read (the record's image is the
    // instance), and no Query.
    expect(count.byCommand).toEqual({ GetItemCommand: 1, UpdateItemCommand: 2 }); // the GetItem is recordOf's
    expect(behind.calls.map((x) => x.step)).toEqual(['reserve-stock']);
    expect((await store.load(id))?.active).toEqual(['approve']);
    // The approval's 48 h deadline, when its record comes: a schedule (the instance may end first).
    await behind.app.stream(await recordOf(id));
    expect(behind.armed).toEqual([
      { id, at: (await store.load(id))!.wakeAt, version: (await store.load(id))!.version, blocking: false },
    ]);
  });

  it('an ended instance has its schedule cleared; a record of the settings item is ignored', async () => {
    const id = `rec-end-${pid}`;
    const a = appWith(() => Date.now());
    await a.app.queue({
      Records: [
        {
          messageId: 'm1',
          body: JSON.stringify({ type: 'start', id, workflow: 'order', input: { sku: 'E', amount: 1 } }),
        },
      ],
    });
    await a.app.queue({ Records: [{ messageId: 'm2', body: JSON.stringify({ type: 'cancel', id }) }] });
    await a.app.stream(await recordOf(id));
    expect(a.cleared).toEqual([id]);
    expect(await a.app.stream(await recordOf('#stepfold'))).toEqual({ batchItemFailures: [] });
    expect(a.cleared).toEqual([id]);
  });

  it('passes over the removal of a flow key item: no schedule is cleared for it', async () => {
    const a = appWith(() => Date.now());
    const removed: DynamoDBStreamEvent = {
      Records: [
        {
          eventName: 'REMOVE',
          dynamodb: { Keys: { id: { S: `#flow#orders\u0001c-${pid}` } }, SequenceNumber: '900000' },
        },
      ],
    };
    expect(await a.app.stream(removed)).toEqual({ batchItemFailures: [] });
    expect(a.cleared).toEqual([]);
  });
});

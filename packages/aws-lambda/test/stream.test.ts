/**
 * The stream handler on moto's stream: signals another service sends to the inbox are applied,
 * and a wake that cannot be armed fails the batch from its record, so Lambda retries it.
 */
import { createRunner } from '@stepfold/engine';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BatchResponse,
  createLambdaApp,
  type DynamoDBStreamEvent,
  type LambdaLogEntry,
} from '../src/index.js';
import { pollStream } from '../src/local/index.js';
import { type Call, clients, createHandlers, provision, until, workflows } from './support.js';

const c = clients();
let res: Awaited<ReturnType<typeof provision>>;
const calls: Call[] = [];
const log: LambdaLogEntry[] = [];
const answers: Array<{ event: DynamoDBStreamEvent; out: BatchResponse }> = [];
const refuse = new Set<string>();
const stop = new AbortController();
let polling: Promise<void>;
const pid = process.pid;

beforeAll(async () => {
  res = await provision(c, 'stream');
  const app = createLambdaApp({
    workflows,
    handlers: createHandlers(calls),
    dynamodb: c.dynamodb,
    table: res.table,
    timers: {
      send: async () => {},
      arm: async (w) => {
        if (refuse.has(w.id)) throw new Error('Scheduler is unavailable');
        return { how: 'schedule', name: w.id, expression: '' };
      },
      clear: async () => false,
    },
    log: (e) => log.push(e),
  });
  polling = pollStream({
    client: c.dynamodb,
    streams: c.streams,
    table: res.table,
    signal: stop.signal,
    // The table is this file's, made above: read from its first write, whenever the reader opens.
    from: 'TRIM_HORIZON',
    idleMs: 50,
    handler: async (event) => {
      const out = await app.stream(event);
      answers.push({ event, out });
      return out;
    },
  });
});
afterAll(async () => {
  stop.abort();
  await polling;
  await res?.drop();
});

describe('stream handler', () => {
  it('runner.send from another service: the decision waiting in the inbox is applied and the order completes', async () => {
    const store = createDynamoStore({ client: c.dynamodb, table: res.table, dueShards: 1 });
    const elsewhere = createRunner({ store, workflows, execute: false });
    const id = `s-send-${pid}`;
    await elsewhere.start('order', id, { sku: 'S', amount: 4 });
    await until(
      'the approval step',
      async () => (await store.load(id))?.active.includes('approve') || undefined,
    );
    await elsewhere.send(id, 'approve', { decision: 'approve' });
    await until('the order', async () => (await store.load(id))?.status === 'completed' || undefined);
    expect(log.some((e) => e.fn === 'stream' && e.action === 'inbox' && e.ids.includes(id))).toBe(true);
    expect(calls.filter((x) => x.instance === id).map((x) => x.step)).toEqual([
      'reserve-stock',
      'charge-payment',
      'send-email',
    ]);
  });

  it('a wake Scheduler refuses fails the batch from that record; the others are done', async () => {
    const store = createDynamoStore({ client: c.dynamodb, table: res.table, dueShards: 1 });
    const elsewhere = createRunner({ store, workflows, execute: false });
    const id = `s-refused-${pid}`;
    refuse.add(id);
    await elsewhere.start('reminder', id);
    const failed = await until('the failed batch', () =>
      answers.find((a) => a.out.batchItemFailures.length > 0),
    );
    const record = failed.event.Records.find((r) => r.dynamodb?.Keys?.['id']?.S === id);
    expect(failed.out.batchItemFailures).toEqual([{ itemIdentifier: record?.dynamodb?.SequenceNumber }]);
    expect(log).toContainEqual(
      expect.objectContaining({ fn: 'stream', action: 'retry', error: 'Scheduler is unavailable' }),
    );
  });
});

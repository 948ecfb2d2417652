/**
 * The SQS handler: messages applied through the executing runner, once each however often SQS
 * delivers them; bad messages dropped with their code; transient failures given back to SQS.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { createRunner, type Store, StoreUnavailableError } from '@stepfold/engine';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLambdaApp,
  createQueueHandler,
  type LambdaLogEntry,
  type QueueMessage,
  type SQSRecord,
} from '../src/index.js';
import { countRequests, pollQueue, queueDepth } from '../src/local/index.js';
import { type Call, clients, createHandlers, provision, until, workflows } from './support.js';

const c = clients();
let res: Awaited<ReturnType<typeof provision>>;
const calls: Call[] = [];
const log: LambdaLogEntry[] = [];
const sent: Array<{ message: QueueMessage; delaySeconds: number }> = [];
let now = Date.now();
let app: ReturnType<typeof createLambdaApp>;
const pid = process.pid;
let store: Store;

beforeAll(async () => {
  res = await provision(c, 'queue');
  store = createDynamoStore({ client: c.dynamodb, table: res.table });
  app = createLambdaApp({
    workflows,
    handlers: createHandlers(calls),
    dynamodb: c.dynamodb,
    table: res.table,
    clock: () => now,
    // Records what would be armed or sent again, instead of the queue and Scheduler.
    timers: {
      send: async (message, delaySeconds) => void sent.push({ message, delaySeconds }),
      arm: async () => ({ how: 'delay', delaySeconds: 0 }),
      clear: async () => false,
    },
    log: (e) => log.push(e),
  });
});
afterAll(async () => {
  await res?.drop();
});

let records = 0;
function record(body: unknown, messageId = `m-${++records}`): SQSRecord {
  return { messageId, body: typeof body === 'string' ? body : JSON.stringify(body) };
}
const deliver = (...rs: SQSRecord[]) => app.queue({ Records: rs });

describe('SQS handler', () => {
  it('a start and an approval delivered twice each apply once; the order completes in the invocations', async () => {
    const id = `q-order-${pid}`;
    const start = record({ type: 'start', id, workflow: 'order', input: { sku: 'A', amount: 2 } });
    expect(await deliver(start, start)).toEqual({ batchItemFailures: [] });
    expect(log.filter((e) => e.fn === 'queue' && 'id' in e && e.id === id).map((e) => e.action)).toEqual([
      'applied',
      'duplicate',
    ]);
    expect((await store.load(id))?.active).toEqual(['approve']);

    const approve = record({ type: 'signal', id, name: 'approve', payload: { decision: 'approve' } });
    const count = countRequests(c.dynamodb);
    await deliver(approve);
    // Read, write the decision with charge taken, charge's result with email taken, email's result.
    expect(count.byCommand).toEqual({ GetItemCommand: 1, UpdateItemCommand: 3 });
    count.reset();
    await deliver(approve); // the same SQS message again: its signal id (sqs:<messageId>) was seen
    expect(count.byCommand).toEqual({ GetItemCommand: 1 });
    const s = await store.load(id);
    expect(s?.status).toBe('completed');
    expect(calls.filter((x) => x.instance === id).map((x) => x.step)).toEqual([
      'reserve-stock',
      'charge-payment',
      'send-email',
    ]);
  });

  it('a wake that arrives early is sent again for the rest of its delay; one on time ticks', async () => {
    const id = `q-reminder-${pid}`;
    await deliver(record({ type: 'start', id, workflow: 'reminder' }));
    const s = await store.load(id);
    const wake = { type: 'wake', id, at: s!.wakeAt!, version: s!.version } as const;
    await deliver(record(wake));
    expect(sent).toEqual([{ message: wake, delaySeconds: 900 }]);
    now = wake.at;
    await deliver(record(wake));
    expect((await store.load(id))?.status).toBe('completed');
  });

  it('bad messages are dropped with their error code and write nothing; a store that is down gives the message back', async () => {
    const before = log.length;
    const bad = [
      record('{"type":"start",'),
      record({ type: 'start', id: `nope-${pid}`, workflow: 'no-such-workflow' }),
      record({ type: 'signal', id: `missing-${pid}`, name: 'approve', payload: { decision: 'approve' } }),
      record({ type: 'start', id: 'bad id with spaces', workflow: 'order' }),
      record({ type: 'wake', id: `x-${pid}`, at: 'soon' }),
      record({ type: 'explode', id: 'x' }),
    ];
    expect(await deliver(...bad)).toEqual({ batchItemFailures: [] });
    expect(log.slice(before).map((e) => (e.action === 'rejected' ? e.code : e.action))).toEqual([
      'INVALID_EVENT',
      'UNKNOWN_WORKFLOW',
      'NOT_FOUND',
      'INVALID_ID',
      'INVALID_EVENT',
      'INVALID_EVENT',
    ]);
    expect(await store.load(`nope-${pid}`)).toBeNull();

    const down: Store = {
      ...store,
      load: async () => {
        throw new StoreUnavailableError('DynamoDB is unreachable');
      },
    };
    const entries: LambdaLogEntry[] = [];
    const handler = createQueueHandler({
      runner: createRunner({ store: down, workflows, handlers: createHandlers([]) }),
      timers: undefined,
      clock: Date.now,
      log: (e) => entries.push(e),
    });
    const r = record({
      type: 'signal',
      id: `q-order-${pid}`,
      name: 'approve',
      payload: { decision: 'approve' },
    });
    expect(await handler({ Records: [r] })).toEqual({ batchItemFailures: [{ itemIdentifier: r.messageId }] });
    expect(entries[0]).toMatchObject({ action: 'retry' });
  });

  it('through the real queue: a start message is received, applied and deleted', async () => {
    const id = `q-real-${pid}`;
    const stop = new AbortController();
    const polling = pollQueue({
      client: c.sqs,
      queueUrl: res.queueUrl,
      handler: app.queue,
      signal: stop.signal,
      idleMs: 50,
    });
    await c.sqs.send(
      new SendMessageCommand({
        QueueUrl: res.queueUrl,
        MessageBody: JSON.stringify({ type: 'start', id, workflow: 'order', input: { sku: 'Q', amount: 1 } }),
      }),
    );
    await until(
      'the order at its approval',
      async () => (await store.load(id))?.status === 'waiting' || undefined,
    );
    await until(
      'the message deleted',
      async () => (await queueDepth(c.sqs, res.queueUrl)).total === 0 || undefined,
    );
    stop.abort();
    await polling;
  });
});

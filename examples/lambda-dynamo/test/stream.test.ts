/**
 * The DynamoDB stream handler against a real DynamoDB server (no queue server: timers due later go
 * to a queue that records them). Writes by another runner that executes nothing — a start that
 * hands a task to any worker, a `runner.send` — are driven by the handler as `pollStream` delivers
 * their records, as Lambda's event source mapping would.
 */
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { createRunner, type Snapshot } from '@stepfold/engine';
import { createDynamoStore, ensureTable } from '@stepfold/store-dynamo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WakeQueue } from '../src/handler.js';
import type { QueueMessage } from '../src/messages.js';
import { createStreamHandler, type StreamLogEntry } from '../src/stream-handler.js';
import { pollStream } from '../src/stream-poller.js';
import { type Call, createHandlers, workflows } from '../src/workflows.js';

const endpoint = process.env.STEPFOLD_DYNAMO_ENDPOINT ?? 'http://127.0.0.1:8000';
const config = { endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } };
const dynamo = new DynamoDBClient({ ...config, maxAttempts: 2 });
const streams = new DynamoDBStreamsClient({ ...config, maxAttempts: 2 });
const table = `stepfold_lambda_stream_${process.pid}`;
const store = createDynamoStore({ client: dynamo, table, setup: { pollMs: 50 } });

const calls: Call[] = [];
const log: StreamLogEntry[] = [];
const queued: Array<{ message: QueueMessage; delaySeconds: number }> = [];
const stop = new AbortController();
let loop: Promise<void>;

beforeAll(async () => {
  await ensureTable(dynamo, table, { streams: true, pollMs: 50 });
  await store.setup();
  // The function: its runner executes what the worker of each invocation takes.
  const runner = createRunner({ store, workflows, handlers: createHandlers((c) => calls.push(c)) });
  const queue: WakeQueue = {
    send: async (message, delaySeconds) => void queued.push({ message, delaySeconds }),
  };
  const handler = createStreamHandler({ runner, queue, log: (e) => log.push(e) });
  loop = pollStream({ client: dynamo, streams, table, handler, signal: stop.signal, idleMs: 50 });
  // pollStream reads from where the stream is when it opens: give it a moment to open.
  await new Promise((r) => setTimeout(r, 500));
});

afterAll(async () => {
  stop.abort();
  await loop;
  await dynamo.send(new DeleteTableCommand({ TableName: table })).catch(() => {});
  dynamo.destroy();
  streams.destroy();
});

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const ended = (id: string) => async (): Promise<Snapshot | undefined> => {
  const s = await store.load(id);
  return s && ['completed', 'failed'].includes(s.status) ? s : undefined;
};

// Another service: writes instances and sends signals, runs nothing.
const api = createRunner({ store, workflows, execute: false });

describe('DynamoDB stream handler', () => {
  it('a start by a runner that executes nothing: the stream handler runs the order to the end', async () => {
    await api.start('order', 'st-order-1', { sku: 'A', amount: 5 });
    const s = await until('the order', ended('st-order-1'));
    expect(s.status).toBe('completed');
    const steps = calls.filter((c) => c.instance === 'st-order-1').map((c) => c.step);
    expect(steps).toEqual(['reserve-stock', 'charge-payment', 'send-email']);
    expect(log.some((e) => e.action === 'drive' && e.id === 'st-order-1')).toBe(true);
  });

  it('runner.send from another runner: the record of the send has the signal applied and the rest run', async () => {
    await api.start('approval', 'st-doc-1', { title: 'memo' });
    await until('the draft', async () =>
      calls.some((c) => c.instance === 'st-doc-1' && c.step === 'draft') ? true : undefined,
    );
    await api.send('st-doc-1', 'review', { decision: 'approve' });
    const s = await until('the document', ended('st-doc-1'));
    expect(s.status).toBe('completed');
    expect(s.output).toEqual({ published: 'doc:memo' });
    expect(log.some((e) => e.action === 'drive' && e.id === 'st-doc-1' && e.sent)).toBe(true);
  });

  it('a retry backoff due later goes on the queue as a delayed wake for its time', async () => {
    await api.start('order', 'st-order-2', { sku: 'B', amount: 7, chargeFailures: 1 });
    const wake = await until('the deferred wake', async () =>
      queued.find((q) => q.message.type === 'wake' && q.message.id === 'st-order-2'),
    );
    const s = await store.load('st-order-2');
    // Charge attempt 1 failed: the instance waits out its 2 s backoff, and the wake is for then.
    expect(wake.message).toEqual({ type: 'wake', id: 'st-order-2', at: s?.wakeAt });
    expect(wake.delaySeconds).toBeGreaterThanOrEqual(1);
    expect(wake.delaySeconds).toBeLessThanOrEqual(2);
  });
});

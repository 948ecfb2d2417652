/**
 * The Lambda handler against moto (DynamoDB, the store) and ElasticMQ (the queue): messages go
 * through a real SQS-compatible server, wakes are real delayed messages.
 */
import { DeleteTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, DeleteQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createRunner, type Snapshot, type Store, StoreUnavailableError } from '@stepfold/engine';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler, type HandlerLogEntry, type WakeQueue } from '../src/handler.js';
import type { QueueMessage } from '../src/messages.js';
import { createSqsQueue, pollQueue } from '../src/sqs-queue.js';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from '../src/sqs-types.js';
import { type Call, createHandlers, workflows } from '../src/workflows.js';
import { type SqsServer, startSqs } from './elasticmq.js';

const DYNAMO_ENDPOINT = process.env.STEPFOLD_DYNAMO_ENDPOINT ?? 'http://127.0.0.1:8000';
const credentials = { accessKeyId: 'stepfold', secretAccessKey: 'stepfold' };
const region = 'us-east-1';
const dynamo = new DynamoDBClient({ endpoint: DYNAMO_ENDPOINT, region, credentials, maxAttempts: 2 });
const table = `stepfold_lambda_${process.pid}`;
const store = createDynamoStore({ client: dynamo, table, setup: { pollMs: 50 } });

let server: SqsServer;
let sqs: SQSClient;
const stops: Array<() => Promise<void>> = [];

beforeAll(async () => {
  try {
    await dynamo.send(new ListTablesCommand({ Limit: 1 }));
  } catch (e) {
    throw new Error(
      `no DynamoDB at ${DYNAMO_ENDPOINT} (set STEPFOLD_DYNAMO_ENDPOINT or run \`bash scripts/services.sh up dynamo\`)`,
      { cause: e },
    );
  }
  [server] = await Promise.all([startSqs(), store.setup()]);
  sqs = new SQSClient({ endpoint: server.endpoint, region, credentials });
});

afterAll(async () => {
  for (const stop of stops) await stop();
  sqs?.destroy();
  await server?.stop();
  await dynamo.send(new DeleteTableCommand({ TableName: table })).catch(() => {});
  dynamo.destroy();
});

let queues = 0;
async function createQueue(attributes: Record<string, string> = {}): Promise<string> {
  const out = await sqs.send(
    new CreateQueueCommand({ QueueName: `stepfold-${process.pid}-${++queues}`, Attributes: attributes }),
  );
  stops.push(async () => {
    await sqs.send(new DeleteQueueCommand({ QueueUrl: out.QueueUrl })).catch(() => {});
  });
  return out.QueueUrl!;
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 60_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The instance once it has ended and the handler has logged the message that ended it: the store
 * write lands before `runner.handle` returns and the log line follows, so a probe on the store
 * alone can see the end a moment before the log does.
 */
const finished = (id: string, log: readonly HandlerLogEntry[]) => async () => {
  const s = await store.load(id);
  if (!s || !['completed', 'failed', 'cancelled', 'aborted'].includes(s.status)) return undefined;
  const logged = log.some((e) => e.action === 'applied' && e.id === id && e.version === s.version);
  return logged ? s : undefined;
};

/**
 * A deployed function in miniature: the handler over the shared table, its own queue, and the
 * queue poller standing in for Lambda's event source mapping. `scale` virtual ms pass per real
 * ms: the runner's clock runs that much faster and every delay on the real queue is that much
 * shorter, so SQS's 900 s cap is 900 virtual seconds.
 */
async function deploy(
  o: { scale?: number; visibilityTimeout?: number; wrap?: (h: Handler) => Handler } = {},
) {
  const scale = o.scale ?? 1;
  const t0 = Date.now();
  const clock = () => t0 + Math.round((Date.now() - t0) * scale);
  const calls: Call[] = [];
  const log: HandlerLogEntry[] = [];
  const sent: Array<{ message: QueueMessage; delaySeconds: number }> = [];
  const queueUrl = await createQueue(
    o.visibilityTimeout ? { VisibilityTimeout: String(o.visibilityTimeout) } : {},
  );
  const sqsQueue = createSqsQueue(sqs, queueUrl);
  const queue: WakeQueue = {
    send(message, delaySeconds) {
      sent.push({ message, delaySeconds });
      return sqsQueue.send(message, Math.ceil(delaySeconds / scale));
    },
  };
  const runner = createRunner({
    store,
    workflows,
    clock,
    handlers: createHandlers((c) => calls.push(c), clock),
  });
  const handler = createHandler({ runner, queue, clock, log: (e) => log.push(e) });
  const stop = new AbortController();
  const loop = pollQueue({
    client: sqs,
    queueUrl,
    handler: o.wrap ? o.wrap(handler) : handler,
    signal: stop.signal,
    onError: (e) => console.error(e),
  });
  stops.unshift(async () => {
    stop.abort();
    await loop;
  });
  const send = (body: unknown) =>
    sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(body) }));
  return { clock, calls, log, sent, send, runner, handler };
}
type Handler = (event: SQSEvent) => Promise<SQSBatchResponse>;

/** An SQS record as Lambda would hand it over, for calling the handler directly. */
let records = 0;
function record(body: unknown, messageId = `m-${++records}`): SQSRecord {
  return {
    messageId,
    receiptHandle: `rh-${messageId}`,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: '0',
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: '0',
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:test',
    awsRegion: region,
  };
}

/** The handler with a hand-moved clock and a queue that only records what it is given. */
function direct(start = Date.UTC(2026, 0, 1)) {
  let now = start;
  const calls: Call[] = [];
  const log: HandlerLogEntry[] = [];
  const sent: Array<{ message: QueueMessage; delaySeconds: number }> = [];
  const clock = () => now;
  const runner = createRunner({
    store,
    workflows,
    clock,
    handlers: createHandlers((c) => calls.push(c), clock),
  });
  const queue: WakeQueue = {
    send: async (message, delaySeconds) => void sent.push({ message, delaySeconds }),
  };
  const handler = createHandler({ runner, queue, clock, log: (e) => log.push(e) });
  const deliver = (...rs: SQSRecord[]) => handler({ Records: rs });
  return {
    calls,
    log,
    sent,
    handler,
    deliver,
    setNow: (t: number) => {
      now = t;
    },
  };
}

describe('lambda handler on moto (DynamoDB) and ElasticMQ', () => {
  it('an order whose charge fails once completes through a delayed wake message (retry backoff)', async () => {
    const app = await deploy();
    const id = `order-retry-${process.pid}`;
    const t0 = Date.now();
    await app.send({
      type: 'start',
      id,
      workflow: 'order',
      input: { sku: 'BOOK', amount: 25, chargeFailures: 1 },
    });
    const s = (await until('the order to finish', finished(id, app.log))) as Snapshot;
    const elapsed = Date.now() - t0;

    expect(s.status).toBe('completed');
    expect(s.output).toEqual({ sent: true, payment: 'P-BOOK-25' });
    const charges = app.calls.filter((c) => c.instance === id && c.step === 'charge-payment');
    expect(charges.map((c) => c.attempt)).toEqual([1, 2]);
    expect(new Set(charges.map((c) => c.idempotencyKey))).toEqual(new Set([`${id}/1/charge-payment/1`]));
    // The backoff (2 s) travelled as a wake message delayed by 2 s, which ticked the instance.
    const wake = app.sent.find((m) => m.message.type === 'wake' && m.message.id === id);
    expect(wake?.delaySeconds).toBe(2);
    expect(app.log).toContainEqual(expect.objectContaining({ action: 'applied', type: 'wake', id }));
    expect(charges[1]!.at - charges[0]!.at).toBeGreaterThanOrEqual(2_000);
    expect(elapsed).toBeGreaterThanOrEqual(2_000);
  });

  it('a declined charge compensates the reservation and ends failed', async () => {
    const app = await deploy();
    const id = `order-declined-${process.pid}`;
    await app.send({
      type: 'start',
      id,
      workflow: 'order',
      input: { sku: 'PEN', amount: 3, declineCharge: true },
    });
    const s = (await until('the order to finish', finished(id, app.log))) as Snapshot;
    expect(s.status).toBe('failed');
    expect(s.error).toMatchObject({ code: 'CARD_DECLINED' });
    expect(app.calls.filter((c) => c.instance === id).map((c) => `${c.step}:${c.phase}`)).toEqual([
      'reserve-stock:run',
      'charge-payment:run',
      'reserve-stock:compensate',
    ]);
  });

  it('a 45-minute sleep, longer than the 900 s SQS delay limit, is re-armed until it is due', async () => {
    // 300 virtual ms per real ms: 900 virtual seconds (the SQS cap) are 3 real seconds.
    const app = await deploy({ scale: 300 });
    const id = `reminder-${process.pid}`;
    const started = app.clock();
    await app.send({ type: 'start', id, workflow: 'reminder' });
    const s = (await until('the reminder to finish', finished(id, app.log))) as Snapshot;

    expect(s.status).toBe('completed');
    const [reminder, ...more] = app.calls.filter((c) => c.instance === id);
    expect(more).toEqual([]);
    expect(reminder!.at).toBeGreaterThanOrEqual(started + 45 * 60_000);
    // Every delay stayed within the cap; the wait went out as one wake, re-armed twice, then ticked.
    const wakes = app.sent.filter((m) => m.message.id === id && m.message.type === 'wake');
    expect(wakes.every((w) => w.delaySeconds <= 900)).toBe(true);
    expect(wakes[0]!.delaySeconds).toBe(900);
    const target = (wakes[0]!.message as { at: number }).at;
    expect(wakes.every((w) => (w.message as { at: number }).at === target)).toBe(true);
    const rearmed = app.log.filter((e) => e.action === 'rearmed' && e.id === id);
    expect(rearmed.length).toBeGreaterThanOrEqual(2);
    expect(
      app.log.filter((e) => e.action === 'applied' && e.id === id).map((e) => (e as { type: string }).type),
    ).toEqual(['start', 'wake']);
  });

  it('a message delivered twice through the queue (the first run dies after its write) has one effect', async () => {
    // The first delivery of every message is processed and then reported as failed, as if the
    // function timed out after writing; SQS delivers the same message (same id) again a second later.
    const seen = new Set<string>();
    const app = await deploy({
      visibilityTimeout: 1,
      wrap: (h) => async (event) => {
        const out = await h(event);
        const again = event.Records.filter((r) => !seen.has(r.messageId));
        for (const r of again) seen.add(r.messageId);
        return {
          batchItemFailures: [
            ...out.batchItemFailures,
            ...again.map((r) => ({ itemIdentifier: r.messageId })),
          ],
        };
      },
    });
    const id = `approval-redelivered-${process.pid}`;
    await app.send({ type: 'start', id, workflow: 'approval', input: { title: 'Q3 report' } });
    await until('both deliveries of the start', () =>
      app.log.some((e) => e.action === 'duplicate' && e.id === id),
    );
    await app.send({ type: 'signal', id, name: 'comment', payload: { text: 'looks good' } });
    await until('both deliveries of the comment', () =>
      app.log.filter((e) => e.action === 'applied' && e.type === 'signal' && e.id === id).length === 2
        ? true
        : undefined,
    );
    await app.send({ type: 'signal', id, name: 'review', payload: { decision: 'approve' } });
    const s = (await until('the approval to finish', finished(id, app.log))) as Snapshot;
    await until('the approval redelivered', () =>
      app.log.filter((e) => e.action === 'applied' && e.type === 'signal' && e.id === id).length === 4
        ? true
        : undefined,
    );

    expect(s.status).toBe('completed');
    expect(app.calls.filter((c) => c.instance === id).map((c) => c.step)).toEqual(['draft', 'publish']);
    expect(s.inbox.map((m) => m.name)).toEqual(['comment']);
    const final = await store.load(id);
    expect(final?.version).toBe(s.version);
  });

  it('duplicate start, signal and wake messages apply once (same SQS message id)', async () => {
    const d = direct();
    const id = `order-dup-${process.pid}`;
    const start = record({
      type: 'start',
      id,
      workflow: 'order',
      input: { sku: 'MUG', amount: 9, chargeFailures: 1 },
    });
    expect(await d.deliver(start, start)).toEqual({ batchItemFailures: [] });
    expect(d.log.map((e) => e.action)).toEqual(['applied', 'scheduled', 'duplicate', 'scheduled']);
    expect(d.calls.map((c) => `${c.step}#${c.attempt}`)).toEqual(['reserve-stock#1', 'charge-payment#1']);

    // The retry backoff's wake, delivered twice: one tick, one second attempt; the copy is stale.
    const wake = d.sent[0]!.message as Extract<QueueMessage, { type: 'wake' }>;
    expect(d.sent[0]!.delaySeconds).toBe(2);
    expect(d.sent[1]!.message).toEqual(wake);
    d.setNow(wake.at);
    const wakeRecord = record(wake);
    await d.deliver(wakeRecord);
    await d.deliver(wakeRecord);
    await d.deliver(record(d.sent[1]!.message));
    expect(d.calls.map((c) => `${c.step}#${c.attempt}`)).toEqual([
      'reserve-stock#1',
      'charge-payment#1',
      'charge-payment#2',
      'send-email#1',
    ]);
    expect(d.log.filter((e) => e.action === 'stale')).toHaveLength(2);
    const order = await store.load(id);
    expect(order?.status).toBe('completed');

    // A signal without its own id is deduplicated by the message id: a buffered note arrives once.
    const approval = `approval-dup-${process.pid}`;
    await d.deliver(record({ type: 'start', id: approval, workflow: 'approval', input: { title: 'x' } }));
    const note = record({ type: 'signal', id: approval, name: 'note', payload: 1 });
    await d.deliver(note, note);
    const once = await store.load(approval);
    expect(once?.inbox).toHaveLength(1);
    // The same body in a new message is a new signal.
    await d.deliver(record({ type: 'signal', id: approval, name: 'note', payload: 1 }));
    expect((await store.load(approval))?.inbox).toHaveLength(2);
  });

  it('bad messages are dropped with their error code and write nothing; transient failures come back', async () => {
    const d = direct();
    const bad = [
      record('{"type":"start",'),
      record({ type: 'start', id: `nope-${process.pid}`, workflow: 'no-such-workflow' }),
      record({
        type: 'signal',
        id: `missing-${process.pid}`,
        name: 'review',
        payload: { decision: 'approve' },
      }),
      record({ type: 'start', id: 'bad id with spaces', workflow: 'order' }),
      record({ type: 'wake', id: `order-x-${process.pid}`, at: 'soon' }),
      record({ type: 'explode', id: 'x' }),
    ];
    expect(await d.deliver(...bad)).toEqual({ batchItemFailures: [] });
    expect(d.log.map((e) => (e.action === 'rejected' ? e.code : e.action))).toEqual([
      'INVALID_EVENT',
      'UNKNOWN_WORKFLOW',
      'NOT_FOUND',
      'INVALID_ID',
      'INVALID_EVENT',
      'INVALID_EVENT',
    ]);
    expect(await store.load(`nope-${process.pid}`)).toBeNull();
    expect(await store.load(`missing-${process.pid}`)).toBeNull();
    expect(d.sent).toEqual([]);

    // A human decision without `decision` is refused by the reducer: nothing written.
    const id = `approval-bad-${process.pid}`;
    await d.deliver(record({ type: 'start', id, workflow: 'approval' }));
    const before = await store.load(id);
    await d.deliver(record({ type: 'signal', id, name: 'review', payload: { maybe: true } }));
    expect(d.log.at(-1)).toMatchObject({ action: 'rejected', code: 'INVALID_EVENT' });
    expect(await store.load(id)).toEqual(before);

    // The store is unreachable: the message is reported as failed, so SQS delivers it again.
    const down: Store = {
      ...store,
      load: async () => {
        throw new StoreUnavailableError('DynamoDB is unreachable');
      },
    };
    const runner = createRunner({ store: down, workflows, handlers: createHandlers(() => {}) });
    const log: HandlerLogEntry[] = [];
    const handler = createHandler({ runner, queue: { send: async () => {} }, log: (e) => log.push(e) });
    const r = record({ type: 'signal', id, name: 'review', payload: { decision: 'approve' } });
    expect(await handler({ Records: [r] })).toEqual({ batchItemFailures: [{ itemIdentifier: r.messageId }] });
    expect(log[0]).toMatchObject({ action: 'retry' });
  });
});

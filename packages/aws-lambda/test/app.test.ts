/**
 * The whole app on moto: the API writes, the stream handler drives (no poll), timers go out as an
 * SQS delay or one schedule, and nothing of an instance stays queued or scheduled once it ends.
 * The queue and stream handlers run under Lambda's event sources in miniature (`serveLocally`), the
 * schedule driver fires what Scheduler would.
 */
import type { Snapshot } from '@stepfold/engine';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaApp, type LambdaLogEntry, scheduleName } from '../src/index.js';
import {
  countRequests,
  createScheduleDriver,
  queueDepth,
  type RequestCount,
  serveLocally,
} from '../src/local/index.js';
import { type Call, clients, createHandlers, http, provision, until, workflows } from './support.js';

const c = clients();
// The app's own DynamoDB client, counted; the pollers read through `c.dynamodb`.
const appClients = clients();
let res: Awaited<ReturnType<typeof provision>>;
let count: RequestCount;
const calls: Call[] = [];
const log: LambdaLogEntry[] = [];
let offset = 0;
const clock = () => Date.now() + offset;
let app: ReturnType<typeof createLambdaApp>;
const stop = new AbortController();
let serving: Promise<void>;

beforeAll(async () => {
  res = await provision(c, 'app');
  process.env.STEPFOLD_TABLE = res.table;
  process.env.STEPFOLD_QUEUE_URL = res.queueUrl;
  process.env.STEPFOLD_QUEUE_ARN = res.queueArn;
  process.env.STEPFOLD_SCHEDULE_GROUP = res.group;
  process.env.STEPFOLD_SCHEDULER_ROLE_ARN = 'arn:aws:iam::123456789012:role/stepfold-scheduler';
  count = countRequests(appClients.dynamodb);
  // Everything else from the environment variables above.
  app = createLambdaApp({
    workflows,
    handlers: createHandlers(calls),
    dynamodb: appClients.dynamodb,
    clock,
    log: (e) => log.push(e),
  });
  serving = serveLocally({
    app,
    ...c,
    table: res.table,
    queueUrl: res.queueUrl,
    group: res.group,
    signal: stop.signal,
    sweepMs: 3_600_000, // the sweep has its own test: here everything must come from the stream
    // The table is this file's, made above: read from its first write, whenever the reader opens.
    streamFrom: 'TRIM_HORIZON',
    idleMs: 50,
    onError: (e) => console.error(e),
  });
});

afterAll(async () => {
  stop.abort();
  await serving;
  await res?.drop();
});

const store = () => createDynamoStore({ client: c.dynamodb, table: res.table });
const ended = (id: string) => async (): Promise<Snapshot | undefined> => {
  const s = await store().load(id);
  return s && ['completed', 'failed', 'cancelled', 'aborted'].includes(s.status) ? s : undefined;
};
const at = (id: string, step: string) => async () => {
  const s = await store().load(id);
  return s?.status === 'waiting' && s.active.includes(step) ? s : undefined;
};
const driver = () => createScheduleDriver({ scheduler: c.scheduler, sqs: c.sqs, group: res.group });
/** How the stream handler armed the wakes of `id`, in order. */
const armedHow = (id: string) =>
  log.flatMap((e) => (e.fn === 'stream' && e.action === 'armed' && e.id === id ? [e.how] : []));
/** Every message of the queue (visible, delayed, in flight) and every schedule of the group. */
async function leftovers() {
  const depth = await queueDepth(c.sqs, res.queueUrl);
  const schedules = await driver().list();
  return { messages: depth.total, schedules: schedules.map((s) => s.name) };
}
/**
 * Waits until the stream handler has taken the record of the instance's end (and deleted its
 * schedule): an instance seen ended in the table may still have records ahead of the handler.
 */
const cleared = (id: string) =>
  until('the end taken from the stream', () =>
    log.some((e) => e.fn === 'stream' && e.action === 'cleared' && e.id === id),
  );
/** Waits until the handlers have nothing in hand and the queue is empty. */
const settled = () =>
  until('the queue to drain', async () => (await leftovers()).messages === 0 || undefined);

describe('createLambdaApp on moto', () => {
  it('an order through the API: started, driven by the stream, approved, completed; nothing left queued or scheduled', async () => {
    const id = `order-happy-${process.pid}`;
    count.reset();
    const started = await app.api(
      http('POST', `/workflows/order/instances/${id}`, { sku: 'BOOK', amount: 25 }),
    );
    expect(started.statusCode).toBe(201);
    expect(JSON.parse(started.body)).toMatchObject({ id, status: 'running' });

    // The stream handler runs reserve-stock; the approval's 48 h deadline is one schedule.
    const waiting = await until('the approval step', at(id, 'approve'));
    const name = scheduleName(id);
    const schedule = await until('the deadline schedule', async () =>
      (await driver().list()).find((s) => s.name === name),
    );
    expect(schedule.at).toBe(Math.ceil(waiting.wakeAt! / 1000) * 1000);
    expect(JSON.parse(schedule.input)).toEqual({
      type: 'wake',
      id,
      at: waiting.wakeAt,
      version: waiting.version,
    });

    const approved = await app.api(http('POST', `/instances/${id}/signals/approve`, { decision: 'approve' }));
    expect(approved.statusCode).toBe(200);
    const s = await until('the order to complete', ended(id));
    expect(s.status).toBe('completed');
    expect(calls.filter((x) => x.instance === id).map((x) => x.step)).toEqual([
      'reserve-stock',
      'charge-payment',
      'send-email',
    ]);
    // The end deleted the deadline's schedule; no message of it is left.
    await cleared(id);
    await settled();
    expect(await leftovers()).toEqual({ messages: 0, schedules: [] });
    // No idle poll anywhere: no due query (Query on due-index) in any handler.
    expect(count.byCommand['QueryCommand'] ?? 0).toBe(0);
    const writes = (count.byCommand['PutItemCommand'] ?? 0) + (count.byCommand['UpdateItemCommand'] ?? 0);
    const reads = count.byCommand['GetItemCommand'] ?? 0;
    console.log(
      `DynamoDB requests for one order: ${count.total} (${writes} writes, ${reads} reads)`,
      count.byCommand,
    );
    // Seven transitions (start, reserve taken, reserve done, approval, charge taken, charge done, email done).
    expect(writes).toBe(7);
    // One read: the approval's load. The stream's ticks take the instance from the record's image.
    expect(reads).toBe(1);
    expect(count.total).toBe(writes + reads);
    expect(reads).toBeLessThanOrEqual(3);
  });

  it('a charge retried after its backoff goes through one delayed message; nothing left once it completes', async () => {
    const id = `order-retry-${process.pid}`;
    await app.api(
      http('POST', `/workflows/order/instances/${id}`, { sku: 'MUG', amount: 9, chargeFailures: 1 }),
    );
    await until('the approval step', at(id, 'approve'));
    // The stream handler takes each instance's latest record of a batch: an approval written before
    // it read the waiting record would share its batch, and the deadline would never be armed (the
    // instance no longer waits for it). Approve once the deadline is armed.
    await until('the deadline armed', () => armedHow(id).length > 0);
    await app.api(http('POST', `/instances/${id}/signals/approve`, { decision: 'approve' }));
    const s = await until('the order to complete', ended(id));
    expect(s.status).toBe('completed');
    expect(
      calls.filter((x) => x.instance === id && x.step === 'charge-payment').map((x) => x.attempt),
    ).toEqual([1, 2]);
    // The deadline as a schedule, the 1 s backoff as a delay: one each.
    expect(armedHow(id)).toEqual(['schedule', 'delay']);
    await cleared(id);
    await settled();
    expect(await leftovers()).toEqual({ messages: 0, schedules: [] });
  });

  it('a 45-minute sleep is one schedule that fires into the queue; a stale wake writes nothing', async () => {
    const id = `reminder-${process.pid}`;
    const started = clock();
    await app.api(http('POST', `/workflows/reminder/instances/${id}`));
    const name = scheduleName(id);
    // The log entry follows the schedule's creation: a list can see the schedule before it is written.
    await until('the wake armed', () => armedHow(id).length > 0);
    const schedule = (await driver().list()).find((s) => s.name === name);
    expect(schedule).toBeDefined();
    expect(schedule!.at).toBeGreaterThanOrEqual(started + 45 * 60_000);
    expect(armedHow(id)).toEqual(['schedule']);

    // A copy of the wake for an older version: loaded, nothing due, nothing written.
    const before = await store().load(id);
    count.reset();
    await app.queue({
      Records: [
        { messageId: `stale-${id}`, body: JSON.stringify({ type: 'wake', id, at: clock(), version: 1 }) },
      ],
    });
    expect(count.byCommand['UpdateItemCommand'] ?? 0).toBe(0);
    expect(count.byCommand['PutItemCommand'] ?? 0).toBe(0);
    expect((await store().load(id))?.version).toBe(before?.version);

    // 45 minutes later (the app's clock moved on): Scheduler fires it, the reminder runs.
    offset += 45 * 60_000 + 1_000;
    const fired = await driver().fireDue(clock());
    expect(fired.map((f) => f.name)).toEqual([name]);
    const s = await until('the reminder', ended(id));
    expect(s.status).toBe('completed');
    expect(calls.filter((x) => x.instance === id).map((x) => x.step)).toEqual(['send-reminder']);
    await cleared(id);
    await settled();
    expect(await leftovers()).toEqual({ messages: 0, schedules: [] });
  });

  it('a rejected approval compensates and ends failed; its deadline schedule is deleted', async () => {
    const id = `order-rejected-${process.pid}`;
    await app.api(http('POST', `/workflows/order/instances/${id}`, { sku: 'PEN', amount: 3 }));
    await until('the approval step', at(id, 'approve'));
    await until(
      'the deadline schedule',
      async () => (await driver().list()).some((s) => s.name === scheduleName(id)) || undefined,
    );
    const r = await app.api(http('POST', `/instances/${id}/signals/approve`, { decision: 'reject' }));
    expect(r.statusCode).toBe(200);
    const s = await until('the order to end', ended(id));
    expect(s.status).toBe('failed');
    expect(calls.filter((x) => x.instance === id).map((x) => `${x.step}:${x.phase}`)).toEqual([
      'reserve-stock:run',
      'reserve-stock:compensate',
    ]);
    await cleared(id);
    await settled();
    expect(await leftovers()).toEqual({ messages: 0, schedules: [] });
  });
});

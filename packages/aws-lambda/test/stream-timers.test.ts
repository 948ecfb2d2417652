/**
 * The stream handler's timers on moto's Scheduler: the schedules of a batch's instances are
 * upserted, and deleted once the instances end, side by side (at most 8 requests at once), not one
 * after another.
 */
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import { createRunner } from '@stepfold/engine';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaApp, scheduleName } from '../src/index.js';
import { createScheduleDriver } from '../src/local/index.js';
import { clients, createHandlers, provision, recordsOf, workflows } from './support.js';

const c = clients();
let res: Awaited<ReturnType<typeof provision>>;
const pid = process.pid;

beforeAll(async () => {
  res = await provision(c, 'timers');
});
afterAll(async () => {
  await res?.drop();
});

/**
 * Counts `client`'s requests and the most in flight at once; each is held 20 ms before it is sent,
 * so requests that may overlap do.
 */
function gauge(client: SchedulerClient) {
  const send = client.send.bind(client) as (...args: unknown[]) => Promise<unknown>;
  let inFlight = 0;
  const g = { total: 0, most: 0 };
  (client as unknown as { send: (...args: unknown[]) => Promise<unknown> }).send = async (...args) => {
    g.total++;
    g.most = Math.max(g.most, ++inFlight);
    try {
      await new Promise((r) => setTimeout(r, 20));
      return await send(...args);
    } finally {
      inFlight--;
    }
  };
  return g;
}

describe('stream handler timers', () => {
  it('arms a batch’s schedules side by side, at most 8 at once, and deletes them so when the instances end', async () => {
    const scheduler = clients().scheduler;
    const app = createLambdaApp({
      workflows,
      handlers: createHandlers([]),
      dynamodb: c.dynamodb,
      table: res.table,
      sqs: c.sqs,
      queueUrl: res.queueUrl,
      queueArn: res.queueArn,
      scheduler,
      scheduleGroup: res.group,
      schedulerRoleArn: 'arn:aws:iam::123456789012:role/stepfold-scheduler',
      log: () => {},
      env: {},
    });
    const writer = createRunner({
      store: createDynamoStore({ client: c.dynamodb, table: res.table, dueShards: 1 }),
      workflows,
      execute: false,
    });
    const driver = createScheduleDriver({ scheduler: c.scheduler, sqs: c.sqs, group: res.group });
    // Twelve 45-minute sleeps: each a schedule (longer than an SQS delay can carry).
    const ids = Array.from({ length: 12 }, (_, i) => `timers-${i}-${pid}`);
    for (const id of ids) await writer.start('reminder', id);

    let g = gauge(scheduler);
    expect(await app.stream(await recordsOf(c, res.table, ids))).toEqual({ batchItemFailures: [] });
    expect(g).toEqual({ total: 12, most: 8 });
    expect((await driver.list()).map((s) => s.name).sort()).toEqual(ids.map(scheduleName).sort());

    for (const id of ids) await writer.cancel(id);
    g = gauge(scheduler);
    expect(await app.stream(await recordsOf(c, res.table, ids))).toEqual({ batchItemFailures: [] });
    expect(g).toEqual({ total: 12, most: 8 });
    expect(await driver.list()).toEqual([]);
  });
});

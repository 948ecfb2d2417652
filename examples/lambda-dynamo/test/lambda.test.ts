/**
 * The example's deployable module (src/lambda.ts) on moto, configured by the environment as in a
 * Lambda: orders through the queue (a retried charge, a declined one), an approval through the API,
 * and the reminder's 45-minute sleep as one schedule. The package's own tests cover the rest.
 */
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { DeleteScheduleGroupCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { DeleteQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { scheduleName } from '@stepfold/aws-lambda';
import {
  createScheduleDriver,
  type LocalResources,
  provisionLocally,
  serveLocally,
} from '@stepfold/aws-lambda/local';
import type { Snapshot } from '@stepfold/engine';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const moto =
  process.env.AWS_ENDPOINT_URL_DYNAMODB ?? process.env.STEPFOLD_DYNAMO_ENDPOINT ?? 'http://127.0.0.1:8000';
for (const service of ['DYNAMODB', 'DYNAMODB_STREAMS', 'SQS', 'SCHEDULER']) {
  process.env[`AWS_ENDPOINT_URL_${service}`] ??= moto;
}
process.env.AWS_REGION ??= 'us-east-1';
process.env.AWS_ACCESS_KEY_ID ??= 'stepfold';
process.env.AWS_SECRET_ACCESS_KEY ??= 'stepfold';

const clients = {
  dynamodb: new DynamoDBClient({}),
  sqs: new SQSClient({}),
  scheduler: new SchedulerClient({}),
};
const streams = new DynamoDBStreamsClient({});
const stop = new AbortController();
let r: LocalResources;
let app: typeof import('../src/lambda.js');
let serving: Promise<void>;

beforeAll(async () => {
  const suffix = `example-${process.pid}`;
  r = await provisionLocally({
    ...clients,
    table: `stepfold_lambda_${suffix}`,
    queueName: `stepfold-${suffix}`,
    group: `stepfold-${suffix}`,
  }).catch((e: unknown) => {
    throw new Error(`no moto at ${moto} (run \`bash scripts/services.sh up dynamo\`)`, { cause: e });
  });
  process.env.STEPFOLD_TABLE = r.table;
  process.env.STEPFOLD_QUEUE_URL = r.queueUrl;
  process.env.STEPFOLD_QUEUE_ARN = r.queueArn;
  process.env.STEPFOLD_SCHEDULE_GROUP = r.group;
  process.env.STEPFOLD_SCHEDULER_ROLE_ARN = 'arn:aws:iam::123456789012:role/stepfold-scheduler';
  app = await import('../src/lambda.js');
  serving = serveLocally({
    app,
    ...clients,
    streams,
    ...r,
    signal: stop.signal,
    // The table is this file's, made above: read from its first write, whenever the reader opens.
    streamFrom: 'TRIM_HORIZON',
    idleMs: 50,
    onError: console.error,
  });
});

afterAll(async () => {
  stop.abort();
  await serving;
  await clients.dynamodb.send(new DeleteTableCommand({ TableName: r.table })).catch(() => {});
  await clients.sqs.send(new DeleteQueueCommand({ QueueUrl: r.queueUrl })).catch(() => {});
  await clients.scheduler.send(new DeleteScheduleGroupCommand({ Name: r.group })).catch(() => {});
});

const store = () => createDynamoStore({ client: clients.dynamodb, table: r.table });
async function ended(id: string, ms = 30_000): Promise<Snapshot> {
  const deadline = Date.now() + ms;
  for (;;) {
    const s = await store().load(id);
    if (s && ['completed', 'failed', 'cancelled', 'aborted'].includes(s.status)) return s;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${id}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
const send = (body: unknown) =>
  clients.sqs.send(new SendMessageCommand({ QueueUrl: r.queueUrl, MessageBody: JSON.stringify(body) }));
const post = (path: string, body?: unknown) =>
  app.api({
    rawPath: path,
    body: body === undefined ? '' : JSON.stringify(body),
    requestContext: { stage: '$default', http: { method: 'POST' } },
  });

describe('the example on @stepfold/aws-lambda', () => {
  it('an order whose charge fails once completes after its 2 s backoff, sent as a delayed message', async () => {
    const id = `order-retry-${process.pid}`;
    await send({
      type: 'start',
      id,
      workflow: 'order',
      input: { sku: 'BOOK', amount: 25, chargeFailures: 1 },
    });
    const s = await ended(id);
    expect(s.status).toBe('completed');
    expect(s.output).toEqual({ sent: true, payment: 'P-BOOK-25' });
    expect(s.steps['charge-payment']?.attempt).toBe(2);
  });

  it('a declined charge compensates the reservation and ends failed', async () => {
    const id = `order-declined-${process.pid}`;
    await send({
      type: 'start',
      id,
      workflow: 'order',
      input: { sku: 'PEN', amount: 3, declineCharge: true },
    });
    const s = await ended(id);
    expect(s.status).toBe('failed');
    expect(s.error).toMatchObject({ code: 'CARD_DECLINED' });
    expect(s.steps['reserve-stock']?.status).toBe('compensated');
  });

  it('an approval through the API: a comment is kept in the inbox, the decision publishes', async () => {
    const id = `doc-${process.pid}`;
    expect((await post(`/workflows/approval/instances/${id}`, { title: 'Q3 report' })).statusCode).toBe(201);
    expect((await post(`/instances/${id}/signals/comment`, { text: 'looks good' })).statusCode).toBe(200);
    expect((await post(`/instances/${id}/signals/review`, { decision: 'approve' })).statusCode).toBe(200);
    const s = await ended(id);
    expect(s.output).toEqual({ published: 'doc:Q3 report' });
    expect(s.inbox.map((m) => m.name)).toEqual(['comment']);
  });

  it("the reminder's 45-minute sleep is one schedule for its time", async () => {
    const id = `reminder-${process.pid}`;
    await send({ type: 'start', id, workflow: 'reminder' });
    const driver = createScheduleDriver({ ...clients, group: r.group });
    const deadline = Date.now() + 30_000;
    let found: Awaited<ReturnType<typeof driver.list>>[number] | undefined;
    while (!found && Date.now() < deadline) {
      found = (await driver.list()).find((s) => s.name === scheduleName(id));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const s = await store().load(id);
    expect(found?.at).toBe(Math.ceil(s!.wakeAt! / 1000) * 1000);
  });
});

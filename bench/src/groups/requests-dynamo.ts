import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { DeleteScheduleGroupCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { DeleteQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createLambdaApp, type LambdaLogEntry } from '@stepfold/aws-lambda';
import {
  apiRequest,
  countRequests,
  pollStream,
  provisionLocally,
  sampleOrder,
  sampleOrderHandlers,
} from '@stepfold/aws-lambda/local';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { backends, serverNote } from '../backends.js';
import { percentile } from '../peers/common.js';
import { costRow, type Group, type Row } from '../row.js';

// requests-dynamo: the DynamoDB requests one order takes in the Lambda shape of
// @stepfold/aws-lambda, against the physical minimum of one write per transition. An order of
// three tasks with a human approval is started through `api`, driven by the `stream` function
// (fed the table's stream records by the package's local poller, as Lambda's event source mapping
// would), approved through `api`, and run to completion. Only the app's own DynamoDB client is
// counted (`countRequests`): the poller reads the stream on a client of its own, as Lambda's
// stream reads are not the function's requests. One order at a time. The order is the package's
// sample (`sampleOrder` of @stepfold/aws-lambda/local), the one its tests count too.

const ORDERS = 5;
/**
 * Writes the order cannot do without, one per transition of its snapshot: the start (handing off
 * reserve), reserve taken, reserve done, the approval (handing off charge), charge taken, charge
 * done (taking email in the same write), email done.
 */
const MINIMUM = 7;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`requests-dynamo: timed out waiting for ${what}`);
    await pause(20);
  }
}

/** One order's DynamoDB requests, by command. */
interface OrderCount {
  total: number;
  writes: number;
  reads: number;
  byCommand: Record<string, number>;
}

export const requestsDynamo: Group = {
  name: 'requests-dynamo',
  async run(): Promise<Row[]> {
    const b = backends.find((x) => x.name === 'dynamo')!;
    const name = 'requests-dynamo';
    const down = await b.unavailable();
    if (down) return [{ ...costRow(name, null, MINIMUM, 'requests', 0.8), note: `not measured: ${down}` }];
    const config = {
      endpoint: b.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'stepfold', secretAccessKey: 'stepfold' },
    };
    // The app's client (counted) and the harness's (the poller, provisioning, progress checks).
    const appDynamo = new DynamoDBClient({ ...config, maxAttempts: 3 });
    const dynamodb = new DynamoDBClient({ ...config, maxAttempts: 3 });
    const streams = new DynamoDBStreamsClient(config);
    const sqs = new SQSClient(config);
    const scheduler = new SchedulerClient(config);
    const run = Date.now().toString(36);
    const res = await provisionLocally({
      dynamodb,
      sqs,
      scheduler,
      table: `bench_lambda_requests_${run}`,
      queueName: `bench-lambda-${run}`,
      group: `bench-lambda-${run}`,
    });
    const log: LambdaLogEntry[] = [];
    const count = countRequests(appDynamo);
    const app = createLambdaApp({
      workflows: [sampleOrder],
      handlers: sampleOrderHandlers(),
      dynamodb: appDynamo,
      table: res.table,
      sqs,
      queueUrl: res.queueUrl,
      queueArn: res.queueArn,
      scheduler,
      scheduleGroup: res.group,
      schedulerRoleArn: 'arn:aws:iam::123456789012:role/stepfold-scheduler',
      log: (e) => log.push(e),
    });
    const stop = new AbortController();
    const polling = pollStream({
      client: dynamodb,
      streams,
      table: res.table,
      handler: app.stream,
      signal: stop.signal,
      idleMs: 50,
      onError: (e) => console.error(e),
    });
    const store = createDynamoStore({ client: dynamodb, table: res.table, dueShards: 1 });
    const logged = (id: string, action: string) => () =>
      log.some((e) => e.fn === 'stream' && e.action === action && 'id' in e && e.id === id) || undefined;
    const orders: OrderCount[] = [];
    try {
      // The poller reads from LATEST once it has opened the stream: give it a moment.
      await pause(700);
      for (let i = 0; i < ORDERS; i++) {
        const id = `order-${run}-${i}`;
        count.reset();
        const started = await app.api(
          apiRequest('POST', `/workflows/order/instances/${id}`, { sku: 'BOOK', amount: 1 }),
        );
        if (started.statusCode !== 201)
          throw new Error(`start answered ${started.statusCode}: ${started.body}`);
        // Reserve ran from the start's stream record; the approval's deadline was armed.
        await until('the approval deadline armed', logged(id, 'armed'));
        const approved = await app.api(
          apiRequest('POST', `/instances/${id}/signals/approve`, { decision: 'approve' }),
        );
        if (approved.statusCode !== 200)
          throw new Error(`approval answered ${approved.statusCode}: ${approved.body}`);
        await until('the order to complete and its deadline cleared', logged(id, 'cleared'));
        // Let the poller hand over any record still behind the last one.
        await pause(300);
        const s = await store.load(id);
        if (s?.status !== 'completed') throw new Error(`order ${id} ended ${s?.status}`);
        const by = { ...count.byCommand };
        const n = (k: string) => by[`${k}Command`] ?? 0;
        orders.push({
          total: count.total,
          writes: n('PutItem') + n('UpdateItem'),
          reads: n('GetItem') + n('Query') + n('BatchGetItem'),
          byCommand: by,
        });
      }
    } finally {
      stop.abort();
      await polling.catch(() => {});
      await dynamodb.send(new DeleteTableCommand({ TableName: res.table })).catch(() => {});
      await sqs.send(new DeleteQueueCommand({ QueueUrl: res.queueUrl })).catch(() => {});
      await scheduler.send(new DeleteScheduleGroupCommand({ Name: res.group })).catch(() => {});
      for (const c of [appDynamo, dynamodb, streams, sqs, scheduler]) c.destroy();
    }
    const totals = orders.map((o) => o.total);
    const perOrder = orders.map((o) => `${o.total} (${o.writes} writes, ${o.reads} reads)`).join(', ');
    const note = `DynamoDB requests of one order (reserve stock → approve → charge → email), started and approved through \`api\`, driven by \`stream\` fed the table's stream records (the package's local poller, on a client not counted), counted with \`countRequests\` on the app's client; ${ORDERS} orders one at a time, median; per order: ${perOrder}. Baseline: ${MINIMUM} writes, one per transition (start, reserve taken, reserve done, approval, charge taken, charge done, email done). Measured on ${serverNote(b)}; but a request count is the calls the code makes, so it is the same on AWS`;
    return [
      costRow(name, percentile(totals, 50), MINIMUM, 'requests', 0.8, {
        note,
        details: { minimum: MINIMUM, orders },
      }),
    ];
  },
};

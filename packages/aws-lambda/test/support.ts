/**
 * Test support: moto (DynamoDB, its stream, SQS and EventBridge Scheduler on one port) reached
 * through the SDK's standard endpoint variables, a fresh table, queue and schedule group per test
 * file, the workflows, and `until`. No server: the tests fail at once, saying how to start one.
 */
import {
  DeleteTableCommand,
  DynamoDBClient,
  GetItemCommand,
  ListTablesCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { DeleteScheduleGroupCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { DeleteQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { HandlerContext } from '@stepfold/engine';
import { workflow } from '@stepfold/engine';
import type { DynamoDBRecord, DynamoDBStreamEvent } from '../src/index.js';
import {
  apiRequest,
  type LocalResources,
  provisionLocally,
  type SampleOrderInput,
  sampleOrder,
  sampleOrderHandlers,
} from '../src/local/index.js';

const moto =
  process.env.AWS_ENDPOINT_URL_DYNAMODB ?? process.env.STEPFOLD_DYNAMO_ENDPOINT ?? 'http://127.0.0.1:8000';
// One set of variables everywhere: what a deployed function reads, pointed at moto.
process.env.AWS_ENDPOINT_URL_DYNAMODB ??= moto;
process.env.AWS_ENDPOINT_URL_DYNAMODB_STREAMS ??= moto;
process.env.AWS_ENDPOINT_URL_SQS ??= moto;
process.env.AWS_ENDPOINT_URL_SCHEDULER ??= moto;
process.env.AWS_REGION ??= 'us-east-1';
process.env.AWS_ACCESS_KEY_ID ??= 'stepfold';
process.env.AWS_SECRET_ACCESS_KEY ??= 'stepfold';

/** Fresh clients, configured by the environment alone (as in a Lambda). */
export function clients() {
  return {
    dynamodb: new DynamoDBClient({ maxAttempts: 2 }),
    streams: new DynamoDBStreamsClient({ maxAttempts: 2 }),
    sqs: new SQSClient({}),
    scheduler: new SchedulerClient({}),
  };
}
export type Clients = ReturnType<typeof clients>;

/** A table, queue and schedule group of this test file; `drop` deletes them. */
export async function provision(
  c: Clients,
  name: string,
): Promise<LocalResources & { drop(): Promise<void> }> {
  try {
    await c.dynamodb.send(new ListTablesCommand({ Limit: 1 }));
  } catch (e) {
    throw new Error(
      `no moto at ${moto} (set AWS_ENDPOINT_URL_DYNAMODB or run \`bash scripts/services.sh up dynamo\`)`,
      { cause: e },
    );
  }
  const suffix = `${name}-${process.pid}`;
  const r = await provisionLocally({
    ...c,
    table: `stepfold_lambda_${suffix}`,
    queueName: `stepfold-${suffix}`,
    group: `stepfold-${suffix}`,
    visibilityTimeout: 5,
  });
  return {
    ...r,
    async drop() {
      await c.dynamodb.send(new DeleteTableCommand({ TableName: r.table })).catch(() => {});
      await c.sqs.send(new DeleteQueueCommand({ QueueUrl: r.queueUrl })).catch(() => {});
      await c.scheduler.send(new DeleteScheduleGroupCommand({ Name: r.group })).catch(() => {});
    },
  };
}

/** Polls `probe` until it returns something other than undefined/false. */
export async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 30_000,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One handler call, as the handlers report it. */
export interface Call {
  instance: string;
  step: string;
  phase: 'run' | 'compensate';
  attempt: number;
}

/** Input of the order workflow. */
export type OrderInput = SampleOrderInput;

/** Order: the local entry's sample (reserve stock → approve, 48 h deadline → charge → email). */
export const orderWorkflow = sampleOrder;

/** A reminder 45 minutes after the start: longer than one SQS delay can carry. */
export const reminderWorkflow = workflow('reminder', 1)
  .sleep('wait-45-min', { ms: 45 * 60_000 })
  .task('send-reminder', { handler: 'sendReminder' })
  .build();

export const workflows = [orderWorkflow, reminderWorkflow] as const;

/** The handlers, reporting each call to `calls`. */
export function createHandlers(calls: Call[]) {
  const report = (c: HandlerContext) =>
    void calls.push({ instance: c.instanceId, step: c.step, phase: c.phase, attempt: c.attempt });
  return {
    ...sampleOrderHandlers(report),
    sendReminder: (c: HandlerContext) => {
      report(c);
      return { reminded: true };
    },
  };
}

/** An HTTP API (payload 2.0) request. */
export const http = apiRequest;

let sequence = 100;
/** The stream event the last writes of `ids` put on the stream: each item as its new image. */
export async function recordsOf(
  c: Clients,
  table: string,
  ids: readonly string[],
): Promise<DynamoDBStreamEvent> {
  const Records: DynamoDBRecord[] = [];
  for (const id of ids) {
    const { Item } = await c.dynamodb.send(
      new GetItemCommand({ TableName: table, Key: { id: { S: id } }, ConsistentRead: true }),
    );
    Records.push({
      eventName: 'MODIFY',
      dynamodb: {
        Keys: { id: { S: id } },
        NewImage: Item as never,
        SequenceNumber: String(++sequence),
        ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
      },
    });
  }
  return { Records };
}

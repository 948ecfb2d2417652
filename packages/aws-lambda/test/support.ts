/**
 * Test support: moto (DynamoDB, its stream, SQS and EventBridge Scheduler on one port) reached
 * through the SDK's standard endpoint variables, a fresh table, queue and schedule group per test
 * file, the workflows, and `until`. No server: the tests fail at once, saying how to start one.
 */
import { DeleteTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { DeleteScheduleGroupCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { DeleteQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { type HandlerContext, TaskError, workflow } from '@stepfold/engine';
import { type LocalResources, provisionLocally } from '../src/local/index.js';

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
export interface OrderInput {
  sku: string;
  amount: number;
  /** The gateway times out on this many attempts (retryable), then succeeds. */
  chargeFailures?: number;
  declineCharge?: boolean;
}

/** Order: reserve stock → a person approves (48 h deadline) → charge (backoff 1 s) → email. */
export const orderWorkflow = workflow('order', 1, {
  defaults: { retry: { maxAttempts: 3, initialMs: 1_000, factor: 2, maxMs: 10_000, jitter: 0 } },
})
  .task('reserve-stock', { handler: 'reserveStock', compensate: 'releaseStock' })
  .human('approve', { timeoutMs: 48 * 3600_000 })
  .task('charge-payment', { handler: 'chargePayment', compensate: 'refundPayment' })
  .task('send-email', { handler: 'sendEmail' })
  .build();

/** A reminder 45 minutes after the start: longer than one SQS delay can carry. */
export const reminderWorkflow = workflow('reminder', 1)
  .sleep('wait-45-min', { ms: 45 * 60_000 })
  .task('send-reminder', { handler: 'sendReminder' })
  .build();

export const workflows = [orderWorkflow, reminderWorkflow] as const;

/** The handlers, reporting each call to `calls`. */
export function createHandlers(calls: Call[]) {
  const logged =
    <O>(fn: (ctx: HandlerContext) => O) =>
    (c: HandlerContext): O => {
      calls.push({ instance: c.instanceId, step: c.step, phase: c.phase, attempt: c.attempt });
      return fn(c);
    };
  const order = (ctx: HandlerContext) => ctx.workflowInput as OrderInput;
  return {
    reserveStock: logged((ctx) => ({ reservation: `R-${order(ctx).sku}` })),
    releaseStock: logged(() => ({ released: true })),
    chargePayment: logged((ctx) => {
      const o = order(ctx);
      if (o.declineCharge) throw new TaskError('card declined', { code: 'CARD_DECLINED', retryable: false });
      if (ctx.attempt <= (o.chargeFailures ?? 0))
        throw new TaskError('gateway timeout', { code: 'GATEWAY_TIMEOUT' });
      return { paymentId: `P-${o.sku}-${o.amount}` };
    }),
    refundPayment: logged(() => ({ refunded: true })),
    sendEmail: logged(() => ({ sent: true })),
    sendReminder: logged(() => ({ reminded: true })),
  };
}

/** An HTTP API (payload 2.0) request. */
export function http(method: string, path: string, body?: unknown) {
  return {
    version: '2.0',
    rawPath: path,
    rawQueryString: '',
    headers: {},
    requestContext: { stage: '$default', http: { method, path } },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    isBase64Encoded: false,
  };
}

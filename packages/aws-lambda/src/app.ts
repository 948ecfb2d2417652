/**
 * `createLambdaApp`: the four Lambda handlers of one stepfold deployment on AWS, over one
 * DynamoDB table, one SQS queue and one EventBridge Scheduler group:
 *
 *   export const { api, queue, stream, sweep } = createLambdaApp({ workflows, handlers });
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import {
  type AnyDefinition,
  createRunner,
  defineHooks,
  type HandlersFor,
  type Runner,
  type RunnerHooks,
  type RunnerInstrumentation,
  type Store,
} from '@stepfold/engine';
import { createDynamoStore, DEFAULT_TABLE } from '@stepfold/store-dynamo';
import { createApiHandler } from './http-api.js';
import type {
  ApiGatewayEvent,
  ApiGatewayResult,
  BatchResponse,
  DynamoDBStreamEvent,
  SQSEvent,
  SweepResult,
} from './lambda-types.js';
import { jsonLog, type LambdaLog } from './log.js';
import { primedStore } from './primed-store.js';
import { createQueueHandler } from './queue-handler.js';
import { createStreamHandler } from './stream-handler.js';
import { createSweepHandler, type SweepContext } from './sweep.js';
import { createTimers, type Timers } from './timers.js';

/** The environment variables the app reads (one set everywhere: local runs, tests, the CDK construct). */
export const ENV = {
  /** The DynamoDB table (default `stepfold_instances`). */
  table: 'STEPFOLD_TABLE',
  /** The SQS queue for events and short wakes. */
  queueUrl: 'STEPFOLD_QUEUE_URL',
  /** The same queue's ARN: the target of long-timer schedules. */
  queueArn: 'STEPFOLD_QUEUE_ARN',
  /** The EventBridge Scheduler group the schedules live in (default `default`). */
  scheduleGroup: 'STEPFOLD_SCHEDULE_GROUP',
  /** The role Scheduler assumes to SendMessage to the queue. */
  schedulerRoleArn: 'STEPFOLD_SCHEDULER_ROLE_ARN',
} as const;

/** Options of {@link createLambdaApp}; each one left out comes from the environment ({@link ENV}). */
export interface LambdaAppOptions<W extends readonly AnyDefinition[]> {
  workflows: W;
  handlers: HandlersFor<W>;
  /** The store (default: the DynamoDB store on `table` with one due shard). */
  store?: Store | undefined;
  /** For the default store (default: a client configured by the SDK's environment). */
  dynamodb?: DynamoDBClient | undefined;
  table?: string | undefined;
  sqs?: SQSClient | undefined;
  queueUrl?: string | undefined;
  queueArn?: string | undefined;
  scheduler?: SchedulerClient | undefined;
  scheduleGroup?: string | undefined;
  schedulerRoleArn?: string | undefined;
  /** Arms and clears timers (default: on `sqs` and `scheduler`); tests and other transports pass their own. */
  timers?: Timers | undefined;
  kinds?: Parameters<typeof createRunner>[0]['kinds'];
  instrument?: RunnerInstrumentation | undefined;
  hooks?: RunnerHooks | undefined;
  payloads?: Parameters<typeof createRunner>[0]['payloads'];
  /** Callback tokens (`callbackTokens({ keys })`): `ctx.callback` in handlers, `POST /callbacks/:token` in the API. */
  callbacks?: Parameters<typeof createRunner>[0]['callbacks'];
  /** Epoch-ms clock (default `Date.now`). */
  clock?: (() => number) | undefined;
  log?: LambdaLog | undefined;
  /** Where options left out are read (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>> | undefined;
}

/** The app: the executing runner and the four handlers. */
export interface LambdaApp {
  /** The runner the queue, stream and sweep handlers execute with. */
  runner: Runner;
  /** API Gateway (HTTP API v2 or REST v1 proxy). */
  api: (event: ApiGatewayEvent, context?: unknown) => Promise<ApiGatewayResult>;
  /** The SQS queue's event source (`ReportBatchItemFailures`). */
  queue: (event: SQSEvent, context?: unknown) => Promise<BatchResponse>;
  /** The table's DynamoDB stream event source (`ReportBatchItemFailures`). */
  stream: (event: DynamoDBStreamEvent, context?: unknown) => Promise<BatchResponse>;
  /** A `rate(1 minute)` schedule rule. */
  sweep: (event?: unknown, context?: SweepContext) => Promise<SweepResult>;
}

/**
 * Creates the runner and the four handlers. Clients and the store are made once, at module load
 * (outside the handlers), so warm invocations reuse their connections. Timers need the queue URL
 * and ARN and the scheduler role; without them, wakes due later are left to the sweep.
 *
 * @example
 * export const { api, queue, stream, sweep } = createLambdaApp({ workflows, handlers });
 */
export function createLambdaApp<const W extends readonly AnyDefinition[]>(o: LambdaAppOptions<W>): LambdaApp {
  const env = o.env ?? process.env;
  const clock = o.clock ?? (() => Date.now());
  const log = o.log ?? jsonLog;
  const store =
    o.store ??
    createDynamoStore({
      client: o.dynamodb ?? new DynamoDBClient({}),
      table: o.table ?? env[ENV.table] ?? DEFAULT_TABLE,
      // One due shard: the sweep's idle minute is one Query (see README, costs).
      dueShards: 1,
    });
  const common = {
    store,
    workflows: o.workflows,
    clock,
    ...(o.kinds ? { kinds: o.kinds } : {}),
    ...(o.instrument ? { instrument: o.instrument } : {}),
    ...(o.hooks ? { hooks: defineHooks(o.hooks) } : {}),
    ...(o.payloads ? { payloads: o.payloads } : {}),
    ...(o.callbacks ? { callbacks: o.callbacks } : {}),
  };
  // The stream function's ticks load from the record's image (see primed-store.ts).
  const primed = primedStore(store);
  const runner = createRunner({ ...common, store: primed.store, handlers: o.handlers } as Parameters<
    typeof createRunner
  >[0]);
  const handOff = createRunner({ ...common, execute: false } as Parameters<typeof createRunner>[0]);

  const queueUrl = o.queueUrl ?? env[ENV.queueUrl];
  const queueArn = o.queueArn ?? env[ENV.queueArn];
  const roleArn = o.schedulerRoleArn ?? env[ENV.schedulerRoleArn];
  let timers = o.timers;
  if (!timers && queueUrl && queueArn && roleArn) {
    const group = o.scheduleGroup ?? env[ENV.scheduleGroup];
    timers = createTimers({
      sqs: o.sqs ?? new SQSClient({}),
      queueUrl,
      scheduler: o.scheduler ?? new SchedulerClient({}),
      queueArn,
      roleArn,
      ...(group ? { group } : {}),
    });
  }
  const api = createApiHandler({ runner: handOff, log });
  const queueHandler = createQueueHandler({ runner, timers, clock, log });
  const stream = createStreamHandler({ runner, timers, clock, log, primed });
  const sweep = createSweepHandler({ runner, clock, log });
  return {
    runner,
    api: (event) => api(event),
    queue: (event) => queueHandler(event),
    stream: (event) => stream(event),
    sweep: (event, context) => sweep(event, context),
  };
}

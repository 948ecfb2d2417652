// The consumer program the packaging check installs from tarballs: every package imported, a typed
// workflow run on the in-memory store, the harness, and each adapter constructed with its driver.
import assert from 'node:assert/strict';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { aslHandlers, fromAsl } from '@stepfold/asl';
import { createLambdaApp } from '@stepfold/aws-lambda';
import { createWorkflowHandler, createWorkflowObject } from '@stepfold/cloudflare';
import {
  composition,
  createHarness,
  createMemoryPayloadStore,
  createMemoryStore,
  createRunner,
  createTieredStore,
  createWorker,
  type HandlerContext,
  isStepfoldError,
  offloading,
  type,
  workflow,
} from '@stepfold/engine';
import { defineMigration, migrate } from '@stepfold/engine/migrations';
import { type RunWorkersOptions, serveWorker } from '@stepfold/node';
import { createOtelInstrumentation } from '@stepfold/otel';
import { createDynamoPayloadStore, createDynamoStore } from '@stepfold/store-dynamo';
import { createMongoPayloadStore, createMongoStore } from '@stepfold/store-mongo';
import { createPostgresPayloadStore, createPostgresStore } from '@stepfold/store-postgres';
import { createRedisPayloadStore, createRedisStore } from '@stepfold/store-redis';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import pg from 'pg';

const handlers = {
  reserve: async ({ input }: HandlerContext<{ sku: string }>) => ({ reservation: `R-${input.sku}` }),
  release: async (_: HandlerContext<{ sku: string }>) => null,
  charge: async ({ input }: HandlerContext<{ reservation: string }>) => ({
    paymentId: `P-${input.reservation}`,
  }),
};

const order = workflow('order', 1)
  .handlers<typeof handlers>()
  .input(type<{ sku: string }>())
  .task('reserve', { handler: 'reserve', compensate: 'release' })
  .task('charge', { handler: 'charge', input: { reservation: 'outputs.reserve.reservation' } })
  .build();

const runner = createRunner({ store: createMemoryStore(), workflows: [order], handlers });
const done = await runner.start('order', 'order-1', { sku: 'BOOK' });
assert.equal(done.status, 'completed');
assert.deepEqual(done.output, { paymentId: 'P-R-BOOK' });

// A worker over a runner that hands nothing off: it runs what another runner's write queued.
const shared = createMemoryStore();
const workerRunner = createRunner({ store: shared, workflows: [order], handlers });
const worker = createWorker({ runner: workerRunner, concurrency: 2 });
await worker.start();
const api = createRunner({ store: shared, workflows: [order], handlers, execute: false });
await api.start('order', 'order-2', { sku: 'MUG' });
await worker.idle();
assert.equal((await shared.load('order-2'))?.status, 'completed');
await worker.stop();
const fleetOptions: RunWorkersOptions = { module: 'worker.js', processes: 2 };
assert.equal(typeof serveWorker, 'function');
assert.equal(fleetOptions.processes, 2);
// The OpenTelemetry instrumentation builds on the global API's no-op tracer when no SDK is set up.
const traced = createRunner({
  store: createMemoryStore(),
  workflows: [order],
  handlers,
  instrument: createOtelInstrumentation(),
});
assert.equal((await traced.start('order', 'order-3', { sku: 'CAP' })).status, 'completed');

const h = createHarness(order).start({ sku: 'PEN' });
h.complete('reserve', { reservation: 'R-PEN' });
h.fail('charge', { message: 'declined', retryable: false });
h.compensate('reserve');
assert.equal(h.status, 'failed');
// The harness's reads and writes, typed by the definition: compiled here under the strictest options.
const attempt: number | undefined = h.snapshot.steps.charge?.attempt;
assert.equal(attempt, 1);
const reservation: string | undefined = h.output('reserve')?.reservation;
assert.equal(reservation, 'R-PEN');
assert.equal(h.snapshot.input.sku, 'PEN');
const approvals = workflow('approvals', 1)
  .handlers<typeof handlers>()
  .signal('approve', type<{ decision: 'approve' | 'reject'; by: string }>())
  .human('approve')
  .task('reserve', { handler: 'reserve', input: { sku: 'outputs.approve.by' } })
  .build();
const a = createHarness(approvals).start();
assert.deepEqual(a.awaitingSignal(), [{ step: 'approve', signal: 'approve' }]);
a.signal('approve', { decision: 'approve', by: 'ana' });
a.complete('reserve', { reservation: 'R-ana' });
assert.equal(a.output('approve')?.by, 'ana');
assert.equal(a.snapshot.steps.reserve?.output?.reservation, 'R-ana');

// Evolution entries: a migration (its recipe runs on immer, a dependency of the engine), payload
// offloading, and a tiered store over two stores.
const orderV2 = workflow('order', 2)
  .handlers<typeof handlers>()
  .input(type<{ sku: string; qty?: number }>())
  .human('approve')
  .task('reserve', { handler: 'reserve', compensate: 'release' })
  .task('charge', { handler: 'charge', input: { reservation: 'outputs.reserve.reservation' } })
  .build();
const v1 = workflow('order', 1).input(type<{ sku: string }>()).human('approve').build();
const moved = createRunner({ store: createMemoryStore(), workflows: [v1, orderV2], handlers });
await moved.start('order', 'order-m', { sku: 'INK' }, { version: 1 });
const toV2 = defineMigration({
  from: v1,
  to: orderV2,
  data(draft) {
    draft.input.qty = 1;
  },
});
const migrated = await migrate(moved, toV2, 'order-m');
assert.equal(migrated.workflow.version, 2);
assert.deepEqual(migrated.input, { sku: 'INK', qty: 1 });
const offloaded = createRunner({
  store: createMemoryStore(),
  workflows: [order],
  handlers,
  payloads: offloading({ store: createMemoryPayloadStore(), threshold: 8 }),
});
assert.equal((await offloaded.start('order', 'order-p', { sku: 'LONG-SKU-NAME' })).status, 'completed');
const tiered = createTieredStore({ hot: createMemoryStore(), cold: createMemoryStore() });
const onTiers = createRunner({ store: tiered, workflows: [order], handlers });
assert.equal((await onTiers.start('order', 'order-t', { sku: 'T' })).status, 'completed');

try {
  await runner.start('order', 'order-1', { sku: 'BOOK' });
  assert.fail('a second start of the same id must fail');
} catch (e) {
  assert.ok(isStepfoldError(e, 'ALREADY_EXISTS'));
}

// The Workers package's types hold without the Workers types: its class and fetch, made in Node.
const WorkflowInstance = createWorkflowObject({ workflows: [order], handlers });
assert.equal(typeof WorkflowInstance, 'function');
const workerFetch = createWorkflowHandler({ workflows: [order] });
assert.equal((await workerFetch.fetch(new Request('http://worker/nothing'), {})).status, 404);

// Constructing each adapter type-checks its options against the driver the user installed;
// nothing connects (the clients are lazy), so no server is needed here.
const pool = new pg.Pool({ connectionString: 'postgres://127.0.0.1:1/none' });
const redis = new Redis({ lazyConnect: true });
const mongo = new MongoClient('mongodb://127.0.0.1:1');
const dynamo = new DynamoDBClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:1' });
const stores = [
  createPostgresStore({ pool }),
  createRedisStore({ client: redis }),
  createMongoStore({ db: mongo.db('app') }),
  createDynamoStore({ client: dynamo, table: 'app' }),
];
assert.equal(stores.length, 4);
const payloadStores = [
  createPostgresPayloadStore({ pool }),
  createRedisPayloadStore({ client: redis }),
  createMongoPayloadStore({ db: mongo.db('app') }),
  createDynamoPayloadStore({ client: dynamo }),
];
assert.equal(payloadStores.length, 4);
// The Lambda app on a store of the user's choosing: its API answers a read without AWS.
const lambda = createLambdaApp({
  workflows: [order],
  handlers,
  store: createMemoryStore(),
  env: {},
  log: () => {},
});
const missing = await lambda.api({ rawPath: '/instances/none', requestContext: { http: { method: 'GET' } } });
assert.equal(missing.statusCode, 404);
await pool.end();
redis.disconnect();
await mongo.close();
dynamo.destroy();
// A Step Functions state machine, imported and run in the harness.
const machine = fromAsl({
  StartAt: 'Greet',
  States: {
    Greet: {
      Type: 'Task',
      Resource: 'arn:aws:lambda:eu-west-1:111111111111:function:greet',
      ResultPath: '$.greeting',
      End: true,
    },
  },
});
const asl = createHarness(machine.definition, { workflows: machine.workflows, kinds: [composition] }).start({
  name: 'Ada',
});
await asl.run(
  aslHandlers(machine, { resources: { greet: (input) => `hello ${(input as { name: string }).name}` } }),
);
assert.deepEqual(asl.snapshot.output, { name: 'Ada', greeting: 'hello Ada' });

console.log('pack-check app: ok');

// A bench worker process for wake-latency-dynamo (forked by that group): a runner and a
// `createWorker` over the DynamoDB store on BENCH_TABLE, following the table's stream when
// BENCH_STREAMS=1, else polling at the worker's default pace. The `hit` handler reports the
// latency from the signal's send time (wall clock, shared by both processes) to its own start.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { createRunner, createWorker } from '@stepfold/engine';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { wallMs } from '../peers/common.js';
import { signalProbe } from './probes.js';

/** What this process tells the parent. */
export type DynamoWakeReply =
  | { type: 'ready' }
  | { type: 'hit'; ms: number; id: string }
  | { type: 'stopped' };

const config = {
  endpoint: process.env['BENCH_DYNAMO_URL'] ?? 'http://127.0.0.1:8000',
  region: 'us-east-1',
  credentials: { accessKeyId: 'stepfold', secretAccessKey: 'stepfold' },
};
const client = new DynamoDBClient({ ...config, maxAttempts: 3 });
const streams = process.env['BENCH_STREAMS'] === '1' ? new DynamoDBStreamsClient(config) : undefined;
const store = createDynamoStore({
  client,
  table: process.env['BENCH_TABLE']!,
  ...(streams ? { streams: { client: streams } } : {}),
});
const send = (m: DynamoWakeReply) => process.send!(m);
const runner = createRunner({
  store,
  workflows: [signalProbe],
  handlers: {
    hit: ({ input, instanceId }) => {
      send({ type: 'hit', ms: wallMs() - (input as { sentAt: number }).sentAt, id: instanceId });
      return null;
    },
  },
});
const worker = createWorker({ runner, concurrency: 2 });
await worker.start();
send({ type: 'ready' });
process.on('message', async (m: { cmd: 'stop' }) => {
  if (m.cmd !== 'stop') return;
  await worker.stop();
  await store.close();
  streams?.destroy();
  client.destroy();
  send({ type: 'stopped' });
  process.exit(0);
});

import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { createRunner } from '@stepfold/engine';
import { createDynamoStore, DEFAULT_STREAM_IDLE_MS } from '@stepfold/store-dynamo';
import { backends, serverNote } from '../backends.js';
import type { DynamoWakeReply } from '../fleet/dynamo-wake-child.js';
import { signalProbe } from '../fleet/probes.js';
import { percentile, wallMs } from '../peers/common.js';
import { costRow, type Group, type Row } from '../row.js';

// wake-latency-dynamo: how long from a signal sent by `runner.send` in this process (a runner
// with `execute: false`: one UpdateItem appends it to the instance's inbox) to the handler it
// dispatches starting in a worker process, on the DynamoDB store. Ours: the worker follows the
// table's DynamoDB stream (`streams` option, default idle pause). Baseline: the same worker code
// on another table without a stream, polling at the worker's default pace (50 ms growing to 5 s),
// whose polls may claim a sent signal only after SENT_CLAIM_AFTER_MS. Both worker processes run
// throughout; rounds alternate ABBA. A sample is the handler's wall clock at entry minus the
// send time, one at a time with a 10–30 ms pause between.

const CHILD = fileURLToPath(new URL('../fleet/dynamo-wake-child.js', import.meta.url));
// Polling samples take a second or more each: fewer of them.
const STREAM_SAMPLES = 50;
const POLL_SAMPLES = 15;
const ROUNDS = 4;
const WARM = 5;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Side {
  table: string;
  child: ChildProcess;
  hit(id: string): Promise<number>;
  api: ReturnType<typeof createRunner>;
}

async function side(url: string, client: DynamoDBClient, table: string, streams?: DynamoDBStreamsClient) {
  // The table (with its stream for ours) is made here, before the worker process starts.
  const store = createDynamoStore({ client, table, ...(streams ? { streams: { client: streams } } : {}) });
  await store.setup();
  const child = fork(CHILD, [], {
    env: { ...process.env, BENCH_DYNAMO_URL: url, BENCH_TABLE: table, BENCH_STREAMS: streams ? '1' : '0' },
  });
  const waiting = new Map<string, (ms: number) => void>();
  child.on('message', (m: DynamoWakeReply) => {
    if (m.type !== 'hit') return;
    waiting.get(m.id)?.(m.ms);
    waiting.delete(m.id);
  });
  const [ready] = (await once(child, 'message')) as [DynamoWakeReply];
  if (ready.type !== 'ready') throw new Error(`dynamo wake child: ${JSON.stringify(ready)}`);
  const api = createRunner({
    store,
    workflows: [signalProbe],
    handlers: { hit: () => null },
    execute: false,
  });
  const hit = (id: string) => new Promise<number>((resolve) => waiting.set(id, resolve));
  return { table, child, hit, api } satisfies Side;
}

async function samples(s: Side, n: number, tag: string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n + WARM; i++) {
    const id = `${tag}-${i}`;
    await s.api.start('bench-signal', id);
    await pause(10 + Math.random() * 20);
    const arrived = s.hit(id);
    await s.api.send(id, 'go', { sentAt: wallMs() });
    const ms = await arrived;
    if (i >= WARM) out.push(ms);
  }
  return out;
}

async function stop(s: Side): Promise<void> {
  if (s.child.exitCode !== null) return;
  s.child.send({ cmd: 'stop' });
  await once(s.child, 'exit');
}

export const wakeLatencyDynamo: Group = {
  name: 'wake-latency-dynamo',
  async run(): Promise<Row[]> {
    const b = backends.find((x) => x.name === 'dynamo')!;
    const names = ['wake-latency-dynamo-p50', 'wake-latency-dynamo-p99'];
    const down = await b.unavailable();
    if (down)
      return names.map((n) => ({ ...costRow(n, null, null, 'ms', 1), note: `not measured: ${down}` }));
    const config = {
      endpoint: b.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'stepfold', secretAccessKey: 'stepfold' },
    };
    const client = new DynamoDBClient({ ...config, maxAttempts: 3 });
    const streams = new DynamoDBStreamsClient(config);
    const run = Date.now().toString(36);
    const sides: Side[] = [];
    const ours: number[] = [];
    const polling: number[] = [];
    try {
      const streamed = await side(b.url, client, `wake_latency_streams_${run}`, streams);
      sides.push(streamed);
      const polled = await side(b.url, client, `wake_latency_poll_${run}`);
      sides.push(polled);
      for (let r = 0; r < ROUNDS; r++) {
        const streamFirst = r % 2 === 0 ? r % 4 === 0 : r % 4 === 3;
        const order = streamFirst ? ['s', 'p'] : ['p', 's'];
        for (const which of order) {
          if (which === 's') ours.push(...(await samples(streamed, STREAM_SAMPLES, `s${r}-${run}`)));
          else polling.push(...(await samples(polled, POLL_SAMPLES, `p${r}-${run}`)));
        }
        process.stderr.write(`  wake-latency-dynamo: round ${r + 1}/${ROUNDS} done\n`);
      }
    } finally {
      for (const s of sides) await stop(s).catch(() => {});
      for (const s of sides)
        await client.send(new DeleteTableCommand({ TableName: s.table })).catch(() => {});
      streams.destroy();
      client.destroy();
    }
    const note = `signal sent (runner.send) by another process → handler start in a worker process (createWorker) on the DynamoDB store (${serverNote(b)}): ours follows the table's stream (idle pause ${DEFAULT_STREAM_IDLE_MS} ms), the baseline polls at the worker's default pace (no stream; a poll claims a sent signal after 1 s); ${ROUNDS}×${STREAM_SAMPLES} samples of ours, ${ROUNDS}×${POLL_SAMPLES} of the baseline, rounds alternating ABBA`;
    const details = { streams: ours, polling };
    return [
      costRow(names[0]!, percentile(ours, 50), percentile(polling, 50), 'ms', 1, { note, details }),
      costRow(names[1]!, percentile(ours, 99), percentile(polling, 99), 'ms', 1, { note }),
    ];
  },
};

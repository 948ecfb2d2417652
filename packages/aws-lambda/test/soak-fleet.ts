/**
 * The serverless soak's fleet: the app's `queue`, `stream` and `sweep` functions run as Lambda runs
 * them, in containers (one app each, made at "cold start", reused while warm), fed by event sources
 * in miniature that can kill an invocation and drop stream records.
 *
 * A killed invocation, simulated in-process: before it runs, an invocation may be given a kill
 * point: the k-th AWS request it makes (k from 1 to 12) in `before` mode (the request never leaves)
 * or `after` mode (it is sent and may apply, but its answer never comes back), or in `effect` mode
 * the moment its first handler has applied its effect (before the result is written). From then
 * on every request of the container's clients stays pending forever and its handlers apply
 * nothing and never return: the container is frozen, as a killed process,
 * and is never invoked again (the next invocation cold-starts a new one). Requests already on the
 * wire when it died still reach moto, as they would. The event source sees the invocation fail:
 * SQS messages are not deleted and come back after the visibility timeout; a stream batch is
 * retried whole (Lambda retries a batch whose invocation failed). The work it abandoned is what a
 * real kill abandons: a task taken and never reported (due again at its deadline, the sweep's), a
 * wake never armed, a tick never written.
 *
 * Dropped records: each stream record is, at `dropRate`, never delivered to the function at all
 * (a record Lambda gave up on, or one written before the mapping opened); the sweep must find what
 * it announced.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { AnyDefinition, HandlersFor, RunnerHooks } from '@stepfold/engine';
import { createLambdaApp, type DynamoDBRecord, type LambdaApp } from '../src/index.js';
import { createScheduleDriver, type LocalResources, pollStream } from '../src/local/index.js';

/** What a container's handlers and hooks see of it. */
export interface ContainerProbe {
  /** False once the container was killed: it runs and records nothing further. */
  alive(): boolean;
  /** A handler applied its effect (the invocation may be killed right here, before its result is written). */
  applied(): void;
}

/** Where a kill lands (see the header). */
export type KillMode = 'before' | 'after' | 'effect';

/** The three functions the event sources invoke. */
export type FunctionName = 'queue' | 'stream' | 'sweep';

/** Options of {@link startFleet}. */
export interface FleetOptions<W extends readonly AnyDefinition[]> {
  resources: LocalResources;
  roleArn: string;
  workflows: W;
  /** The handlers and the completion hooks of one container, told of its life by `probe`. */
  container(name: string, probe: ContainerProbe): { handlers: HandlersFor<W>; hooks: RunnerHooks };
  /** Fraction of invocations given a kill point. */
  killRate: number;
  /** Fraction of stream records never delivered. */
  dropRate: number;
  /** Period of the sweep, ms. */
  sweepMs: number;
  /** Stream batches handled side by side, by instance (Lambda's `ParallelizationFactor`). */
  streamLanes: number;
  /** Concurrent SQS pollers (Lambda's concurrency on the queue). */
  queuePollers: number;
  /** Seeded randomness of the faults. */
  random: () => number;
}

/** What the fleet did. */
export interface FleetStats {
  invocations: Record<FunctionName, number>;
  kills: Record<FunctionName, number>;
  /** Kills by where they landed: at a request not sent, at one sent, after a handler's effect. */
  killedAt: Record<KillMode, number>;
  /** Invocations that threw (a function error, retried like a kill). */
  errors: Record<FunctionName, number>;
  coldStarts: number;
  records: { read: number; dropped: number; retriedBatches: number; maxLagMs: number; meanLagMs: number };
  messages: { received: number; deleted: number };
  swept: number;
  fired: number;
}

/** A running fleet: `stop()` ends its pollers and resolves with its stats. */
export interface Fleet {
  stats: FleetStats;
  stop(): Promise<FleetStats>;
}

const frozen = () => new Promise<never>(() => {});
type Sendable = { send: (...args: never[]) => Promise<unknown> };

/** One Lambda container: an app over clients that freeze when it dies. */
class Container {
  dead = false;
  app!: LambdaApp;
  private requests = 0;
  private killAt: { at: number; mode: KillMode } | undefined;
  /** Where this container died, if it did by its kill point. */
  killedBy: KillMode | undefined;
  private die!: () => void;
  readonly killed = new Promise<void>((r) => {
    this.die = r;
  });

  /** Makes every request of `client` go through the kill gate. */
  gate<C extends Sendable>(client: C): C {
    const send = client.send.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { send: (...args: unknown[]) => Promise<unknown> }).send = (...args: unknown[]) => {
      if (this.dead) return frozen();
      this.requests++;
      if (this.killAt && this.killAt.mode !== 'effect' && this.requests >= this.killAt.at) {
        if (this.killAt.mode === 'after') send(...args).catch(() => {});
        this.killedBy = this.killAt.mode;
        this.kill();
        return frozen();
      }
      return send(...args);
    };
    return client;
  }

  /** Before an invocation: maybe a kill point in it. */
  arm(killRate: number, random: () => number) {
    this.requests = 0;
    const modes = ['before', 'after', 'effect'] as const;
    this.killAt =
      random() < killRate
        ? { at: 1 + Math.floor(random() * 12), mode: modes[Math.floor(random() * 3)]! }
        : undefined;
  }

  /** A handler applied its effect: in `effect` mode, the container dies before the result is written. */
  applied() {
    if (this.killAt?.mode !== 'effect' || this.dead) return;
    this.killedBy = 'effect';
    this.kill();
  }

  kill() {
    this.dead = true;
    this.die();
  }
}

/** The lane of a record: by its instance id, so one instance's records stay in order. */
function laneOf(record: DynamoDBRecord, lanes: number): number {
  const id = record.dynamodb?.Keys?.['id']?.S ?? '';
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (Math.imul(h, 31) + id.charCodeAt(i)) >>> 0;
  return h % lanes;
}

/** Starts the fleet on `o.resources`; the stream is read from its start (a fresh table). */
export function startFleet<const W extends readonly AnyDefinition[]>(o: FleetOptions<W>): Fleet {
  const zero = () => ({ queue: 0, stream: 0, sweep: 0 });
  const stats: FleetStats = {
    invocations: zero(),
    kills: zero(),
    killedAt: { before: 0, after: 0, effect: 0 },
    errors: zero(),
    coldStarts: 0,
    records: { read: 0, dropped: 0, retriedBatches: 0, maxLagMs: 0, meanLagMs: 0 },
    messages: { received: 0, deleted: 0 },
    swept: 0,
    fired: 0,
  };
  const stop = new AbortController();
  // A pause that ends at once when the fleet stops.
  const pause = (ms: number) => sleep(ms, undefined, { signal: stop.signal }).catch(() => {});
  const warm: Record<FunctionName, Container[]> = { queue: [], stream: [], sweep: [] };
  const r = o.resources;
  // The event sources' own clients (Lambda's pollers): never killed.
  const dynamodb = new DynamoDBClient({ maxAttempts: 2 });
  const streams = new DynamoDBStreamsClient({ maxAttempts: 2 });
  const sqs = new SQSClient({});
  const scheduler = new SchedulerClient({});

  const coldStart = (fn: FunctionName): Container => {
    const c = new Container();
    const name = `${fn}#${++stats.coldStarts}`;
    const { handlers, hooks } = o.container(name, { alive: () => !c.dead, applied: () => c.applied() });
    c.app = createLambdaApp({
      workflows: o.workflows,
      handlers,
      hooks,
      dynamodb: c.gate(new DynamoDBClient({ maxAttempts: 2 })),
      sqs: c.gate(new SQSClient({})),
      scheduler: c.gate(new SchedulerClient({})),
      table: r.table,
      queueUrl: r.queueUrl,
      queueArn: r.queueArn,
      scheduleGroup: r.group,
      schedulerRoleArn: o.roleArn,
      log: () => {},
      env: {},
    });
    return c;
  };

  /** One invocation of `fn` in a warm container (or a cold one); killed or failed: `undefined`. */
  async function invoke<T>(fn: FunctionName, call: (app: LambdaApp) => Promise<T>): Promise<T | undefined> {
    const c = warm[fn].pop() ?? coldStart(fn);
    stats.invocations[fn]++;
    c.arm(o.killRate, o.random);
    const running = call(c.app);
    const outcome = await Promise.race([
      running.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      c.killed.then(() => ({ killed: true })),
    ]);
    if ('killed' in outcome || c.dead) {
      stats.kills[fn]++;
      if (c.killedBy) stats.killedAt[c.killedBy]++;
      return undefined;
    }
    if ('error' in outcome) {
      stats.errors[fn]++;
      c.kill(); // a function error: Lambda may recycle the container; here it always does
      return undefined;
    }
    warm[fn].push(c);
    return outcome.value;
  }

  async function pollQueue() {
    while (!stop.signal.aborted) {
      try {
        const out = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: r.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
        );
        const messages = out.Messages ?? [];
        if (!messages.length) {
          await pause(100);
          continue;
        }
        stats.messages.received += messages.length;
        const Records = messages.map((m) => ({
          messageId: m.MessageId!,
          receiptHandle: m.ReceiptHandle!,
          body: m.Body ?? '',
        }));
        const result = await invoke('queue', (app) => app.queue({ Records }));
        // Killed: nothing deleted, the whole batch comes back after the visibility timeout.
        if (!result) continue;
        const failed = new Set(result.batchItemFailures.map((f) => f.itemIdentifier));
        const done = Records.filter((m) => !failed.has(m.messageId));
        if (done.length) {
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: r.queueUrl,
              Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.receiptHandle })),
            }),
          );
          stats.messages.deleted += done.length;
        }
      } catch {
        await pause(300);
      }
    }
  }

  /**
   * The stream as Lambda's mapping delivers it, read by the package's local poller from the first
   * write: some records dropped, the rest in lanes by instance (Lambda's parallelization factor:
   * batches of different instances side by side, those of one instance in order).
   */
  function readStream() {
    return pollStream({
      client: dynamodb,
      streams,
      table: r.table,
      from: 'TRIM_HORIZON',
      signal: stop.signal,
      idleMs: 100,
      handler: async ({ Records: records }) => {
        // How far behind the writes the function reads (the record's time is in whole seconds).
        const now = Date.now();
        for (const x of records) {
          const at = x.dynamodb?.ApproximateCreationDateTime;
          const lag = at === undefined ? 0 : now - at * 1000;
          stats.records.maxLagMs = Math.max(stats.records.maxLagMs, lag);
          stats.records.meanLagMs += (lag - stats.records.meanLagMs) / (stats.records.read + 1);
          stats.records.read++;
        }
        const delivered = records.filter(() => o.random() >= o.dropRate);
        stats.records.dropped += records.length - delivered.length;
        const lanes = Array.from({ length: o.streamLanes }, () => [] as DynamoDBRecord[]);
        for (const x of delivered) lanes[laneOf(x, o.streamLanes)]!.push(x);
        await Promise.all(lanes.map(deliverInOrder));
        return { batchItemFailures: [] };
      },
    });
  }

  /** Each batch of `records` until it succeeds: a failed or killed invocation is retried whole,
   * reported failures from the first failed record on. */
  async function deliverInOrder(records: DynamoDBRecord[]) {
    for (let i = 0; i < records.length; i += 10) {
      let batch = records.slice(i, i + 10);
      while (batch.length && !stop.signal.aborted) {
        const result = await invoke('stream', (app) => app.stream({ Records: batch }));
        if (result && !result.batchItemFailures.length) break;
        stats.records.retriedBatches++;
        if (result) {
          const from = BigInt(result.batchItemFailures[0]!.itemIdentifier);
          batch = batch.filter((x) => BigInt(x.dynamodb?.SequenceNumber ?? '0') >= from);
        }
        await pause(200);
      }
    }
  }

  async function sweepOnPeriod() {
    while (!stop.signal.aborted) {
      await pause(o.sweepMs);
      if (stop.signal.aborted) break;
      const result = await invoke('sweep', (app) =>
        app.sweep(undefined, { getRemainingTimeInMillis: () => 60_000 }),
      );
      stats.swept += result?.ticked.length ?? 0;
    }
  }

  async function fireSchedules() {
    const driver = createScheduleDriver({ scheduler, sqs, group: r.group });
    while (!stop.signal.aborted) {
      stats.fired += (await driver.fireDue().catch(() => [])).length;
      await pause(400);
    }
  }

  const running = Promise.all([
    ...Array.from({ length: o.queuePollers }, pollQueue),
    readStream(),
    sweepOnPeriod(),
    fireSchedules(),
  ]);
  return {
    stats,
    async stop() {
      stop.abort();
      await running;
      for (const c of Object.values(warm).flat()) c.kill();
      return stats;
    },
  };
}

import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { LambdaApp } from '../app.js';
import { createScheduleDriver } from './schedule-driver.js';
import { pollQueue } from './sqs-poller.js';
import { pollStream } from './stream-poller.js';

/** Options of {@link serveLocally}. */
export interface ServeLocallyOptions {
  app: Pick<LambdaApp, 'queue' | 'stream' | 'sweep'>;
  dynamodb: DynamoDBClient;
  streams: DynamoDBStreamsClient;
  sqs: SQSClient;
  scheduler: SchedulerClient;
  table: string;
  queueUrl: string;
  group?: string | undefined;
  signal: AbortSignal;
  /** The sweep's period, ms (default 60 000, as the `rate(1 minute)` rule). */
  sweepMs?: number | undefined;
  /** How often due schedules are fired, ms (default 200). */
  scheduleMs?: number | undefined;
  /**
   * Where the stream poller first reads each shard: `LATEST` (default: writes from now on) or
   * `TRIM_HORIZON` (every record of the last 24 h: a table made just before is read from its first
   * write, so nothing written before the reader opened is left to the sweep).
   */
  streamFrom?: 'LATEST' | 'TRIM_HORIZON' | undefined;
  /** Pause of the stream and queue pollers after an empty pass, ms (default 100). */
  idleMs?: number | undefined;
  onError?: ((error: unknown) => void) | undefined;
}

/**
 * Runs the app's queue, stream and sweep handlers on this machine, as Lambda's event sources
 * would, until `signal` aborts: the queue poller, the stream poller (from now on, or from the
 * stream's start with `streamFrom: 'TRIM_HORIZON'`), a schedule driver that fires due schedules
 * into the queue, and the sweep on its period. The API handler is called directly (or put behind
 * any HTTP server).
 */
export async function serveLocally(o: ServeLocallyOptions): Promise<void> {
  const onError = o.onError ?? ((e: unknown) => console.error(e));
  const idleMs = o.idleMs ?? 100;
  const driver = createScheduleDriver({ scheduler: o.scheduler, sqs: o.sqs, group: o.group });
  const sweeping = (async () => {
    while (!o.signal.aborted) {
      await new Promise<void>((r) => {
        const timer = setTimeout(r, o.sweepMs ?? 60_000);
        o.signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            r();
          },
          { once: true },
        );
      });
      if (!o.signal.aborted) await o.app.sweep().catch(onError);
    }
  })();
  await Promise.all([
    pollQueue({
      client: o.sqs,
      queueUrl: o.queueUrl,
      handler: o.app.queue,
      signal: o.signal,
      idleMs,
      onError,
    }),
    pollStream({
      client: o.dynamodb,
      streams: o.streams,
      table: o.table,
      handler: o.app.stream,
      signal: o.signal,
      from: o.streamFrom,
      idleMs,
      onError,
    }),
    driver.run(o.signal, o.scheduleMs ?? 200, onError),
    sweeping,
  ]);
}

/**
 * The Lambda handler for the table's DynamoDB stream: each record whose write announced a wake
 * (see `noticeOfImage` of `@stepfold/store-dynamo`) is a notice. Those due now (a task handed to
 * any worker, a `runner.send`, a timer already past) are driven by a worker that lives for the
 * invocation and hears exactly these notices; a timer due later goes on the wake queue as a
 * delayed `wake` message, which the SQS handler applies when it is due.
 */
import type { Runner, WakeListener, WakeNotice, WakeSource } from '@stepfold/engine';
import { createWorker } from '@stepfold/engine';
import { noticeOfImage } from '@stepfold/store-dynamo';
import { delaySecondsUntil, type WakeQueue } from './handler.js';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from './stream-types.js';

/** What the stream handler did with one record (records that announce nothing are not logged). */
export type StreamLogEntry =
  /** Due now: handed to the invocation's worker. */
  | { action: 'drive'; sequence: string; id: string; at: number; sent: boolean }
  /** Due later: a delayed wake message on the queue. */
  | { action: 'deferred'; sequence: string; id: string; at: number; delaySeconds: number }
  /** Due later and no queue: left to polling (`runner.processDue` on a schedule). */
  | { action: 'left'; sequence: string; id: string; at: number }
  /** The queue refused the wake: the batch is retried from this record. */
  | { action: 'retry'; sequence: string; id: string; error: string };

/** Options of {@link createStreamHandler}. */
export interface StreamHandlerOptions {
  runner: Runner;
  /** Where timers due later go as delayed wake messages (see `createSqsQueue`); without it they are left to polling. */
  queue?: WakeQueue | undefined;
  /** Epoch-ms clock; must be the runner's clock (default `Date.now`). */
  clock?: () => number;
  /** Longest delay the queue accepts, in seconds (SQS: 900). */
  maxDelaySeconds?: number;
  log?: (entry: StreamLogEntry) => void;
}

/** A wake source that delivers only what it is given: the notices of one batch. */
function batchSource(): WakeSource & { deliver(notices: readonly WakeNotice[]): void } {
  let listener: WakeListener | undefined;
  return {
    async subscribe(l) {
      listener = l;
      return {
        async close() {
          listener = undefined;
        },
      };
    },
    deliver(notices) {
      for (const n of notices) listener?.wake(n);
    },
  };
}

/** The record's time in epoch ms (Lambda gives seconds), else `now`. */
function recordTime(record: DynamoDBRecord, now: number): number {
  const s = record.dynamodb?.ApproximateCreationDateTime;
  return typeof s === 'number' && Number.isFinite(s) ? Math.min(now, s * 1000) : now;
}

/**
 * Creates `handler(event)` for a DynamoDB stream event source with `ReportBatchItemFailures`.
 * The instances the due notices name are ticked, their sent signals applied and their handlers
 * run within the invocation (the worker's `idle()`: one single-lane poll after the work, which also
 * picks up anything a lost record left due). Only a wake the queue refused fails the batch.
 *
 * @example
 * const handler = createStreamHandler({ runner, queue: createSqsQueue(sqs, queueUrl) });
 */
export function createStreamHandler(
  options: StreamHandlerOptions,
): (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse> {
  const { runner, queue } = options;
  const clock = options.clock ?? (() => Date.now());
  const maxDelay = options.maxDelaySeconds ?? 900;
  const log = options.log ?? ((e: StreamLogEntry) => console.log(JSON.stringify(e)));

  return async (event) => {
    const now = clock();
    const due: WakeNotice[] = [];
    for (const record of event.Records) {
      if (record.eventName === 'REMOVE') continue;
      const notice = noticeOfImage(record.dynamodb?.NewImage, recordTime(record, now));
      if (!notice?.id) continue;
      const sequence = record.dynamodb?.SequenceNumber ?? '';
      const { id, at } = notice;
      if (at <= now) {
        due.push(notice);
        log({ action: 'drive', sequence, id, at, sent: notice.sent !== undefined });
      } else if (!queue) {
        log({ action: 'left', sequence, id, at });
      } else {
        const delaySeconds = delaySecondsUntil(at, now, maxDelay);
        try {
          await queue.send({ type: 'wake', id, at }, delaySeconds);
          log({ action: 'deferred', sequence, id, at, delaySeconds });
        } catch (e) {
          log({ action: 'retry', sequence, id, error: e instanceof Error ? e.message : String(e) });
          return { batchItemFailures: [{ itemIdentifier: sequence }] };
        }
      }
    }
    if (due.length) {
      const source = batchSource();
      // One lane and short pauses: the invocation ends once nothing the notices named is left.
      const worker = createWorker({
        runner,
        wakes: source,
        lanes: 'single',
        clock,
        poll: { minMs: 20, maxMs: 100, maxWithWakesMs: 100 },
      });
      await worker.start();
      try {
        source.deliver(due);
        await worker.idle();
      } finally {
        await worker.stop();
      }
    }
    return { batchItemFailures: [] };
  };
}

/**
 * The handler of the table's DynamoDB stream (new images). Per instance, the batch's latest image
 * decides: an ended (or deleted) instance has its schedule deleted; a write that announced a wake
 * due now (a task handed off, a timer past) is ticked in this invocation, its handlers run; a wake
 * due later is armed (a delayed message or the instance's schedule); signals sent to the inbox
 * (`runner.send` from another service) are applied by a worker for the invocation. It returns once
 * that work is done: it polls nothing (the sweep finds what a lost record left due).
 */
import {
  createWorker,
  isStepfoldError,
  isTerminal,
  type Runner,
  type Snapshot,
  type Status,
  type WakeListener,
  type WakeNotice,
  type WakeSource,
} from '@stepfold/engine';
import { type ImageValue, NOTE_ATTRIBUTE, noticeOfImage, snapshotOfImage } from '@stepfold/store-dynamo';
import type { BatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from './lambda-types.js';
import { type LambdaLog, messageOf } from './log.js';
import type { PrimedStore } from './primed-store.js';
import type { Timers } from './timers.js';

/** Options of {@link createStreamHandler}. */
export interface StreamHandlerOptions {
  /** The executing runner. */
  runner: Runner;
  /** Where wakes due later are armed; without it they are left to the sweep. */
  timers: Timers | undefined;
  clock: () => number;
  log: LambdaLog;
  /** Instances ticked at once (default 10). */
  concurrency?: number | undefined;
  /** Timers armed or cleared at once (Scheduler and SQS requests in flight; default 8). */
  timerConcurrency?: number | undefined;
  /** The runner's store, primed with a record's image so that the tick it drives reads nothing. */
  primed?: PrimedStore | undefined;
}

/** The record's time in epoch ms (Lambda gives seconds), else `now`. */
function recordTime(record: DynamoDBRecord, now: number): number {
  const s = record.dynamodb?.ApproximateCreationDateTime;
  return typeof s === 'number' && Number.isFinite(s) ? Math.min(now, s * 1000) : now;
}

/**
 * Whether the instance cannot end before its wake at `at`: every timer due then is a retry backoff
 * or a sleep, and no task runs (a task's failure could end it first). Read from the image's
 * snapshot; anything unreadable counts as "may end first" (a schedule, which is deleted at the end).
 */
export function isBlockingWake(snapshotJson: string | undefined, at: number): boolean {
  if (snapshotJson === undefined) return false;
  let s: Pick<Snapshot, 'timers' | 'tasks'>;
  try {
    s = JSON.parse(snapshotJson) as Snapshot;
  } catch {
    return false;
  }
  if (!Array.isArray(s.timers) || typeof s.tasks !== 'object' || s.tasks === null) return false;
  if (Object.values(s.tasks).some((t) => !t.queued)) return false;
  const due = s.timers.filter((t) => t.at === at);
  return due.length > 0 && due.every((t) => t.kind === 'retry' || t.kind === 'sleep');
}

/** A wake source that delivers only what it is given: the inbox notices of one batch. */
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

/** Runs `fn` over `items`, at most `n` at once; resolves with the items whose run threw. */
async function eachLimited<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>) {
  const failed: Array<{ item: T; error: unknown }> = [];
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await fn(item).catch((error: unknown) => void failed.push({ item, error }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, lane));
  return failed;
}

const earliest = (a: string | undefined, b: string): string =>
  a === undefined || BigInt(b) < BigInt(a) ? b : a;

/**
 * Creates the handler for a DynamoDB stream event source with `ReportBatchItemFailures`. A record
 * whose work failed transiently (the queue or Scheduler refused a wake, a tick found the store
 * down) fails the batch from the earliest such record; records are hints, so nothing else does.
 */
export function createStreamHandler(
  o: StreamHandlerOptions,
): (event: DynamoDBStreamEvent) => Promise<BatchResponse> {
  const { runner, timers, log } = o;
  const concurrency = o.concurrency ?? 10;
  const timerConcurrency = o.timerConcurrency ?? 8;

  return async (event) => {
    const now = o.clock();
    // The latest record of each instance: its image is the instance as the last write left it.
    const latest = new Map<string, DynamoDBRecord>();
    for (const record of event.Records) {
      const keys: Record<string, ImageValue> | undefined = record.dynamodb?.Keys ?? record.dynamodb?.NewImage;
      const id = keys?.['id']?.S;
      // '#' starts the store's own items (the settings, flow keys and holders): no instance's id.
      if (id === undefined || id.startsWith('#')) continue;
      latest.delete(id);
      latest.set(id, record);
    }
    let failedFrom: string | undefined;
    const fail = (record: DynamoDBRecord, id: string, e: unknown) => {
      const sequence = record.dynamodb?.SequenceNumber ?? '0';
      log({ fn: 'stream', action: 'retry', messageId: `${id}@${sequence}`, error: messageOf(e) });
      failedFrom = earliest(failedFrom, sequence);
    };
    const due: Array<{ id: string; record: DynamoDBRecord; at: number }> = [];
    const sends: Array<{ notice: WakeNotice; record: DynamoDBRecord }> = [];
    // Each instance has one record here (its latest), so one timer request at most: they go out
    // side by side, and an instance's own requests keep their order across batches.
    const timerWork: Array<{ id: string; record: DynamoDBRecord; run: () => Promise<void> }> = [];
    for (const [id, record] of latest) {
      const image = record.dynamodb?.NewImage;
      const status = image?.['status']?.S as Status | undefined;
      try {
        if (record.eventName === 'REMOVE' || (status !== undefined && isTerminal(status))) {
          if (timers) {
            timerWork.push({
              id,
              record,
              run: async () => log({ fn: 'stream', action: 'cleared', id, existed: await timers.clear(id) }),
            });
          }
          continue;
        }
        const notice = noticeOfImage(image, recordTime(record, now));
        if (!notice) continue;
        if (notice.sent) sends.push({ notice, record });
        // A task handed off is due at its dispatch time, by the clock of the function that wrote
        // it: taken now, whatever the skew between the two clocks.
        else if (notice.at <= now || image?.[NOTE_ATTRIBUTE]?.S === 'h')
          due.push({ id, record, at: notice.at });
        else if (timers) {
          const version = Number(image?.['version']?.N ?? 0);
          const blocking = !notice.busy && isBlockingWake(image?.['snapshot']?.S, notice.at);
          const at = notice.at;
          timerWork.push({
            id,
            record,
            run: async () => {
              const armed = await timers.arm({ id, at, version, blocking }, now);
              log({ fn: 'stream', action: 'armed', id, at, version, how: armed.how });
            },
          });
        }
      } catch (e) {
        fail(record, id, e);
      }
    }
    for (const { item, error } of await eachLimited(timerWork, timerConcurrency, (t) => t.run())) {
      fail(item.record, item.id, error);
    }
    if (due.length) {
      log({ fn: 'stream', action: 'drive', ids: due.map((d) => d.id) });
      const failed = await eachLimited(due, concurrency, async ({ id, at, record }) => {
        // A tick takes what is due from the instance as the record's write left it (no read); one
        // another invocation took first, or a newer write, is a write conflict the runner
        // re-applies after a real load (then finds nothing due): no handler runs twice.
        const snapshot = o.primed ? snapshotOfImage(record.dynamodb?.NewImage, id) : undefined;
        if (snapshot) o.primed?.prime(snapshot);
        await runner.handle({ type: 'tick', id, now: Math.max(o.clock(), at), wait: 'write' });
      });
      o.primed?.clear();
      for (const { item, error } of failed) {
        if (isStepfoldError(error, 'NOT_FOUND')) continue;
        fail(item.record, item.id, error);
      }
    }
    if (sends.length) {
      // Applying signals sent to the inbox is a worker's job (claims of the inbox by id), so these
      // few take a worker for the invocation; its idle() polls once more before it resolves.
      log({ fn: 'stream', action: 'inbox', ids: sends.map((s) => s.notice.id ?? '') });
      const source = batchSource();
      const worker = createWorker({
        runner,
        wakes: source,
        lanes: 'single',
        clock: o.clock,
        poll: { minMs: 20, maxMs: 100, maxWithWakesMs: 100 },
      });
      await worker.start();
      try {
        source.deliver(sends.map((s) => s.notice));
        await worker.idle();
      } finally {
        await worker.stop();
      }
    }
    await runner.idle();
    return { batchItemFailures: failedFrom === undefined ? [] : [{ itemIdentifier: failedFrom }] };
  };
}

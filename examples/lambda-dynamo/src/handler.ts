/**
 * The Lambda handler: SQS messages in (one stepfold event each), applied through the runner on
 * the DynamoDB store; the instance's next `wakeAt` goes back on the queue as a delayed `wake`
 * message. SQS caps a message delay at 900 s, so a longer wait travels as a chain of wake
 * messages: each carries its target time, and one that arrives early is sent again with the
 * remaining delay.
 */
import { isStepfoldError, type Runner, type RunnerMessage, type Snapshot } from '@stepfold/engine';
import { parseMessage, type QueueMessage } from './messages.js';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from './sqs-types.js';

/** Where the handler sends wake messages (an SQS queue; see `createSqsQueue`). */
export interface WakeQueue {
  send(message: QueueMessage, delaySeconds: number): Promise<void>;
}

/** What the handler did with one message; the default logger prints it as a JSON line. */
export type HandlerLogEntry =
  | {
      action: 'applied';
      messageId: string;
      type: QueueMessage['type'];
      id: string;
      version: number;
      status: string;
    }
  /** A start for an id that already exists: a redelivery (or an id clash); nothing applied. */
  | { action: 'duplicate'; messageId: string; type: 'start'; id: string; version: number }
  /** A wake that arrived before its time, sent again with the remaining delay. */
  | { action: 'rearmed'; messageId: string; id: string; at: number; delaySeconds: number }
  /** A wake for a version the instance has moved past: whoever wrote the newer version sent its own wake. */
  | { action: 'stale'; messageId: string; id: string; version: number; current: number | null }
  | { action: 'scheduled'; messageId: string; id: string; at: number; version: number; delaySeconds: number }
  /** Bad input (malformed body, unknown workflow or id, …): dropped, never retried. */
  | { action: 'rejected'; messageId: string; code: string; message: string }
  /** A transient failure (store unavailable, conflicts exhausted): the message comes back. */
  | { action: 'retry'; messageId: string; error: string };

/** Options of {@link createHandler}. */
export interface HandlerOptions {
  runner: Runner;
  queue: WakeQueue;
  /** Epoch-ms clock; must be the runner's clock (default `Date.now`). */
  clock?: () => number;
  /** Longest delay the queue accepts, in seconds (SQS: 900). */
  maxDelaySeconds?: number;
  log?: (entry: HandlerLogEntry) => void;
}

/** Seconds until `at`, rounded up (never early), between 0 and `max`. */
export function delaySecondsUntil(at: number, now: number, max: number): number {
  return Math.min(max, Math.max(0, Math.ceil((at - now) / 1000)));
}

/**
 * Creates `handler(event)` for an SQS event source with `ReportBatchItemFailures`. Records are
 * processed one after another. Bad messages are logged and dropped (in production, let a
 * redrive policy catch what keeps failing); transient failures are reported in
 * `batchItemFailures` so SQS delivers them again.
 */
export function createHandler(options: HandlerOptions): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const { runner, queue } = options;
  const clock = options.clock ?? (() => Date.now());
  const maxDelay = options.maxDelaySeconds ?? 900;
  const log = options.log ?? ((e: HandlerLogEntry) => console.log(JSON.stringify(e)));

  /** Sends the wake the snapshot asks for, tagged with its version. */
  async function schedule(record: SQSRecord, s: Snapshot): Promise<void> {
    if (s.wakeAt === null) return;
    const delaySeconds = delaySecondsUntil(s.wakeAt, clock(), maxDelay);
    await queue.send({ type: 'wake', id: s.id, at: s.wakeAt, version: s.version }, delaySeconds);
    log({
      action: 'scheduled',
      messageId: record.messageId,
      id: s.id,
      at: s.wakeAt,
      version: s.version,
      delaySeconds,
    });
  }

  async function apply(record: SQSRecord, m: QueueMessage): Promise<void> {
    let event: RunnerMessage;
    switch (m.type) {
      case 'wake': {
        const now = clock();
        if (now < m.at) {
          const delaySeconds = delaySecondsUntil(m.at, now, maxDelay);
          await queue.send(m, delaySeconds);
          log({ action: 'rearmed', messageId: record.messageId, id: m.id, at: m.at, delaySeconds });
          return;
        }
        if (m.version !== undefined) {
          const s = await runner.get(m.id);
          if (s?.version !== m.version) {
            log({
              action: 'stale',
              messageId: record.messageId,
              id: m.id,
              version: m.version,
              current: s?.version ?? null,
            });
            return;
          }
        }
        event = { type: 'tick', id: m.id };
        break;
      }
      case 'signal':
        // Without an id of its own, a signal is deduplicated by the SQS message id: a redelivered
        // message is the same signal, and the reducer ignores a signal id it has already seen.
        event = { ...m, signalId: m.signalId ?? `sqs:${record.messageId}` };
        break;
      default:
        event = m;
    }
    let s: Snapshot;
    try {
      s = (await runner.handle(event)).snapshot;
    } catch (e) {
      if (m.type !== 'start' || !isStepfoldError(e, 'ALREADY_EXISTS')) throw e;
      const existing = await runner.get(m.id);
      if (!existing) throw e;
      s = existing;
      log({ action: 'duplicate', messageId: record.messageId, type: 'start', id: m.id, version: s.version });
      // Still (re)send its wake: the first delivery may have died between its write and its send.
      await schedule(record, s);
      return;
    }
    log({
      action: 'applied',
      messageId: record.messageId,
      type: m.type,
      id: m.id,
      version: s.version,
      status: s.status,
    });
    await schedule(record, s);
  }

  return async (event) => {
    const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      try {
        await apply(record, parseMessage(record.body));
      } catch (e) {
        if (isStepfoldError(e) && !e.retryable) {
          log({ action: 'rejected', messageId: record.messageId, code: e.code, message: e.message });
        } else {
          log({
            action: 'retry',
            messageId: record.messageId,
            error: e instanceof Error ? e.message : String(e),
          });
          batchItemFailures.push({ itemIdentifier: record.messageId });
        }
      }
    }
    return { batchItemFailures };
  };
}

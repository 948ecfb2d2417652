/**
 * The SQS handler: each message is one stepfold event for one instance (start, signal, wake,
 * cancel, abort, requeue), applied through the executing runner; the handlers it dispatches run in
 * the invocation, which returns once they have reported back. It arms no timer: every write is on
 * the table's stream, whose handler does (one place, so a wake is never armed twice).
 */
import { isStepfoldError, type Runner, type RunnerMessage } from '@stepfold/engine';
import type { BatchResponse, SQSEvent, SQSRecord } from './lambda-types.js';
import { type LambdaLog, messageOf } from './log.js';
import { parseMessage, type QueueMessage } from './messages.js';
import { delaySecondsUntil, type Timers } from './timers.js';

/** Options of {@link createQueueHandler}. */
export interface QueueHandlerOptions {
  /** The executing runner. */
  runner: Runner;
  /** Where an early wake is sent again (only `send` is used). */
  timers: Pick<Timers, 'send'> | undefined;
  clock: () => number;
  log: LambdaLog;
}

/**
 * Creates the handler for an SQS event source with `ReportBatchItemFailures`. Bad messages are
 * logged and dropped; transient failures (`STORE_UNAVAILABLE`, conflicts beyond the runner's
 * retries, a queue that refused a re-armed wake) are listed in `batchItemFailures`.
 */
export function createQueueHandler(o: QueueHandlerOptions): (event: SQSEvent) => Promise<BatchResponse> {
  const { runner, log } = o;

  async function apply(record: SQSRecord, m: QueueMessage): Promise<void> {
    let event: RunnerMessage;
    switch (m.type) {
      case 'wake': {
        const now = o.clock();
        if (now < m.at && o.timers) {
          // Early (clock skew): sent again for the rest, rather than ticked to no effect.
          const delaySeconds = delaySecondsUntil(m.at, now);
          await o.timers.send(m, delaySeconds);
          log({
            fn: 'queue',
            action: 'rearmed',
            messageId: record.messageId,
            id: m.id,
            at: m.at,
            delaySeconds,
          });
          return;
        }
        // A stale wake (the version moved on) loads the instance, finds nothing due and writes nothing.
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
    try {
      // 'write': answered from the write itself (no read back); the handlers are awaited below.
      const r = await runner.handle({ ...event, wait: 'write' });
      log({
        fn: 'queue',
        action: 'applied',
        messageId: record.messageId,
        type: m.type,
        id: m.id,
        written: r.written,
      });
    } catch (e) {
      if (m.type !== 'start' || !isStepfoldError(e, 'ALREADY_EXISTS')) throw e;
      log({ fn: 'queue', action: 'duplicate', messageId: record.messageId, id: m.id });
    }
  }

  return async (event) => {
    const batchItemFailures: BatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      try {
        await apply(record, parseMessage(record.body));
      } catch (e) {
        if (isStepfoldError(e) && !e.retryable) {
          log({
            fn: 'queue',
            action: 'rejected',
            messageId: record.messageId,
            code: e.code,
            message: e.message,
          });
        } else {
          log({ fn: 'queue', action: 'retry', messageId: record.messageId, error: messageOf(e) });
          batchItemFailures.push({ itemIdentifier: record.messageId });
        }
      }
    }
    // The handlers the batch dispatched (and those their results dispatched) report back first.
    await runner.idle();
    return { batchItemFailures };
  };
}

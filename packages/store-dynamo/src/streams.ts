import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { WakeListener, WakeSource, WakeSubscription } from '@stepfold/engine';
import { type Backoff, backoffDelay, OUTAGE_BACKOFF, storeGuard } from '@stepfold/engine';
import { isUnavailable } from './map-error.js';
import type { StreamsClient } from './stream-client.js';
import { noticeOfImage } from './stream-notice.js';
import { openStreamReader, type StreamReader } from './stream-reader.js';

/**
 * Default pause after a pass over the stream that found nothing: 250 ms, so an idle subscriber
 * sends 4 GetRecords a second per open shard (about 10.4 million a month each). Streams has no
 * push: this is the price of a wake within a quarter second.
 */
export const DEFAULT_STREAM_IDLE_MS = 250;

/** Reopen delays of a subscription whose stream reads fail: the engine's outage schedule. */
export const STREAM_BACKOFF: Backoff = OUTAGE_BACKOFF;

/** Options of the store's `streams`: what wake notices are read with. */
export interface DynamoStreamsOptions {
  /**
   * A DynamoDB Streams client for the table's account, region and endpoint (package
   * `@aws-sdk/client-dynamodb-streams`); never destroyed by the store.
   */
  client: StreamsClient;
  /** Pause after a pass that found no records, in ms (default {@link DEFAULT_STREAM_IDLE_MS}). */
  idleMs?: number | undefined;
  /** Reopen delays after a failed read (default {@link STREAM_BACKOFF}). */
  backoff?: Backoff | undefined;
}

// Refusals of the read rate, not of the stream: more than two readers on a shard are throttled.
const THROTTLED = new Set(['LimitExceededException', 'ThrottlingException']);

/** Calls a listener method; a listener that throws must not end the subscription. */
function notify(call: () => void): void {
  try {
    call();
  } catch {
    // Its own failure: notices are hints, polling stays the source of truth.
  }
}

/** An abortable pause: resolves after `ms`, or at once when `signal` fires. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/**
 * The store's {@link WakeSource} over the table's DynamoDB stream. Each subscription reads every
 * shard from where the stream is now (LATEST), in passes of one GetRecords per shard, pausing
 * `idleMs` after a pass with no records, and turns each record's new image into the notice the
 * write announced. A failed read: `lost`, then the stream is opened again (from LATEST) on the
 * backoff schedule, then `restored`; records written meanwhile are gone, polling finds them.
 */
export function dynamoWakeSource(
  client: DynamoDBClient,
  table: string,
  options: DynamoStreamsOptions,
): WakeSource & { closeAll(): Promise<void> } {
  const guard = storeGuard('dynamodb', isUnavailable);
  const idleMs = options.idleMs ?? DEFAULT_STREAM_IDLE_MS;
  if (!(Number.isFinite(idleMs) && idleMs >= 0)) throw new RangeError('streams.idleMs must be a number >= 0');
  const backoff = options.backoff ?? STREAM_BACKOFF;
  const live = new Set<WakeSubscription>();

  return {
    async subscribe(listener: WakeListener): Promise<WakeSubscription> {
      const stop = new AbortController();
      const open = () => openStreamReader({ client, streams: options.client, table, signal: stop.signal });
      let reader: StreamReader | undefined = await guard('wakes.subscribe', open);

      const deliver = (records: Awaited<ReturnType<StreamReader['read']>>) => {
        const now = Date.now();
        for (const r of records) {
          if (stop.signal.aborted) return;
          const at = r.dynamodb?.ApproximateCreationDateTime?.getTime();
          const notice = noticeOfImage(r.dynamodb?.NewImage, Math.min(now, at ?? now));
          if (notice) notify(() => listener.wake(notice));
        }
      };

      const loop = async () => {
        let failures = 0;
        while (!stop.signal.aborted) {
          try {
            if (!reader) {
              reader = await open();
              failures = 0;
              notify(() => listener.restored?.());
            }
            const records = await reader.read();
            failures = 0;
            deliver(records);
            if (records.length === 0) await pause(idleMs, stop.signal);
          } catch (e) {
            if (stop.signal.aborted) return;
            const name = (e as { name?: unknown }).name;
            if (reader && !THROTTLED.has(String(name))) {
              // The iterators are no good any more (the server went away, an iterator expired or was
              // trimmed): open the stream again from LATEST.
              reader = undefined;
              notify(() => listener.lost?.(e));
            }
            await pause(backoffDelay(backoff, failures++), stop.signal);
          }
        }
      };
      const running = loop();

      const subscription: WakeSubscription = {
        async close() {
          live.delete(subscription);
          stop.abort();
          await running;
        },
      };
      live.add(subscription);
      return subscription;
    },
    async closeAll() {
      await Promise.all([...live].map((s) => s.close()));
    },
  };
}

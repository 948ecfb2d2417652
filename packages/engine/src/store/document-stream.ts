import type { StoredStreamEntry, StoredStreamPage, StreamDriver } from './store-driver.js';
import { fenceOf } from './stream-chunks.js';

// The stream calls of a store without transactions over several records (MongoDB, DynamoDB): the
// stream is a log of batches, one record per append keyed by its first offset, each carrying the
// fences of every step as they stand after it. An append reads the last batch, decides (fenced, a
// reset, the next offset) on it, and inserts its batch at the end under the condition that no
// batch starts there: of two appenders at one end one wins, the other reads on and tries again.
// Since a batch can only be inserted right after the batch before it, the log has no holes, and
// the last batch's fences are the stream's: a stale read of the last batch only costs a retry.

/** One append as stored: the entries at offsets `first` to `next - 1`. */
export interface StreamBatch {
  first: number;
  next: number;
  step: string;
  attempt: number;
  /** The entry at `first` is a reset of `attempt`; the chunks follow it. */
  reset: boolean;
  /** The chunks' JSON texts. */
  chunks: string[];
  /** The newest attempt begun of every step of the stream, this batch's included. */
  fences: Record<string, number>;
}

/** The database calls of a store whose stream is a log of batch records. */
export interface StreamDocumentCalls {
  /** The batch that starts at `first`, read consistently, or null. */
  get(instance: string, first: number): Promise<StreamBatch | null>;
  /** The stream's last batch, or null; may lag behind the latest append (a later batch may exist). */
  last(instance: string): Promise<StreamBatch | null>;
  /** Stores `batch` unless a batch that starts at `batch.first` is stored: false then. */
  insert(instance: string, batch: StreamBatch): Promise<boolean>;
  /** Up to `limit` batches with entries at `from` or later, in order; may miss the latest ones. */
  after(instance: string, from: number, limit: number): Promise<StreamBatch[]>;
  /** Deletes every batch of the stream. */
  remove(instance: string): Promise<void>;
}

/** Options of {@link documentStream}. */
export interface DocumentStreamOptions {
  /** Names the store in the error of a stream contended past the retries. */
  name: string;
  /** How many times one append reads on and tries again after losing a race (default 100). */
  retries?: number | undefined;
}

/** Batches one read asks for at a time. */
const READ_BATCHES = 32;

/** The entries of `batch`, each with its offset. */
function entriesOf(batch: StreamBatch): StoredStreamEntry[] {
  const { step, attempt } = batch;
  const out: StoredStreamEntry[] = [];
  let offset = batch.first;
  if (batch.reset) out.push({ offset: offset++, step, attempt, data: null });
  for (const data of batch.chunks) out.push({ offset: offset++, step, attempt, data });
  return out;
}

/** The stream calls over a store's batch records (see the module notes). */
export function documentStream(calls: StreamDocumentCalls, options: DocumentStreamOptions): StreamDriver {
  const retries = options.retries ?? 100;

  /** The true last batch, reading on from `from` (a batch known to be stored) while a later one exists. */
  const readOn = async (instance: string, from: StreamBatch): Promise<StreamBatch> => {
    let last = from;
    for (let next = await calls.get(instance, last.next); next; next = await calls.get(instance, last.next))
      last = next;
    return last;
  };

  return {
    async append(instance, step, attempt, chunks) {
      let last = await calls.last(instance);
      for (let tries = 0; tries <= retries; tries++) {
        const fences = last?.fences ?? {};
        const fence = fenceOf(fences, step);
        if (fence > attempt) return { fenced: fence };
        const end = last?.next ?? 0;
        const reset = attempt > Math.max(fence, 1);
        if (!reset && !chunks.length) {
          // Nothing to write, if `last` is the end: a batch after it may carry a newer fence.
          const after = await calls.get(instance, end);
          if (!after) return end;
          last = await readOn(instance, after);
          continue;
        }
        const batch: StreamBatch = {
          first: end,
          next: end + (reset ? 1 : 0) + chunks.length,
          step,
          attempt,
          reset,
          chunks: [...chunks],
          fences: { ...fences, [step]: attempt },
        };
        if (await calls.insert(instance, batch)) return batch.next;
        // Another append took this end: read on from its batch, and decide again.
        const taken = await calls.get(instance, end);
        last = taken ? await readOn(instance, taken) : await calls.last(instance);
        if (tries > 2) await new Promise((r) => setTimeout(r, Math.min(50, tries * 2)));
      }
      throw new Error(
        `${options.name} stream: ${instance} was appended to by others ${retries + 1} times in a row`,
      );
    },
    async read(instance, from, limit): Promise<StoredStreamPage> {
      const entries: StoredStreamEntry[] = [];
      let expected = from;
      let fences: Record<string, number> = {};
      let seenAll = false;
      // Batches a few at a time: each holds up to 256 entries, and a page may need only some.
      reading: while (entries.length < limit) {
        const want = Math.min(READ_BATCHES, limit - entries.length);
        const batches = await calls.after(instance, expected, want);
        for (const b of batches) {
          if (b.next <= expected) continue;
          // A hole (a batch not visible yet): stop before it.
          if (b.first > expected) break reading;
          fences = b.fences;
          for (const e of entriesOf(b)) {
            if (e.offset < expected || entries.length === limit) continue;
            entries.push(e);
            expected = e.offset + 1;
          }
          if (entries.length === limit) {
            seenAll = batches.length < want && b === batches[batches.length - 1] && expected === b.next;
            break reading;
          }
        }
        if (batches.length < want) {
          seenAll = true;
          break;
        }
      }
      // Not read to the end: a reset further on may supersede chunks of this page.
      if (!seenAll && entries.length) {
        const newest = (await calls.last(instance))?.fences ?? {};
        const merged = new Map(Object.entries(fences));
        for (const [step, attempt] of Object.entries(newest))
          if (attempt > (merged.get(step) ?? 0)) merged.set(step, attempt);
        fences = Object.fromEntries(merged);
      }
      return { entries, fences };
    },
    remove: (instance) => calls.remove(instance),
  };
}

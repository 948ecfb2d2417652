import { documentStream, type StreamBatch, type StreamDriver } from '@stepfold/engine';
import type { Collection, IndexDescription } from 'mongodb';
import { isDuplicateKey } from './map-error.js';

// The stream capability on MongoDB: the engine's log of batches (see `documentStream`), one
// document per append in a collection of its own, keyed by the instance and the batch's first
// offset, so two appends at one end cannot both be inserted.

/** One batch of an instance's stream (see `StreamBatch`); `x` holds the fences as JSON (steps may hold `.` or `$`). */
export interface StreamBatchDocument {
  _id: string;
  /** The instance. */
  i: string;
  f: number;
  n: number;
  s: string;
  a: number;
  r: boolean;
  c: string[];
  x: string;
}

/** The stream collection's index: an instance's batches in offset order (by where they end). */
export const STREAM_INDEXES: IndexDescription[] = [{ key: { i: 1, n: 1 }, name: 'stepfold_stream' }];

// '#' is in no instance id; 16 digits keep every safe offset in order as text.
const idOf = (instance: string, first: number) => `${instance}#${String(first).padStart(16, '0')}`;

const batchOf = (d: StreamBatchDocument): StreamBatch => ({
  first: d.f,
  next: d.n,
  step: d.s,
  attempt: d.a,
  reset: d.r,
  chunks: d.c,
  fences: JSON.parse(d.x) as Record<string, number>,
});

/** The stream calls on `docs`, with their `setup`. */
export function mongoStream(
  docs: Collection<StreamBatchDocument>,
): StreamDriver & { setup(): Promise<void> } {
  const driver = documentStream(
    {
      async get(instance, first) {
        const d = await docs.findOne({ _id: idOf(instance, first) });
        return d ? batchOf(d) : null;
      },
      async last(instance) {
        const [d] = await docs.find({ i: instance }).sort({ n: -1 }).limit(1).toArray();
        return d ? batchOf(d) : null;
      },
      async insert(instance, b) {
        try {
          await docs.insertOne({
            _id: idOf(instance, b.first),
            i: instance,
            f: b.first,
            n: b.next,
            s: b.step,
            a: b.attempt,
            r: b.reset,
            c: b.chunks,
            x: JSON.stringify(b.fences),
          });
          return true;
        } catch (e) {
          if (isDuplicateKey(e)) return false;
          throw e;
        }
      },
      async after(instance, from, limit) {
        const found = await docs
          .find({ i: instance, n: { $gt: from } })
          .sort({ n: 1 })
          .limit(limit)
          .toArray();
        return found.map(batchOf);
      },
      async remove(instance) {
        await docs.deleteMany({ i: instance });
      },
    },
    { name: 'mongodb' },
  );
  return {
    ...driver,
    async setup() {
      for (const index of STREAM_INDEXES) await docs.createIndexes([index]);
    },
  };
}

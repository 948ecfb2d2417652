import type { StreamEntry, StreamStore } from './stream.js';

// The end of an instance's stream, as the inspector and `stepfold show --stream` print it: what a
// model or a long step wrote last. A stream
// has no "read backwards", so the last offset is found by reads of one entry (doubling, then
// halving: about 2·log2(length) small reads, whatever the stream's length), then one read of the
// tail. Reads skip the chunks of superseded attempts, so a probe may land past some.

/** Entries a probe reads at most: enough to step over a superseded attempt's chunks in one read. */
const PROBE = 100;

/** Entries {@link readStreamTail} reads by default. */
export const TAIL_ENTRIES = 50;

/** The last entries of an instance's stream, and the offset of the very last; null when it has none. */
export interface StreamTail {
  entries: StreamEntry[];
  last: number;
}

/**
 * The offset of the first entry at or after `from`, or undefined when the stream holds none there.
 * A page may come back empty short of the end (a store that skipped superseded chunks after its
 * limit): read on from its `next`.
 */
async function firstFrom(stream: StreamStore, id: string, from: number): Promise<number | undefined> {
  for (let at = from; ; ) {
    const page = await stream.read(id, { from: at, limit: PROBE });
    if (page.entries[0]) return page.entries[0].offset;
    if (page.end || page.next <= at) return undefined;
    at = page.next;
  }
}

/**
 * Reads the last {@link TAIL_ENTRIES} (or `keep`) entries of `id`'s stream; null when it is empty.
 *
 * @example
 * const tail = store.stream ? await readStreamTail(store.stream, 'chat-7') : null;
 * for (const e of tail?.entries ?? []) console.log(e.offset, e.type === 'chunk' ? e.data : 'reset');
 */
export async function readStreamTail(
  stream: StreamStore,
  id: string,
  keep: number = TAIL_ENTRIES,
): Promise<StreamTail | null> {
  let last = await firstFrom(stream, id, 0);
  if (last === undefined) return null;
  // Doubling: `last` is an entry's offset, `end` an offset with nothing at or after it.
  let end = Math.max(1, last * 2);
  for (;;) {
    const at = await firstFrom(stream, id, end);
    if (at === undefined) break;
    last = at;
    end = at * 2 + 1;
  }
  // Halving between them.
  let lo = last + 1;
  while (lo < end) {
    const mid = Math.floor((lo + end) / 2);
    const at = await firstFrom(stream, id, mid);
    if (at === undefined) end = mid;
    else {
      last = at;
      lo = at + 1;
    }
  }
  const page = await stream.read(id, { from: Math.max(0, last - keep + 1), limit: keep });
  return { entries: page.entries, last };
}

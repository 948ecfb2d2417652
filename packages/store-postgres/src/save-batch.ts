import type { Row } from './encode.js';

/** A conditional save waiting for its statement: the row, the version it expects, its notice. */
export interface QueuedSave {
  row: Row;
  expected: number;
  /** NOTIFY payload when the write announces a wake time. */
  payload: string | undefined;
}

/** How a {@link SaveBatcher} writes: one save alone, or several in one statement. */
export interface SaveWriter {
  /** Most saves one statement carries. */
  maxRows: number;
  /** Most JSON characters one statement carries; a larger save still goes, alone. */
  maxChars: number;
  /** Writes one save with the single-row statement: true when written, false when its condition failed. */
  one(save: QueuedSave): Promise<boolean>;
  /** Writes several saves (distinct ids) in one statement, atomically: the ids it wrote. */
  many(saves: QueuedSave[]): Promise<Set<string>>;
  /** Whether saves of a failed `many` should be tried one by one (false: fail them all with it). */
  retryAlone(error: unknown): boolean;
}

/** Group commit of conditional saves (see {@link createSaveBatcher}). */
export interface SaveBatcher {
  /** Writes `save` alone or with others: true when written, false when its condition failed. */
  write(save: QueuedSave): Promise<boolean>;
}

interface Waiting extends QueuedSave {
  done(written: boolean): void;
  fail(error: unknown): void;
}

// The next turn of the event loop, after the I/O callbacks of this one: the callers a batch
// resolved have queued their next saves by then. setTimeout(0) waits ≥ 1 ms in Node, so only
// where setImmediate is missing.
const nextTurn: (f: () => void) => void =
  typeof (globalThis as { setImmediate?: unknown }).setImmediate === 'function'
    ? (f) => (globalThis as unknown as { setImmediate(f: () => void): void }).setImmediate(f)
    : (f) => setTimeout(f, 0);

/**
 * Group commit for one store. A save that finds no statement out and none waiting goes at once,
 * alone, so a lone or sequential writer waits for nothing. Saves arriving while one is out wait
 * and go together in one statement on the turn after it returns (the callers it answered join
 * them), so under load the rows per statement grow instead of the statements. Never two saves of one id in a
 * statement: the second would be judged against the row as it was before the first.
 */
export function createSaveBatcher(writer: SaveWriter): SaveBatcher {
  let queue: Waiting[] = [];
  let out = 0;
  // A turn is scheduled to send the queue.
  let scheduled = false;

  const settleAlone = (w: Waiting) =>
    writer.one(w).then(
      (written) => w.done(written),
      (e) => w.fail(e),
    );

  const send = async (batch: Waiting[]): Promise<void> => {
    if (batch.length === 1) return settleAlone(batch[0]!);
    let written: Set<string>;
    try {
      written = await writer.many(batch);
    } catch (e) {
      // Nothing of the statement was written: each save gets its own answer (its own error,
      // a JSONB refusal goes to the text column) unless the server is away for all of them.
      if (!writer.retryAlone(e)) {
        for (const w of batch) w.fail(e);
        return;
      }
      await Promise.all(batch.map(settleAlone));
      return;
    }
    for (const w of batch) w.done(written.has(w.row.id));
  };

  const take = (): Waiting[] => {
    const batch: Waiting[] = [];
    const ids = new Set<string>();
    const rest: Waiting[] = [];
    let chars = 0;
    for (const w of queue) {
      const fits =
        batch.length === 0 || (batch.length < writer.maxRows && chars + w.row.json.length <= writer.maxChars);
      if (fits && !ids.has(w.row.id)) {
        ids.add(w.row.id);
        chars += w.row.json.length;
        batch.push(w);
      } else rest.push(w);
    }
    queue = rest;
    return batch;
  };

  const run = (batch: Waiting[]) => {
    out++;
    void send(batch).finally(() => {
      out--;
      // Saves waited for this statement: send them on the next turn, with whatever the callers
      // it answered add meanwhile. With none waiting, the next save goes alone at once.
      if (queue.length > 0 && !scheduled) {
        scheduled = true;
        nextTurn(flush);
      }
    });
  };

  function flush(): void {
    scheduled = false;
    // One statement, and more only while a full one's worth of rows still waits.
    do run(take());
    while (queue.length >= writer.maxRows);
  }

  return {
    write(save) {
      return new Promise<boolean>((done, fail) => {
        const w: Waiting = { ...save, done, fail };
        if (out === 0 && !scheduled) run([w]);
        else queue.push(w);
      });
    },
  };
}

import { documentStream, type StreamBatch, type StreamDocumentCalls } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// `documentStream` over batch records in a Map, with the lag of a database whose index is
// eventually consistent (DynamoDB's list index): `last` and `after` may not show the latest
// batches yet. The log must still get no holes, no overlaps, and no chunk past a fence.

interface Lagging extends StreamDocumentCalls {
  batches: StreamBatch[];
  /** Batches `last` and `after` do not show yet (the newest first, or any by first offset). */
  hidden: Set<number>;
  /** While set, `last` answers this batch instead of the true last one. */
  staleLast: StreamBatch | null;
}

function lagging(): Lagging {
  const t: Lagging = {
    batches: [],
    hidden: new Set(),
    staleLast: null,
    get: async (_i, first) => t.batches.find((b) => b.first === first) ?? null,
    last: async () => t.staleLast ?? t.batches.filter((b) => !t.hidden.has(b.first)).at(-1) ?? null,
    async insert(_i, batch) {
      await new Promise((r) => setTimeout(r, Math.random() * 3));
      if (t.batches.some((b) => b.first === batch.first)) return false;
      t.batches.push(batch);
      t.batches.sort((a, b) => a.first - b.first);
      return true;
    },
    after: async (_i, from, limit) =>
      t.batches.filter((b) => b.next > from && !t.hidden.has(b.first)).slice(0, limit),
    remove: async () => {
      t.batches = [];
    },
  };
  return t;
}

const texts = (n: number, tag: string) => Array.from({ length: n }, (_, i) => JSON.stringify(`${tag}${i}`));

describe('documentStream', () => {
  it('appends at the true end after a stale read of the last batch, and fences through it', async () => {
    const t = lagging();
    const driver = documentStream(t, { name: 'test' });
    expect(await driver.append('i', 'model', 1, texts(2, 'a'))).toBe(2);
    const stale = t.batches[0]!;
    expect(await driver.append('i', 'model', 2, texts(1, 'b'))).toBe(4); // a reset, then b0
    t.staleLast = stale; // the index still shows only attempt 1's batch
    // Attempt 1 reads a last batch where it may append: its put at offset 2 loses, it reads on, and is fenced.
    expect(await driver.append('i', 'model', 1, texts(1, 'late'))).toEqual({ fenced: 2 });
    expect(await driver.append('i', 'model', 2, texts(1, 'c'))).toBe(5);
    // A begin with nothing to write still reads on to the newest fence.
    expect(await driver.append('i', 'model', 1, [])).toEqual({ fenced: 2 });
    expect(t.batches.map((b) => [b.first, b.next])).toEqual([
      [0, 2],
      [2, 4],
      [4, 5],
    ]);
  });

  it('reads up to the first batch the index does not show yet, and the rest once it does', async () => {
    const t = lagging();
    const driver = documentStream(t, { name: 'test' });
    await driver.append('i', 's', 1, texts(2, 'a'));
    await driver.append('i', 's', 1, texts(2, 'b'));
    await driver.append('i', 's', 1, texts(2, 'c'));
    t.hidden.add(2);
    expect((await driver.read('i', 0, 100)).entries.map((e) => e.offset)).toEqual([0, 1]);
    expect((await driver.read('i', 2, 100)).entries).toEqual([]);
    t.hidden.clear();
    expect((await driver.read('i', 1, 100)).entries.map((e) => e.offset)).toEqual([1, 2, 3, 4, 5]);
    expect((await driver.read('i', 3, 2)).entries.map((e) => [e.offset, e.data])).toEqual([
      [3, '"b1"'],
      [4, '"c0"'],
    ]);
  });

  it('takes the fences of the stream end for a page that stops before it', async () => {
    const t = lagging();
    const driver = documentStream(t, { name: 'test' });
    await driver.append('i', 's', 1, texts(40, 'a'));
    await driver.append('i', 's', 3, []);
    const page = await driver.read('i', 0, 10);
    expect(page.entries.length).toBe(10);
    expect(page.fences).toEqual({ s: 3 });
  });

  it('appenders racing at one end lose and double no chunk', async () => {
    const t = lagging();
    const driver = documentStream(t, { name: 'test' });
    await Promise.all(
      Array.from({ length: 12 }, async (_, w) => {
        for (let r = 0; r < 5; r++) await driver.append('i', 's', 1, texts(2, `${w}.${r}.`));
      }),
    );
    const { entries } = await driver.read('i', 0, 1000);
    expect(entries.map((e) => e.offset)).toEqual(Array.from({ length: 120 }, (_, i) => i));
    expect(new Set(entries.map((e) => e.data)).size).toBe(120);
  });
});

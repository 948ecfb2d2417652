import { expect, it } from 'vitest';
import type { StreamEntry, StreamStore } from '../../store/stream.js';
import { makeTestSnapshot } from '../test-snapshot.js';
import type { SuiteContext } from './context.js';
import { brief, freshStream, readAll } from './stream-harness.js';

// The live half of the stream part: tails that see appends made after they started, appenders
// racing on one attempt through two store objects, the batching writer, and the stream's life with
// its instance (deleted with it, never in its snapshot).

/** How long a tail may take to deliver an append: a notice, or a few polls of 50 ms (on a busy machine). */
const TAIL_BOUND_MS = 5_000;

/** Collects what a tail delivers until `count` entries arrived (or the bound passed). */
function collect(stream: StreamStore, instance: string, from: number, count: number) {
  const got: StreamEntry[] = [];
  const stop = new AbortController();
  const done = (async () => {
    for await (const e of stream.tail(instance, { from, signal: stop.signal, pollMs: 50 })) {
      got.push(e);
      if (got.length >= count) break;
    }
  })();
  const within = async (ms = TAIL_BOUND_MS) => {
    const timer = setTimeout(() => stop.abort(), ms);
    try {
      await done;
    } finally {
      clearTimeout(timer);
      stop.abort();
    }
    return got;
  };
  return { got, within, stop };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `got` holds `count` entries (the tail delivered them), within the bound. */
async function delivered(got: StreamEntry[], count: number): Promise<void> {
  for (const end = Date.now() + TAIL_BOUND_MS; got.length < count && Date.now() < end; ) await sleep(10);
}

/** The live half of the stream part. */
export function describeStreamLive(ctx: SuiteContext): void {
  it('a tail delivers what was there, then appends made after it started, within a bound', async () => {
    const { store, stream } = await freshStream(ctx);
    const twin = (await ctx.twin(store)).stream!;
    await stream.append('s-tail', 'model', 1, ['before']);
    const tail = collect(stream, 's-tail', 0, 4);
    await delivered(tail.got, 1);
    await sleep(200); // the tail has caught up and waits
    const start = Date.now();
    await twin.append('s-tail', 'model', 1, ['after-1']);
    await sleep(100);
    await twin.append('s-tail', 'model', 1, ['after-2', 'after-3']);
    const got = await tail.within();
    expect(got.map(brief)).toEqual([
      [0, 'model', 1, 'before'],
      [1, 'model', 1, 'after-1'],
      [2, 'model', 1, 'after-2'],
      [3, 'model', 1, 'after-3'],
    ]);
    expect(Date.now() - start).toBeLessThan(TAIL_BOUND_MS);
    // A reader that reconnects from its offset gets only what it lacks.
    expect((await collect(stream, 's-tail', 2, 2).within()).map((e) => e.offset)).toEqual([2, 3]);
  });

  it('an aborted tail ends, and a tail of an empty stream waits without delivering', async () => {
    const { stream } = await freshStream(ctx);
    const tail = collect(stream, 's-quiet', 0, 1);
    const started = Date.now();
    expect(await tail.within(300)).toEqual([]);
    expect(Date.now() - started).toBeLessThan(TAIL_BOUND_MS);
  });

  it('a tail reading through a retry sees the old attempt, its reset, then the new attempt', async () => {
    const { store, stream } = await freshStream(ctx);
    const twin = (await ctx.twin(store)).stream!;
    const tail = collect(stream, 's-retry', 0, 5);
    await twin.append('s-retry', 'model', 1, ['a1', 'a2']);
    // The reader has attempt 1's chunks before attempt 2 begins (a later reader would not see them).
    await delivered(tail.got, 2);
    await twin.begin('s-retry', 'model', 2);
    await twin.append('s-retry', 'model', 2, ['b1', 'b2']);
    expect((await tail.within()).map(brief)).toEqual([
      [0, 'model', 1, 'a1'],
      [1, 'model', 1, 'a2'],
      [2, 'model', 2, 'reset'],
      [3, 'model', 2, 'b1'],
      [4, 'model', 2, 'b2'],
    ]);
    // Read again from the start, the old attempt is gone.
    expect((await readAll(stream, 's-retry')).map((e) => e.offset)).toEqual([2, 3, 4]);
  });

  it('appenders racing on one attempt through two store objects lose and double no chunk', async () => {
    const { store, stream } = await freshStream(ctx);
    const streams = [stream, (await ctx.twin(store)).stream!];
    const writers = 8;
    const rounds = 6;
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let r = 0; r < rounds; r++)
          await streams[w % 2]!.append('s-race', 'model', 1, [`${w}:${r}:0`, `${w}:${r}:1`, `${w}:${r}:2`]);
      }),
    );
    const entries = await readAll(streams[1]!, 's-race', 0, 50);
    expect(entries.map((e) => e.offset)).toEqual(Array.from({ length: writers * rounds * 3 }, (_, i) => i));
    const data = entries.map((e) => (e.type === 'chunk' ? String(e.data) : 'reset'));
    expect(new Set(data).size).toBe(data.length);
    for (let w = 0; w < writers; w++) {
      // Each append's chunks stay together, and each writer's appends stay in its order.
      const mine = data.filter((d) => d.startsWith(`${w}:`));
      expect(mine).toEqual(
        Array.from({ length: rounds * 3 }, (_, i) => `${w}:${Math.floor(i / 3)}:${i % 3}`),
      );
      const at = entries.findIndex((e) => e.type === 'chunk' && e.data === `${w}:0:0`);
      expect(data.slice(at, at + 3)).toEqual([`${w}:0:0`, `${w}:0:1`, `${w}:0:2`]);
    }
  });

  it('a writer batches chunks into few appends, and flush stores what is queued at once', async () => {
    const { stream } = await freshStream(ctx);
    const writer = stream.writer('s-writer', 'model', 1, { delayMs: 60_000 });
    expect(writer.next).toBe(-1);
    for (let i = 0; i < 5; i++) writer.write({ token: i });
    // Nothing is written before the delay, the count or a flush.
    expect(await readAll(stream, 's-writer')).toEqual([]);
    await writer.flush();
    expect(writer.next).toBe(5);
    expect((await readAll(stream, 's-writer')).map((e) => (e.type === 'chunk' ? e.data : null))).toEqual(
      [0, 1, 2, 3, 4].map((token) => ({ token })),
    );
    // More than one append holds: split in order, all stored by the flush.
    for (let i = 5; i < 600; i++) writer.write(i);
    await writer.close();
    const all = await readAll(stream, 's-writer');
    expect(all.length).toBe(600);
    expect(all.slice(5).map((e) => (e.type === 'chunk' ? e.data : null))).toEqual(
      Array.from({ length: 595 }, (_, i) => i + 5),
    );
    expect(() => writer.write('after close')).toThrow();
    // A short delay writes without a flush.
    const timed = stream.writer('s-writer-timed', 'model', 1, { delayMs: 10 });
    timed.write('soon');
    await expect
      .poll(async () => (await readAll(stream, 's-writer-timed')).length, { timeout: 3_000 })
      .toBe(1);
    await timed.close();
  });

  it("an instance's stream is deleted with it, and never enters its snapshot", async () => {
    const { stream, store } = await freshStream(ctx);
    const snapshot = makeTestSnapshot('s-life');
    await store.create(snapshot);
    await store.create(makeTestSnapshot('s-life-other'));
    await stream.append('s-life', 'model', 1, ['secret-chunk-text', { more: 'secret-chunk-data' }]);
    await stream.append('s-life-other', 'model', 1, ['kept']);
    const loaded = await store.load('s-life');
    expect(loaded).toEqual(snapshot);
    expect(JSON.stringify(loaded)).not.toContain('secret-chunk');
    const listed = (await store.list({ limit: 10 })).items.map((s) => JSON.stringify(s)).join('');
    expect(listed).not.toContain('secret-chunk');
    expect(await store.delete('s-life')).toBe(true);
    expect(await readAll(stream, 's-life')).toEqual([]);
    expect((await readAll(stream, 's-life-other')).length).toBe(1);
    // An instance created again under the id streams from offset 0.
    await store.create(makeTestSnapshot('s-life'));
    expect(await stream.append('s-life', 'model', 1, ['new'])).toEqual({ first: 0, next: 1 });
    await stream.remove('s-life-other');
    expect(await readAll(stream, 's-life-other')).toEqual([]);
  });
}

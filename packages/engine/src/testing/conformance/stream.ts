import { expect, it } from 'vitest';
import {
  MAX_STREAM_BATCH,
  MAX_STREAM_CHUNK_BYTES,
  MAX_STREAM_STEP_LENGTH,
} from '../../store/stream-chunks.js';
import type { SuiteContext } from './context.js';
import { brief, codeOf, freshStream, readAll } from './stream-harness.js';
import { describeStreamLive } from './stream-live.js';

// The `stream` capability (`store.stream`): offsets and order, pages, resets and fencing between
// attempts, and what the checks refuse. The live half (tails, racing appenders, the writer, the
// stream's life with its instance) is in stream-live.ts.

/** The stream part: the contract on one store object, then the live half. */
export function describeStream(ctx: SuiteContext): void {
  describeOrder(ctx);
  describeAttempts(ctx);
  describeRefusals(ctx);
  describeStreamLive(ctx);
}

// Values JSON keeps exactly, and step names that are operators, separators or prototypes somewhere.
const DATA = [{ text: 'héllo 😀', n: 1.5, nested: [null, true, { a: '"\\\n' }] }, 'plain', 0, null, [], {}];
const TRICKY_STEPS = [
  '__proto__',
  'a.b',
  '$where',
  'it\'s a "step"',
  'ünï 😀',
  'map[3]',
  'x'.repeat(MAX_STREAM_STEP_LENGTH),
];

function describeOrder(ctx: SuiteContext): void {
  it('appends take consecutive offsets from 0, and read gives them back in order with their data', async () => {
    const { stream } = await freshStream(ctx);
    expect(await stream.append('s-order', 'model', 1, DATA.slice(0, 3))).toEqual({ first: 0, next: 3 });
    expect(await stream.append('s-order', 'model', 1, DATA.slice(3))).toEqual({ first: 3, next: 6 });
    expect(await stream.append('s-order', 'model', 1, [])).toEqual({ first: 6, next: 6 });
    const entries = await readAll(stream, 's-order');
    expect(entries).toEqual(
      DATA.map((data, offset) => ({ type: 'chunk', offset, step: 'model', attempt: 1, data })),
    );
    // Each instance has a stream of its own.
    expect(await readAll(stream, 's-order-other')).toEqual([]);
    expect(await stream.read('s-order-other')).toEqual({ entries: [], next: 0, end: true });
  });

  it('reads pages from any offset, and a read past the end is empty and says so', async () => {
    const { stream } = await freshStream(ctx);
    const chunks = Array.from({ length: 25 }, (_, i) => ({ i }));
    await stream.append('s-pages', 'progress', 1, chunks.slice(0, 12));
    await stream.append('s-pages', 'progress', 1, chunks.slice(12));
    const first = await stream.read('s-pages', { limit: 10 });
    expect([first.entries.map((e) => e.offset), first.next, first.end]).toEqual([
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
      10,
      false,
    ]);
    const middle = await stream.read('s-pages', { from: 7, limit: 8 });
    expect(middle.entries.map((e) => (e.type === 'chunk' ? e.data : null))).toEqual(chunks.slice(7, 15));
    expect(middle.next).toBe(15);
    const last = await stream.read('s-pages', { from: 20, limit: 10 });
    expect([last.entries.map((e) => e.offset), last.next, last.end]).toEqual([
      [20, 21, 22, 23, 24],
      25,
      true,
    ]);
    expect(await stream.read('s-pages', { from: 25 })).toEqual({ entries: [], next: 25, end: true });
    expect(await stream.read('s-pages', { from: 90 })).toEqual({ entries: [], next: 90, end: true });
    expect((await readAll(stream, 's-pages', 0, 4)).length).toBe(25);
  });

  it('steps of one instance share its offsets, each with its own attempts', async () => {
    const { stream } = await freshStream(ctx);
    await stream.append('s-steps', 'model', 1, ['m1']);
    await stream.append('s-steps', 'tool', 1, ['t1']);
    await stream.append('s-steps', 'model', 1, ['m2']);
    await stream.append('s-steps', 'tool', 2, ['t2']);
    expect((await readAll(stream, 's-steps')).map(brief)).toEqual([
      [0, 'model', 1, 'm1'],
      [2, 'model', 1, 'm2'],
      [3, 'tool', 2, 'reset'],
      [4, 'tool', 2, 't2'],
    ]);
  });
}

function describeAttempts(ctx: SuiteContext): void {
  it('a newer attempt appends a reset, and the older attempt chunks leave the stream', async () => {
    const { stream } = await freshStream(ctx);
    await stream.append('s-reset', 'model', 1, ['a', 'b', 'c']);
    const before = await stream.read('s-reset');
    expect(before.entries.map(brief)).toEqual([
      [0, 'model', 1, 'a'],
      [1, 'model', 1, 'b'],
      [2, 'model', 1, 'c'],
    ]);
    expect(await stream.begin('s-reset', 'model', 2)).toBe(4);
    // Idempotent: a second begin writes no second reset.
    expect(await stream.begin('s-reset', 'model', 2)).toBe(4);
    expect((await readAll(stream, 's-reset')).map(brief)).toEqual([[3, 'model', 2, 'reset']]);
    // A reader that had read attempt 1 resumes at its offset and meets the reset first.
    await stream.append('s-reset', 'model', 2, ['A', 'B']);
    expect((await readAll(stream, 's-reset', before.next)).map(brief)).toEqual([
      [3, 'model', 2, 'reset'],
      [4, 'model', 2, 'A'],
      [5, 'model', 2, 'B'],
    ]);
    // A later attempt that begins by appending resets too.
    await stream.append('s-reset', 'model', 4, ['z']);
    expect((await readAll(stream, 's-reset')).map(brief)).toEqual([
      [3, 'model', 2, 'reset'],
      [6, 'model', 4, 'reset'],
      [7, 'model', 4, 'z'],
    ]);
  });

  it('a zombie attempt cannot append or begin once a newer one began, and writes nothing', async () => {
    const { store, stream } = await freshStream(ctx);
    const twin = (await ctx.twin(store)).stream!;
    await stream.append('s-zombie', 'model', 1, ['old']);
    await twin.begin('s-zombie', 'model', 2);
    for (const s of [stream, twin]) {
      expect(await codeOf(s.append('s-zombie', 'model', 1, ['late']))).toBe('STREAM_FENCED');
      expect(await codeOf(s.begin('s-zombie', 'model', 1))).toBe('STREAM_FENCED');
    }
    const writer = stream.writer('s-zombie', 'model', 1, { delayMs: 0 });
    writer.write('late too');
    expect(await codeOf(writer.flush())).toBe('STREAM_FENCED');
    expect(() => writer.write('after')).toThrow(expect.objectContaining({ code: 'STREAM_FENCED' }));
    // Attempt 2 begun by nothing but `begin` fences attempt 1 as well, on a fresh step.
    await twin.begin('s-zombie', 'tool', 2);
    expect(await codeOf(stream.append('s-zombie', 'tool', 1, ['never']))).toBe('STREAM_FENCED');
    expect((await readAll(stream, 's-zombie')).map(brief)).toEqual([
      [1, 'model', 2, 'reset'],
      [2, 'tool', 2, 'reset'],
    ]);
    // The first attempt of a fresh step writes nothing by beginning.
    expect(await stream.begin('s-zombie', 'fresh', 1)).toBe(3);
    expect((await stream.read('s-zombie', { from: 3 })).entries).toEqual([]);
  });

  it('stores steps of any characters, and resets each one apart', async () => {
    const { stream } = await freshStream(ctx);
    for (const step of TRICKY_STEPS) await stream.append('s-tricky', step, 1, [step.slice(0, 10)]);
    for (const step of TRICKY_STEPS) await stream.begin('s-tricky', step, 2);
    const n = TRICKY_STEPS.length;
    expect((await readAll(stream, 's-tricky')).map(brief)).toEqual(
      TRICKY_STEPS.map((step, i) => [n + i, step, 2, 'reset']),
    );
  });
}

function describeRefusals(ctx: SuiteContext): void {
  it('refuses malformed addresses, chunks and queries with typed errors, writing nothing', async () => {
    const { stream } = await freshStream(ctx);
    expect(await codeOf(stream.append('not an id', 's', 1, ['x']))).toBe('INVALID_ID');
    expect(await codeOf(stream.read('not an id'))).toBe('INVALID_ID');
    for (const [step, attempt] of [
      ['', 1],
      ['a\u0000b', 1],
      ['\ud800', 1],
      ['x'.repeat(MAX_STREAM_STEP_LENGTH + 1), 1],
      [7, 1],
      ['s', 0],
      ['s', 1.5],
      ['s', Number.NaN],
    ] as const)
      expect(await codeOf(stream.append('s-bad', step as string, attempt, ['x'])), `${step} ${attempt}`).toBe(
        'INVALID_INPUT',
      );
    const huge = 'x'.repeat(MAX_STREAM_CHUNK_BYTES);
    for (const chunks of [
      [undefined],
      [() => 1],
      [10n],
      [huge],
      Array(MAX_STREAM_BATCH + 1).fill(1),
      [huge.slice(10), huge.slice(10), huge.slice(10), huge.slice(10), huge.slice(10)],
      'x',
    ])
      expect(await codeOf(stream.append('s-bad', 's', 1, chunks as unknown[]))).toBe('INVALID_INPUT');
    expect(await codeOf(stream.read('s-bad', { from: -1 }))).toBe('INVALID_INPUT');
    expect(await codeOf(stream.read('s-bad', { from: 1.5 }))).toBe('INVALID_INPUT');
    expect(await codeOf(stream.read('s-bad', { limit: 0 }))).toBe('INVALID_INPUT');
    expect(() => stream.tail('s-bad', { pollMs: 0 })).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT' }),
    );
    expect(() => stream.writer('s-bad', 's', 1, { maxChunks: 0 })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
    const writer = stream.writer('s-bad', 's', 1);
    expect(() => writer.write(10n)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    await writer.close();
    expect(await readAll(stream, 's-bad')).toEqual([]);
  });
}

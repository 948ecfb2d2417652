import { describe, expect, it } from 'vitest';
import { createMemoryStore, readStreamTail, TAIL_ENTRIES } from '../src/index.js';

// The end of an instance's stream (what the inspector and `stepfold show --stream` print), found by
// a few reads of one entry however long the stream is.

describe('the end of an instance stream', () => {
  it('finds the last entry and reads the entries before it, whatever the length', async () => {
    const store = createMemoryStore();
    const stream = store.stream!;
    expect(await readStreamTail(stream, 'empty')).toBeNull();
    for (const n of [1, 2, 3, 7, 64, 130, 1000]) {
      const id = `s-${n}`;
      const chunks = Array.from({ length: n }, (_, i) => `c${i}`);
      for (let i = 0; i < n; i += 100) await stream.append(id, 'model', 1, chunks.slice(i, i + 100));
      const tail = (await readStreamTail(stream, id))!;
      expect(tail.last, `length ${n}`).toBe(n - 1);
      const want = chunks.slice(Math.max(0, n - TAIL_ENTRIES));
      expect(tail.entries.map((e) => (e.type === 'chunk' ? e.data : e.type))).toEqual(want);
    }
  });

  it('ends at a reset when a newer attempt superseded the step, without the old attempt chunks', async () => {
    const store = createMemoryStore();
    const stream = store.stream!;
    await stream.append('r', 'model', 1, ['a', 'b', 'c']);
    await stream.begin('r', 'model', 2);
    const tail = (await readStreamTail(stream, 'r'))!;
    expect(tail.entries.map((e) => e.type)).toEqual(['reset']);
    expect(tail.last).toBe(3);
    await stream.append('r', 'model', 2, ['x']);
    expect(
      (await readStreamTail(stream, 'r'))!.entries.map((e) => (e.type === 'chunk' ? e.data : 'reset')),
    ).toEqual(['reset', 'x']);
  });
});

import { StoreUnavailableError } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import type { Row } from '../src/encode.js';
import { createSaveBatcher, type QueuedSave, type SaveWriter } from '../src/save-batch.js';

const row = (id: string, json = '{}'): Row => ({
  id,
  version: 2,
  status: 'running',
  workflow: 'w',
  wakeAt: null,
  definition: 'w@1@h',
  fairKey: '',
  search: null,
  json,
  asText: false,
});
const save = (id: string, expected = 1, json?: string): QueuedSave => ({
  row: row(id, json),
  expected,
  payload: undefined,
});

/** A writer whose statements the test answers by hand, recording which saves each carried. */
function manualWriter(maxRows = 8, maxChars = 1_000) {
  const statements: { ids: string[]; answer(written?: string[]): void; fail(e: unknown): void }[] = [];
  const alone: string[] = [];
  const writer: SaveWriter = {
    maxRows,
    maxChars,
    one(s) {
      alone.push(s.row.id);
      return new Promise((resolve, reject) =>
        statements.push({
          ids: [s.row.id],
          answer: (w) => resolve(w === undefined || w.includes(s.row.id)),
          fail: reject,
        }),
      );
    },
    many(saves) {
      const ids = saves.map((s) => s.row.id);
      return new Promise((resolve, reject) =>
        statements.push({ ids, answer: (w) => resolve(new Set(w ?? ids)), fail: reject }),
      );
    },
    retryAlone: (e) => !(e instanceof StoreUnavailableError),
  };
  return { writer, statements, alone };
}

/** A batcher whose statement 1 carries saves b and c (a went alone before them): their promises. */
async function batchOfBC() {
  const { writer, statements } = manualWriter();
  const b = createSaveBatcher(writer);
  const first = b.write(save('a'));
  const rest = ['b', 'c'].map((id) => b.write(save(id)));
  statements[0]!.answer();
  await first;
  await turn();
  expect(statements[1]!.ids).toEqual(['b', 'c']);
  return { b, statements, rest };
}

/** Lets pending promise callbacks and the batcher's next turn (a setImmediate) run. */
const turn = () => new Promise((r) => setTimeout(r, 1));

describe('group commit (save batcher)', () => {
  it('a save that finds nothing out goes at once, alone; sequential saves each go alone', async () => {
    const { writer, statements, alone } = manualWriter();
    const b = createSaveBatcher(writer);
    for (const id of ['a', 'b', 'c']) {
      const p = b.write(save(id));
      expect(statements.at(-1)?.ids).toEqual([id]); // sent before any turn passed
      statements.at(-1)!.answer();
      await expect(p).resolves.toBe(true);
    }
    expect(alone).toEqual(['a', 'b', 'c']);
    expect(statements).toHaveLength(3);
  });

  it('saves arriving while one is out go together in the next statement, each with its own answer', async () => {
    const { writer, statements } = manualWriter();
    const b = createSaveBatcher(writer);
    const first = b.write(save('a'));
    const rest = ['b', 'c', 'd'].map((id) => b.write(save(id)));
    expect(statements).toHaveLength(1);
    statements[0]!.answer();
    await expect(first).resolves.toBe(true);
    await turn();
    expect(statements.map((s) => s.ids)).toEqual([['a'], ['b', 'c', 'd']]);
    statements[1]!.answer(['b', 'd']); // c's condition failed
    await expect(Promise.all(rest)).resolves.toEqual([true, false, true]);
  });

  it('a caller a statement answered joins the saves that waited for it, on the next turn', async () => {
    const { writer, statements } = manualWriter();
    const b = createSaveBatcher(writer);
    const chain = b.write(save('a')).then(() => b.write(save('a', 2)));
    const waiting = b.write(save('b'));
    statements[0]!.answer(); // a's caller saves again before the turn that sends b
    await turn();
    expect(statements.map((s) => s.ids)).toEqual([['a'], ['b', 'a']]);
    statements[1]!.answer();
    await expect(Promise.all([chain, waiting])).resolves.toEqual([true, true]);
    // Nothing waited when that statement returned: the next save goes at once, alone.
    const next = b.write(save('c'));
    expect(statements.at(-1)!.ids).toEqual(['c']);
    statements.at(-1)!.answer();
    await expect(next).resolves.toBe(true);
  });

  it('never puts two saves of one id in a statement, and sends more than one when a full one still waits', async () => {
    const { writer, statements } = manualWriter(2);
    const b = createSaveBatcher(writer);
    const all = [
      b.write(save('x')),
      b.write(save('a')),
      b.write(save('a')),
      b.write(save('b')),
      b.write(save('c')),
    ];
    statements[0]!.answer();
    await turn();
    // Waiting: a, a, b, c with two rows a statement: [a, b] and [a, c] go out together.
    expect(statements.map((s) => s.ids)).toEqual([['x'], ['a', 'b'], ['a', 'c']]);
    statements[1]!.answer();
    statements[2]!.answer();
    await expect(Promise.all(all)).resolves.toEqual([true, true, true, true, true]);
  });

  it('keeps a statement under maxChars of JSON; a snapshot larger than that goes alone', async () => {
    const { writer, statements } = manualWriter(8, 100);
    const b = createSaveBatcher(writer);
    const json = (n: number) => `"${'x'.repeat(n - 2)}"`;
    const all = [
      b.write(save('first')),
      b.write(save('a', 1, json(60))),
      b.write(save('b', 1, json(60))), // a + b would be 120 > 100
      b.write(save('huge', 1, json(500))),
      b.write(save('c', 1, json(30))),
    ];
    statements[0]!.answer();
    await turn();
    expect(statements.map((s) => s.ids)).toEqual([['first'], ['a', 'c']]);
    statements[1]!.answer();
    await turn();
    expect(statements[2]!.ids).toEqual(['b']); // b alone: huge would take it over 100
    statements[2]!.answer();
    await turn();
    expect(statements[3]!.ids).toEqual(['huge']);
    statements[3]!.answer();
    await expect(Promise.all(all)).resolves.toEqual([true, true, true, true, true]);
  });

  it('a failed statement is retried save by save, so each gets its own answer or error', async () => {
    const { statements, rest } = await batchOfBC();
    statements[1]!.fail(Object.assign(new Error('unsupported Unicode escape sequence'), { code: '22P05' }));
    await turn();
    expect(statements.slice(2).map((s) => s.ids)).toEqual([['b'], ['c']]);
    statements[2]!.answer();
    statements[3]!.fail(new Error('c alone failed'));
    await expect(rest[0]).resolves.toBe(true);
    await expect(rest[1]).rejects.toThrow('c alone failed');
  });

  it('an unreachable server fails every save of the statement with STORE_UNAVAILABLE, and the next save goes alone', async () => {
    const { b, statements, rest } = await batchOfBC();
    statements[1]!.fail(new StoreUnavailableError('postgres save failed: down'));
    for (const p of rest) await expect(p).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await turn();
    const next = b.write(save('d'));
    expect(statements.at(-1)!.ids).toEqual(['d']);
    statements.at(-1)!.answer();
    await expect(next).resolves.toBe(true);
  });
});

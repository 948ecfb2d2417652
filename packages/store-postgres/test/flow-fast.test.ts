import {
  type FlowNeed,
  type FlowStore,
  isStepfoldError,
  makeTestSnapshot,
  type SaveFlow,
  type Snapshot,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { cOrder, fastValues } from '../src/flow-fast.js';
import { createPostgresStore, type PostgresStore } from '../src/index.js';
import { tableNames } from '../src/setup.js';
import { TEST_SCHEMA } from './server.js';
import { useTestTables } from './test-tables.js';

// The short save-with-flow and acquire statements (flow-fast.ts) on the cases where they must
// leave the decision to the general statement, or decide as it does: a waiter on a counter, lapsed
// holders, a limit lowered, a counter row not there yet, a lost race, a refused acquire.

const { pool, store: freshStore } = useTestTables('ff');
const T0 = 1_700_000_000_000;
const slot = (scope: string, key: string, limit: number): FlowNeed => ({ scope, key, limit });
const ref = (n: FlowNeed) => ({ scope: n.scope, key: n.key, period: 0 });

/** A fresh store, its flow, and a stored instance `id` at version 1 with its next version. */
async function fresh(id = 'i'): Promise<{ store: PostgresStore; flow: FlowStore; next: Snapshot }> {
  const store = await freshStore();
  const s = makeTestSnapshot(id);
  await store.create(s);
  return { store, flow: store.flow!, next: { ...s, version: 2 } };
}

/** Holders (live at `now`) and waiters of the counter of `n`. */
async function state(flow: FlowStore, n: FlowNeed, now: number) {
  const page = await flow.list({ scope: n.scope, limit: 10, now });
  const k = page.items.find((x) => x.key === n.key);
  return {
    held: (k?.holders ?? []).map((h) => h.holder).sort(),
    waiting: (k?.waiting ?? []).map((w) => w.instance),
  };
}

/** The stored holds of the counter of `n` (lapsed ones too), or null when it has no row. */
async function row(store: PostgresStore, n: FlowNeed): Promise<Record<string, number> | null> {
  const F = tableNames(TEST_SCHEMA, store.table).flow;
  const r = await pool.query(`SELECT holds FROM ${F} WHERE scope = $1 AND key = $2 AND period = 0`, [
    n.scope,
    n.key,
  ]);
  return r.rows[0]?.holds ?? null;
}

/** A save's flow work releasing `gone` (on `from`) and taking `holder` for `need`, at `now`. */
const handing = (gone: string, from: FlowNeed, holder: string, need: FlowNeed, now: number): SaveFlow => ({
  release: [gone],
  counters: [ref(from)],
  take: { holder, needs: [need], until: now + 5000 },
  now,
});

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

/** A store on the table of `store` whose statements' texts go to `texts`. */
function recording(store: PostgresStore, texts: string[]): PostgresStore {
  const spy = new Proxy(pool, {
    get(target, prop) {
      if (prop === 'query')
        return (q: { text: string }, ...rest: unknown[]) => {
          texts.push(q.text);
          return (target.query as (...a: unknown[]) => unknown)(q, ...rest);
        };
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return createPostgresStore({ pool: spy, schema: TEST_SCHEMA, table: store.table });
}

/** Which statements ran: the short one (flow-fast.ts), the general save or acquire (flow.ts). */
const kinds = (texts: string[]) =>
  texts.map((t) => (t.startsWith('WITH c AS') ? 'short' : t.startsWith('WITH need') ? 'general' : 'other'));

describe('postgres flow: the short statements', () => {
  it('the common save and acquire run the short statement alone; a waiter sends them to the general one', async () => {
    const { store, next } = await fresh();
    const texts: string[] = [];
    const spied = recording(store, texts);
    const from = slot('ff-spy-from', 'k', 2);
    const to = slot('ff-spy-to', 'k', 2);
    expect((await spied.flow!.acquire('a', 'i', [from], T0, T0 + 5000)).granted).toBe(true);
    await spied.save(next, 1, { flow: handing('a', from, 'b', to, T0 + 1) });
    expect(kinds(texts)).toEqual(['short', 'short']);
    texts.length = 0;
    expect(
      (await spied.flow!.acquire('w#1', 'w', [slot('ff-spy-to', 'k', 1)], T0 + 2, T0 + 5000)).granted,
    ).toBe(false);
    expect(kinds(texts)).toEqual(['short', 'general']);
    texts.length = 0;
    await spied.save({ ...next, version: 3 }, 2, { flow: handing('b', to, 'c', from, T0 + 3) });
    expect(kinds(texts)).toEqual(['short', 'general']);
    await spied.close();
  });

  it('each shape has its own short text: a hand-off on one counter, a move, a release alone, a take alone', async () => {
    const { store, next } = await fresh();
    const texts: string[] = [];
    const spied = recording(store, texts);
    const a = slot('ff-shape-a', 'k', 2);
    const b = slot('ff-shape-b', 'k', 2);
    expect((await spied.flow!.acquire('h1', 'i', [a], T0, T0 + 5000)).granted).toBe(true);
    await spied.save(next, 1, { flow: handing('h1', a, 'h2', a, T0 + 1) });
    expect(await row(store, a)).toEqual({ h2: T0 + 5001 });
    await spied.save({ ...next, version: 3 }, 2, { flow: handing('h2', a, 'h3', b, T0 + 2) });
    expect(await row(store, a)).toBeNull();
    expect(await row(store, b)).toEqual({ h3: T0 + 5002 });
    await spied.save({ ...next, version: 4 }, 3, {
      flow: { release: ['h3'], counters: [ref(b)], now: T0 + 3 },
    });
    expect(await row(store, b)).toBeNull();
    await spied.save({ ...next, version: 5 }, 4, {
      flow: { take: { holder: 'h4', needs: [b], until: T0 + 9000 }, now: T0 + 4 },
    });
    expect(await row(store, b)).toEqual({ h4: T0 + 9000 });
    expect(kinds(texts)).toEqual(['short', 'short', 'short', 'short', 'short']);
    // The acquire and the save's take are one shape; the other three each have a text of their own.
    const saves = texts.slice(1);
    expect(new Set(saves).size).toBe(4);
    expect((await store.load('i'))?.version).toBe(5);
    await spied.close();
  });

  it("a take on a counter where others' holds lapsed is left to the general statement, which drops them", async () => {
    const { store, flow, next } = await fresh();
    const need = slot('ff-lapsed-other', 'k', 2);
    expect((await flow.acquire('old', 'x', [need], T0, T0 + 10)).granted).toBe(true);
    expect((await flow.acquire('a', 'i', [need], T0, T0 + 5000)).granted).toBe(true);
    const texts: string[] = [];
    const spied = recording(store, texts);
    await spied.save(next, 1, { flow: handing('a', need, 'b', need, T0 + 20) });
    expect(kinds(texts)).toEqual(['short', 'general']);
    expect(await row(store, need)).toEqual({ b: T0 + 5020 });
    await spied.close();
  });

  it("a move's two counters are passed in the order the server's C collation sorts them", () => {
    expect(['b', 'a', 'ab', 'B', '\u{1F600}', '\uFFFD', 'é'].sort(cOrder)).toEqual([
      'B',
      'a',
      'ab',
      'b',
      'é',
      '\uFFFD',
      '\u{1F600}',
    ]);
    const take = { holder: 't', scope: 'wf/s1', key: 'k', limit: 4, until: 9 };
    const order = (scope: string, key: string) =>
      fastValues('move', { release: { holder: 'r', scope, key }, take }, 1).slice(-4);
    expect(order('wf/s2', 'k')).toEqual(['wf/s1', 'k', 'wf/s2', 'k']);
    expect(order('wf/s0', 'k')).toEqual(['wf/s0', 'k', 'wf/s1', 'k']);
    expect(order('wf/s1', 'j')).toEqual(['wf/s1', 'j', 'wf/s1', 'k']);
  });

  it('a hand-off on a counter with a waiter wakes it as the general statement does', async () => {
    const { store, flow, next } = await fresh();
    const need = slot('ff-wait', 'k', 1);
    expect((await flow.acquire('a', 'i', [need], T0, T0 + 5000)).granted).toBe(true);
    expect((await flow.acquire('w#1', 'w', [need], T0 + 1, T0 + 5000)).granted).toBe(false);
    const woken: string[][] = [];
    await store.save(next, 1, {
      flow: { ...handing('a', need, 'b', need, T0 + 2), woken: (x) => woken.push(x) },
    });
    expect(woken).toEqual([['w']]);
    expect(await state(flow, need, T0 + 2)).toEqual({ held: ['b'], waiting: ['w'] });
  });

  it('a release on one counter and a take on another: a waiter on the released one is woken', async () => {
    const { store, flow, next } = await fresh();
    const from = slot('ff-from', 'k', 1);
    const to = slot('ff-to', 'k', 1);
    expect((await flow.acquire('a', 'i', [from], T0, T0 + 5000)).granted).toBe(true);
    expect((await flow.acquire('w#1', 'w', [from], T0 + 1, T0 + 5000)).granted).toBe(false);
    const woken: string[][] = [];
    await store.save(next, 1, {
      flow: { ...handing('a', from, 'b', to, T0 + 2), woken: (x) => woken.push(x) },
    });
    expect(woken).toEqual([['w']]);
    expect(await state(flow, from, T0 + 2)).toEqual({ held: [], waiting: ['w'] });
    expect(await state(flow, to, T0 + 2)).toEqual({ held: ['b'], waiting: [] });
  });

  it('a take on a counter whose holders lapsed is granted, and the lapsed holds go', async () => {
    const { store, flow, next } = await fresh();
    const from = slot('ff-lapse-from', 'k', 1);
    const to = slot('ff-lapse', 'k', 2);
    expect((await flow.acquire('a', 'i', [from], T0, T0 + 5000)).granted).toBe(true);
    expect((await flow.acquire('old1', 'x', [to], T0, T0 + 10)).granted).toBe(true);
    expect((await flow.acquire('old2', 'y', [to], T0, T0 + 10)).granted).toBe(true);
    await store.save(next, 1, { flow: handing('a', from, 'b', to, T0 + 20) });
    expect(await row(store, to)).toEqual({ b: T0 + 5020 });
    expect(await row(store, from)).toBeNull();
  });

  it('a release leaving only lapsed holds deletes the counter row, as the general statement does', async () => {
    const { store, flow, next } = await fresh();
    const need = slot('ff-lapse-only', 'k', 2);
    expect((await flow.acquire('old', 'x', [need], T0, T0 + 10)).granted).toBe(true);
    expect((await flow.acquire('a', 'i', [need], T0, T0 + 5000)).granted).toBe(true);
    await store.save(next, 1, { flow: { release: ['a'], counters: [ref(need)], now: T0 + 20 } });
    expect(await row(store, need)).toBeNull();
    expect((await store.load('i'))?.version).toBe(2);
  });

  it('a hand-off under a lowered limit is refused while the others fill it, and writes nothing', async () => {
    const { store, flow, next } = await fresh();
    const need = slot('ff-lower', 'k', 2);
    expect((await flow.acquire('a', 'i', [need], T0, T0 + 5000)).granted).toBe(true);
    expect((await flow.acquire('c', 'x', [need], T0, T0 + 5000)).granted).toBe(true);
    const lowered = slot('ff-lower', 'k', 1);
    const refused = await failure(store.save(next, 1, { flow: handing('a', need, 'b', lowered, T0 + 1) }));
    expect(isStepfoldError(refused, 'FLOW_REFUSED')).toBe(true);
    expect((await store.load('i'))?.version).toBe(1);
    expect(await state(flow, need, T0 + 1)).toEqual({ held: ['a', 'c'], waiting: [] });
    // At the limit it had, the hand-off goes through.
    await store.save(next, 1, { flow: handing('a', need, 'b', need, T0 + 2) });
    expect(await state(flow, need, T0 + 2)).toEqual({ held: ['b', 'c'], waiting: [] });
  });

  it('a take on a counter with no row yet makes it, and a release that empties a row deletes it', async () => {
    const { store, flow, next } = await fresh();
    const from = slot('ff-empty', 'k', 3);
    const to = slot('ff-new', 'k', 3);
    expect((await flow.acquire('a', 'i', [from], T0, T0 + 5000)).granted).toBe(true);
    expect(await row(store, to)).toBeNull();
    await store.save(next, 1, { flow: handing('a', from, 'b', to, T0 + 1) });
    expect(await row(store, from)).toBeNull();
    expect(await row(store, to)).toEqual({ b: T0 + 5001 });
    expect((await flow.list({ limit: 10, now: T0 + 1 })).items.map((x) => [x.scope, x.limit])).toEqual([
      ['ff-new', 3],
    ]);
  });

  it('a save that loses its race writes no counter, on either', async () => {
    const { store, flow, next } = await fresh();
    const from = slot('ff-lost-from', 'k', 1);
    const to = slot('ff-lost-to', 'k', 1);
    expect((await flow.acquire('a', 'i', [from], T0, T0 + 5000)).granted).toBe(true);
    await store.save(next, 1);
    const lost = await failure(
      store.save({ ...next, version: 3 }, 1, { flow: handing('a', from, 'b', to, T0 + 1) }),
    );
    expect(isStepfoldError(lost, 'VERSION_CONFLICT')).toBe(true);
    expect(await state(flow, from, T0 + 1)).toEqual({ held: ['a'], waiting: [] });
    expect(await row(store, to)).toBeNull();
  });

  it('an acquire on a full counter is refused with the general answer and waits; a holder holding is granted again', async () => {
    const { flow } = await fresh();
    const need = slot('ff-acq', 'k', 1);
    expect((await flow.acquire('a', 'i', [need], T0, T0 + 5000)).granted).toBe(true);
    expect(await flow.acquire('b', 'j', [need], T0 + 1, T0 + 5000)).toEqual({
      granted: false,
      need,
      until: T0 + 5000,
      count: 1,
    });
    expect(await state(flow, need, T0 + 1)).toEqual({ held: ['a'], waiting: ['j'] });
    expect((await flow.acquire('a', 'i', [need], T0 + 2, T0 + 6000)).granted).toBe(true);
    // The counter has a waiter: the general statement grants and drops its entry.
    expect((await flow.acquire('b', 'j', [need], T0 + 6000, T0 + 9000)).granted).toBe(true);
    expect(await state(flow, need, T0 + 6000)).toEqual({ held: ['b'], waiting: [] });
  });
});

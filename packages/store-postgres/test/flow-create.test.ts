import {
  type CreateFlow,
  createRunner,
  type FlowNeed,
  flowControl,
  isStepfoldError,
  makeTestSnapshot,
  type Snapshot,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../src/index.js';
import { TEST_SCHEMA } from './server.js';
import { useTestTables } from './test-tables.js';

// A create that takes its first attempt's holder in its own statement (flow-create.ts): the short
// statement for one concurrency need, the general one where the short one leaves the decision
// (a waiter, lapsed holds, a rate), with NOTIFY and without, in the text and the JSONB column;
// and the statements a limited workflow costs, pinned against the same workflow without limits.

const { pool, store: freshStore } = useTestTables('fc');
const T0 = 1_700_000_000_000;
const slot = (scope: string, key: string, limit: number): FlowNeed => ({ scope, key, limit });

const taking = (holder: string, needs: FlowNeed[], now: number): CreateFlow => ({
  take: { holder, needs, until: now + 5000 },
  now,
  taken: () => {},
});

/** A snapshot due at `at` by a timer: its create announces it (the NOTIFY texts). */
const due = (id: string, at: number): Snapshot =>
  makeTestSnapshot(id, { wakeAt: at, timers: [{ kind: 'sleep', step: 'a', at }] });

/** A store on the table of `store` whose statements' texts go to `texts`. */
function recording(store: PostgresStore, texts: string[], jsonb = false): PostgresStore {
  const spy = new Proxy(pool, {
    get(target, prop) {
      if (prop === 'query')
        return (q: { text: string } | string, ...rest: unknown[]) => {
          texts.push(typeof q === 'string' ? q : q.text);
          return (target.query as (...a: unknown[]) => unknown)(q, ...rest);
        };
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return createPostgresStore({
    pool: spy,
    schema: TEST_SCHEMA,
    table: store.table,
    ...(jsonb ? { snapshotColumn: 'jsonb' as const } : {}),
  });
}

/** Which statements ran: a create with its take (short or general), or another. */
const kinds = (texts: string[]) =>
  texts.map((t) =>
    !t.includes('ON CONFLICT (id) DO NOTHING')
      ? 'other'
      : t.startsWith('WITH c AS')
        ? 'short'
        : t.startsWith('WITH need')
          ? 'general'
          : 'other',
  );

/** The holders of the counter of `n` live at `now`. */
async function held(store: PostgresStore, n: FlowNeed, now: number): Promise<string[]> {
  const page = await store.flow!.list({ scope: n.scope, limit: 10, now });
  return (page.items.find((k) => k.key === n.key)?.holders ?? []).map((h) => h.holder).sort();
}

describe('postgres: a create taking a flow holder', () => {
  it('says so (flow.inCreate), and one concurrency need goes in the short statement, NOTIFY or not', async () => {
    const store = await freshStore();
    expect(store.flow?.inCreate).toBe(true);
    const texts: string[] = [];
    const spied = recording(store, texts);
    const need = slot('fc-short', 'k', 2);
    await spied.create(makeTestSnapshot('a'), { flow: taking('a#1', [need], T0) });
    await spied.create(due('b', T0), { flow: taking('b#1', [need], T0) });
    expect(kinds(texts)).toEqual(['short', 'short']);
    expect(texts[0]).not.toBe(texts[1]);
    expect(await held(store, need, T0)).toEqual(['a#1', 'b#1']);
    // Full: refused, neither the row nor a waiter written.
    const refused = await spied
      .create(due('c', T0), { flow: taking('c#1', [need], T0 + 1) })
      .catch((e: unknown) => e);
    expect(isStepfoldError(refused, 'FLOW_REFUSED')).toBe(true);
    expect(kinds(texts.slice(2))).toEqual(['short', 'general']);
    expect(await store.load('c')).toBeNull();
    const listed = await store.flow!.list({ scope: need.scope, limit: 10, now: T0 + 1 });
    expect(listed.items[0]?.waiting).toEqual([]);
    await spied.close();
  });

  it('an id taken: the short statement answers ALREADY_EXISTS alone and takes nothing', async () => {
    const store = await freshStore();
    await store.create(makeTestSnapshot('x'));
    const texts: string[] = [];
    const spied = recording(store, texts);
    const need = slot('fc-taken', 'k', 1);
    const exists = await spied
      .create(makeTestSnapshot('x'), { flow: taking('x#1', [need], T0) })
      .catch((e: unknown) => e);
    expect(isStepfoldError(exists, 'ALREADY_EXISTS')).toBe(true);
    expect(kinds(texts)).toEqual(['short']);
    expect(await held(store, need, T0)).toEqual([]);
    await spied.close();
  });

  it('a waiter on the counter sends the create to the general statement, which grants it with NOTIFY', async () => {
    const store = await freshStore();
    const need = slot('fc-wait', 'k', 3);
    const flow = store.flow!;
    expect((await flow.acquire('a', 'i', [slot('fc-wait', 'k', 1)], T0, T0 + 5000)).granted).toBe(true);
    expect((await flow.acquire('w', 'j', [slot('fc-wait', 'k', 1)], T0, T0 + 5000)).granted).toBe(false);
    for (const jsonb of [false, true]) {
      const texts: string[] = [];
      const spied = recording(store, texts, jsonb);
      const id = jsonb ? 'g-jsonb' : 'g-text';
      await spied.create(due(id, T0), { flow: taking(`${id}#1`, [need], T0 + 1) });
      expect(kinds(texts)).toEqual(['short', 'general']);
      expect((await spied.load(id))?.timers).toHaveLength(1);
      await spied.close();
    }
    // Granted under the need's limit (3), beside `a` (held under 1), the waiter still waiting.
    expect(await held(store, need, T0 + 1)).toEqual(['a', 'g-jsonb#1', 'g-text#1']);
  });

  it('a limited workflow (its tasks or the workflow) costs the statements of the same workflow without limits', async () => {
    const steps = (name: string, limited: boolean) => {
      const concurrency = limited ? { concurrency: { key: 'input.key' as const, limit: 4 } } : {};
      return workflow(name, 1)
        .input<{ key: string }>()
        .task('s1', { handler: 'work', ...concurrency })
        .task('s2', { handler: 'work', ...concurrency })
        .task('s3', { handler: 'work', ...concurrency })
        .build();
    };
    // One limit on the workflow, none on its tasks: the create takes the instance's slot.
    const admitted = workflow('fc-admitted', 1, { concurrency: { key: 'input.key', limit: 4 } })
      .input<{ key: string }>()
      .task('s1', { handler: 'work' })
      .task('s2', { handler: 'work' })
      .task('s3', { handler: 'work' })
      .build();
    const store = await freshStore();
    const texts: string[] = [];
    const spied = recording(store, texts);
    const runnerOn = (on: typeof spied) =>
      createRunner({
        kinds: [flowControl],
        store: on,
        workflows: [steps('fc-plain', false), steps('fc-limited', true), admitted],
        handlers: { work: () => null },
      });
    const runner = runnerOn(spied);
    // The same store as one without the capability sees it: the create's take is an acquire first.
    const without = runnerOn({ ...spied, flow: { ...spied.flow!, inCreate: undefined } });
    const statements = async (r: typeof runner, name: string, id: string) => {
      texts.length = 0;
      expect((await r.start(name, id, { key: 'k' })).status).toBe('completed');
      return [...texts];
    };
    const plain = await statements(runner, 'fc-plain', 'p-1');
    const limited = await statements(runner, 'fc-limited', 'l-1');
    const acquiring = await statements(without, 'fc-limited', 'l-2');
    const instance = await statements(runner, 'fc-admitted', 'a-1');
    // The create and one save per task: the create takes s1's slot, each save moves or releases.
    expect(plain).toHaveLength(4);
    expect(limited).toHaveLength(plain.length);
    expect(kinds(limited).slice(0, 1)).toEqual(['short']);
    expect(acquiring).toHaveLength(plain.length + 1);
    // The admission goes with the create too, and the last save releases it.
    expect(instance).toHaveLength(plain.length);
    expect(kinds(instance).slice(0, 1)).toEqual(['short']);
    expect((await store.flow!.list({ limit: 10, now: Date.now() })).items).toEqual([]);
    await spied.close();
  });
});

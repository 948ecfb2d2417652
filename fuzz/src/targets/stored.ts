import {
  composition,
  createRunner,
  defineStore,
  type EncodedSnapshot,
  isStepfoldError,
  type Runner,
  type Snapshot,
  type Store,
  type StoreDriver,
  step,
  type WorkflowDefinition,
} from '@stepfold/engine';
import fc from 'fast-check';
import type { Target } from '../driver.js';
import { expect, typedOrValueAsync } from '../guard.js';
import { type Mutation, mutate, mutationsArb, textDamage } from '../hostile.js';
import { openPg, type PgFixture } from '../pg.js';
import { seedDefinitions, seedHandlers } from '../seeds.js';

/** Every kind a fuzzed definition may use. */
const KINDS = [composition];

// Stored snapshots: a valid instance's stored JSON mutated or torn and written raw into a store
// (a row of PostgreSQL, a row of a store-kit store in memory), then the runner's calls on it. The
// answer is a typed error or a correct result; a failed call leaves the row byte for byte as it was.

/** The seeds a runner takes here: all but the composed one (whose children would write rows of their own). */
const plainSeeds = () =>
  seedDefinitions().filter(
    (d) => !Object.values(d.steps).some((s) => s.kind === 'child' || s.kind === 'map'),
  );

/** A store-kit store over a map of rows, whose rows the fuzzer may overwrite with any text. */
export function rawMemoryStore(): { store: Store; rows: Map<string, EncodedSnapshot> } {
  const rows = new Map<string, EncodedSnapshot>();
  const driver: StoreDriver = {
    async setup() {},
    async insert(e) {
      if (rows.has(e.id)) return false;
      rows.set(e.id, e);
      return true;
    },
    async select(id) {
      return rows.get(id)?.json ?? null;
    },
    async update(e, c) {
      const row = rows.get(e.id);
      if (!row) return 'missing';
      if (row.version !== c.expected) return { stored: row.version };
      rows.set(e.id, e);
      return 'written';
    },
    async version(id) {
      return rows.get(id)?.version ?? null;
    },
    async due() {
      return [];
    },
    async page() {
      return [];
    },
    async remove(id) {
      return rows.delete(id);
    },
  };
  const store = defineStore(
    { name: 'raw-memory', isUnavailable: () => false, sizes: { asked: undefined, fallback: 1 << 20 } },
    driver,
  );
  return { store, rows };
}

/** Where a target writes rows raw and reads them back whole. */
interface RawRows {
  store: Store;
  /** Overwrites the stored text of `id`; false when the database refuses the text itself. */
  write(id: string, text: string): Promise<boolean>;
  /** Everything stored for `id`, as one string to compare. */
  read(id: string): Promise<string>;
  close(): Promise<void>;
}

function memoryRows(): RawRows {
  const { store, rows } = rawMemoryStore();
  return {
    store,
    async write(id, text) {
      rows.set(id, { ...rows.get(id)!, json: text });
      return true;
    },
    async read(id) {
      return JSON.stringify(rows.get(id) ?? null);
    },
    async close() {},
  };
}

async function pgRows(): Promise<RawRows & { pg: PgFixture }> {
  const fx = await openPg('stored');
  return {
    pg: fx,
    store: fx.store,
    async write(id, text) {
      try {
        await fx.pool.query(`UPDATE ${fx.table} SET snapshot = NULL, snapshot_text = $2 WHERE id = $1`, [
          id,
          text,
        ]);
        return true;
      } catch {
        return false; // text PostgreSQL cannot hold (a NUL): no store can have it
      }
    },
    async read(id) {
      const r = await fx.pool.query(
        `SELECT row_to_json(t)::text AS row, (SELECT coalesce(json_agg(x ORDER BY x.seq)::text, '[]') FROM "${fx.schema}"."instances$sent" x WHERE x.id = $1) AS sent FROM ${fx.table} t WHERE t.id = $1`,
        [id],
      );
      return JSON.stringify(r.rows[0] ?? null);
    },
    close: () => fx.drop(),
  };
}

/** The states the rows start from: each plain seed started, and a few events on. */
function startingPoints(defs: WorkflowDefinition[]): Snapshot[] {
  const out: Snapshot[] = [];
  for (const def of defs) {
    let s = step(
      def,
      null,
      { type: 'start', at: 1_000, id: 'row', input: { amount: 3, n: 2 } },
      { kinds: KINDS },
    );
    out.push(s);
    for (const t of Object.values(s.tasks)) {
      s = step(
        def,
        s,
        {
          type: 'task.completed',
          at: 2_000,
          step: t.step,
          attempt: t.attempt,
          output: { ok: 1 },
        },
        { kinds: KINDS },
      );
    }
    out.push(s);
    s = step(def, s, { type: 'cancel', at: 3_000 }, { kinds: KINDS });
    out.push(s);
  }
  return out;
}

type Op = 'get' | 'tick' | 'signal' | 'cancel' | 'abort' | 'requeue' | 'claim';
type Input = {
  from: number;
  damage: { mutations: Mutation[] } | { cut: (t: string) => string };
  op: Op;
  name: string;
};

interface StoredContext {
  rows: RawRows;
  runner: Runner;
  defs: WorkflowDefinition[];
  from: Snapshot[];
  next: number;
}

function storedTarget(
  name: string,
  runs: number,
  open: () => Promise<RawRows>,
): Target<Input, StoredContext> {
  return {
    name,
    runs,
    servers: name.includes('pg'),
    budgetMs: 3_000,
    async open() {
      const rows = await open();
      const defs = plainSeeds();
      const runner = createRunner({
        kinds: KINDS,
        store: rows.store,
        workflows: defs,
        handlers: seedHandlers(),
        execute: false,
        conflictRetries: 2,
      });
      return { rows, runner, defs, from: startingPoints(defs), next: 0 };
    },
    async close(c) {
      await c.rows.close();
    },
    arbitrary(c) {
      return fc.record({
        from: fc.nat(c.from.length - 1),
        damage: fc.oneof(
          { weight: 4, arbitrary: fc.record({ mutations: mutationsArb(1, 3) }) },
          { weight: 1, arbitrary: fc.record({ cut: textDamage }) },
        ),
        op: fc.constantFrom<Op>('get', 'tick', 'signal', 'cancel', 'abort', 'requeue', 'claim'),
        name: fc.constantFrom('go', 'approved', 'manager', 'receipt', 'hu', 'item', 'nope'),
      });
    },
    async check({ from, damage, op, name }, c) {
      const id = `row-${++c.next}`;
      const valid = { ...c.from[from]!, id };
      await c.rows.store.create(valid);
      const text =
        'cut' in damage ? damage.cut(JSON.stringify(valid)) : textOf(mutate(valid, damage.mutations));
      if (!(await c.rows.write(id, text))) return;
      const before = await c.rows.read(id);
      if (op === 'claim') return claimChecked(c.rows.store, id, before, c.rows);
      const r = await typedOrValueAsync(() => call(c.runner, op, id, name), `runner.${op}`);
      const after = await c.rows.read(id);
      if (!r.ok) {
        expect(
          after === before,
          () =>
            `runner.${op} failed (${(r.error as { code?: string }).code}) but changed the row: ${after.slice(0, 300)}`,
        );
        return;
      }
      if (op === 'get') {
        const got = r.value as Snapshot | null;
        expect(got === null || got.id === id, () => `runner.get(${id}) answered instance ${got?.id}`);
        return;
      }
      // A write that succeeded is the engine's answer; a corrupt part its rules never touched is
      // carried forward as it was (the cheap load check does not look inside every part), and is
      // refused, typed, by the first event whose rules do.
    },
  };
}

/**
 * A worker's claim of the damaged row with `onUnreadable`: it never throws for the row's text; it
 * answers the row's snapshot (of this id) or reports one typed error and leaves the row out, and
 * writes nothing but the claim.
 */
async function claimChecked(store: Store, id: string, before: string, rows: RawRows): Promise<void> {
  if (!store.claims) return;
  const reported: unknown[] = [];
  let got: Snapshot[];
  try {
    got = await store.claims.claimDue(10_000_000, 5, {
      ids: [id],
      leaseMs: 0,
      onUnreadable: (e) => reported.push(e),
    });
  } catch (e) {
    expect(false, `claimDue with onUnreadable threw for a damaged row: ${String(e)}`);
  }
  expect(
    got.length + reported.length <= 1,
    () => `claimDue(ids: [${id}]) answered ${got.length} and reported ${reported.length}`,
  );
  expect(
    got.every((s) => s.id === id),
    () => `claimDue(ids: [${id}]) answered instance ${got[0]?.id}`,
  );
  for (const e of reported)
    expect(isStepfoldError(e, 'INVALID_SNAPSHOT'), () => `onUnreadable got an untyped error: ${String(e)}`);
  // The row as read holds its columns as JSON inside JSON: quotes may come escaped.
  const strip = (t: string) =>
    t.replace(/\\?"claim(?:ed_until|_token)\\?":(?:-?\d+|null|\\?"[^"\\]*\\?")/g, '');
  const after = await rows.read(id);
  expect(
    strip(after) === strip(before),
    () => `claimDue changed more than the claim: ${after.slice(0, 300)}`,
  );
}

function call(runner: Runner, op: Op, id: string, name: string): Promise<unknown> {
  switch (op) {
    case 'claim':
      return runner.get(id);
    case 'get':
      return runner.get(id);
    case 'tick':
      return runner.tick(id, 10_000_000);
    case 'signal':
      return runner.signal(id, name, { decision: 'approve', n: 1 });
    case 'cancel':
      return runner.cancel(id, 'fuzz');
    case 'abort':
      return runner.abort(id, 'fuzz');
    case 'requeue':
      return runner.requeue(id, { inputPatch: { n: 3 } });
  }
}

function textOf(v: unknown): string {
  try {
    return JSON.stringify(v) ?? 'null';
  } catch {
    return '{';
  }
}

export const storedMemory = storedTarget('stored-memory', 2_000, async () => memoryRows());
export const storedPg = storedTarget('stored-pg', 1_500, pgRows);

import {
  createRunner,
  createTieredStore,
  createWorker,
  defineWorkflow,
  type Snapshot,
  type TieredStore,
} from '@stepfold/engine';
import { runStoreConformance } from '@stepfold/engine/conformance';
import { createPostgresStore, type PostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropPrefix, openStore, testClient } from './server.js';

// The tiered store with Redis hot and PostgreSQL cold: the conformance suite as one store, and
// thousands of instances moved back and forth while signals arrive, none lost or doubled.

const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';
const SCHEMA = 'stepfold_test';
/** Instances of the move test (default 10 000). */
const MOVE_COUNT = Number(process.env.STEPFOLD_TIERED_COUNT ?? 10_000);

const client = testClient();
const pool = new pg.Pool({ connectionString: PG_URL, max: 24, connectionTimeoutMillis: 2000 });
pool.on('error', () => {});
const cleanups: Array<() => Promise<void>> = [];
let tables = 0;

beforeAll(async () => {
  await pool.query('SELECT 1');
});
afterAll(async () => {
  for (const c of cleanups) await c().catch(() => {});
  await pool.end();
  client.disconnect();
});

function openTiered(o: { minAgeMs?: number } = {}): TieredStore {
  const hot = openStore(client, 'tiered');
  const table = `tiered_${process.pid}_${Date.now().toString(36)}_${++tables}`;
  const cold: PostgresStore = createPostgresStore({ pool, schema: SCHEMA, table });
  cleanups.push(async () => {
    await dropPrefix(client, hot.prefix);
    await pool.query(`DROP TABLE IF EXISTS "${SCHEMA}"."${table}", "${SCHEMA}"."${table}$sent"`);
    await pool.query(`DELETE FROM "${SCHEMA}".stepfold_migrations WHERE table_name = $1`, [table]);
  });
  return createTieredStore({
    hot: hot.store,
    cold,
    finishedAfterMs: 0,
    sleepingMs: 1000,
    minAgeMs: o.minAgeMs ?? 0,
  });
}

runStoreConformance({
  name: 'tiered (redis + postgres)',
  createStore: () => openTiered(),
  capabilities: ['claims', 'wakes'],
});

// Waits for `bump` signals forever, counting each: the task adds the signal's id to the list its
// run started with, and the run continues as new with that output as its input (a loop would
// reset the task's output at each pass).
const counter = defineWorkflow({
  name: 'tiered-counter',
  version: 1,
  start: 'bump',
  steps: {
    bump: { kind: 'wait', signal: 'bump', next: 'count' },
    count: { kind: 'task', handler: 'count', input: { prev: 'input', got: 'outputs.bump' }, next: 'again' },
    again: { kind: 'continueAsNew', carry: { ids: 'outputs.count.ids' } },
  },
});
interface Count {
  ids: string[];
}

/** Runs `work` for each of `items`, `n` at once. */
async function pooled<T>(items: readonly T[], n: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

describe('tiered (redis + postgres): moves under signals', () => {
  it(`${MOVE_COUNT} instances demoted and promoted while signals arrive: none lost, none doubled, no version backwards`, async () => {
    const store = openTiered({ minAgeMs: 50 });
    await store.setup();
    const handlers = {
      count: ({ input }: { input: unknown }) => {
        const { prev, got } = input as { prev?: Count | null; got: { sid: string } };
        return { ids: [...(prev?.ids ?? []), got.sid] };
      },
    };
    const runner = createRunner({ store, workflows: [counter], handlers });
    const ids = Array.from({ length: MOVE_COUNT }, (_, i) => `c-${String(i).padStart(5, '0')}`);
    const t0 = Date.now();
    await pooled(ids, 64, async (id) => {
      await runner.start('tiered-counter', id);
    });
    const worker = createWorker({ runner, concurrency: 32 });
    await worker.start();
    let moving = true;
    const moves = { demoted: 0, skipped: 0, conflicts: 0, calls: 0 };
    const mover = (async () => {
      while (moving) {
        const r = await store.move({ now: Date.now(), limit: 2000 });
        moves.demoted += r.demoted;
        moves.skipped += r.skipped;
        moves.conflicts += r.conflicts;
        moves.calls++;
        if (r.demoted === 0) await new Promise((r) => setTimeout(r, 20));
      }
    })();
    // Versions seen by readers never go back.
    const seen = new Map<string, number>();
    let backwards = 0;
    let reading = true;
    const reader = (async () => {
      while (reading) {
        const id = ids[Math.floor(Math.random() * ids.length)]!;
        const s = await store.load(id);
        if (s === null || s.version < (seen.get(id) ?? 0)) backwards++;
        else seen.set(id, s.version);
      }
    })();
    // Let the mover take most of them to cold before the signals start.
    while (moves.demoted < MOVE_COUNT / 2) await new Promise((r) => setTimeout(r, 50));
    const expected = new Map<string, string[]>(ids.map((id) => [id, []]));
    const signals = Array.from({ length: MOVE_COUNT }, (_, i) => ({
      sid: `s-${i}`,
      id: ids[Math.floor(Math.random() * ids.length)]!,
    }));
    let promotedSignals = 0;
    await pooled(signals, 48, async ({ sid, id }) => {
      if ((await store.hot.load(id)) === null) promotedSignals++;
      await runner.signal(id, 'bump', { sid }, { signalId: sid });
      expected.get(id)!.push(sid);
    });
    await runner.idle();
    // Every signal counted by its instance (the worker and the runner finish the tasks).
    for (let tries = 0; ; tries++) {
      const behind: string[] = [];
      await pooled(ids, 64, async (id) => {
        const s = await store.load(id);
        if (s === null || outputIds(s).length !== expected.get(id)!.length) behind.push(id);
      });
      if (behind.length === 0) break;
      if (tries > 200) {
        const s = await store.load(behind[0]!);
        console.log(
          JSON.stringify(
            {
              s,
              expected: expected.get(behind[0]!),
              hot: await store.hot.load(behind[0]!),
              cold: await store.cold.load(behind[0]!),
            },
            null,
            1,
          ).slice(0, 6000),
        );
        throw new Error(`${behind.length} instances never counted their signals, e.g. ${behind[0]}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    moving = false;
    reading = false;
    await mover;
    await reader;
    await worker.stop();
    // Every instance is checked where it lives.
    const seconds = (Date.now() - t0) / 1000;
    let inHot = 0;
    let inCold = 0;
    let stale = 0;
    await pooled(ids, 64, async (id) => {
      const [h, c] = await Promise.all([store.hot.load(id), store.cold.load(id)]);
      expect(h !== null || c !== null).toBe(true);
      if (h && c) {
        // A stale copy: older than hot's, and invisible (hot wins every read).
        expect(c.version).toBeLessThan(h.version);
        stale++;
      }
      if (h) inHot++;
      else inCold++;
      const s = (h ?? c)!;
      // Each signal exactly once (concurrent signals to one instance apply in either order).
      expect(outputIds(s).sort()).toEqual(expected.get(id)!.sort());
      expect(s.version).toBeGreaterThanOrEqual(seen.get(id) ?? 0);
    });
    let listed = 0;
    const listedIds = new Set<string>();
    for (let cursor: string | null = null; ; ) {
      const page = await store.list({ limit: 1000, cursor });
      for (const s of page.items) listedIds.add(s.id);
      listed += page.items.length;
      cursor = page.cursor;
      if (cursor === null) break;
    }
    expect(listed).toBe(MOVE_COUNT);
    expect(listedIds.size).toBe(MOVE_COUNT);
    expect(backwards).toBe(0);
    expect(moves.demoted).toBeGreaterThan(MOVE_COUNT);
    expect(promotedSignals).toBeGreaterThan(0);
    console.log(
      `tiered move test: ${MOVE_COUNT} instances, ${signals.length} signals (${promotedSignals} to cold instances), ` +
        `${moves.demoted} demotions, ${moves.conflicts} move conflicts, ${moves.calls} move calls, ` +
        `${seen.size} instances sampled by the reader; end: ${inHot} hot, ${inCold} cold, ${stale} stale copies; ${seconds.toFixed(1)} s`,
    );
  }, 600_000);
});

/** The signal ids an instance counted: the `count` output its current run carried over. */
function outputIds(s: Snapshot): string[] {
  return [...((s.input as Count | null)?.ids ?? [])];
}

import type { Snapshot, WakeListener, WakeNotice } from '@stepfold/engine';
import { makeTestSnapshot } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { createPostgresStore, MIGRATIONS, type PostgresStore } from '../src/index.js';
import { tableNames } from '../src/setup.js';
import { parseWake, wakeChannel, wakePayload } from '../src/wakes.js';
import {
  dropTable,
  ownServer,
  PG_URL,
  recordingPool,
  requireServer,
  TEST_SCHEMA,
  testPool,
  uniqueTable,
} from './server.js';
import { useTestTables } from './test-tables.js';

const { pool, table: freshTable, store: freshStore } = useTestTables('w');

const fresh = () => freshStore();

/** A store on `table` whose pool records the text of every statement it sends. */
function spied(table: string, texts: string[]): PostgresStore {
  const spy = recordingPool(pool, (q) => texts.push(q.text));
  return createPostgresStore({ pool: spy, schema: TEST_SCHEMA, table });
}

const wf = { name: 'w', version: 1, hash: 'h' };

/** Wake time `at` is only a running task's deadline: the write announces nothing. */
function deadlineOnly(id: string, at: number, patch: Partial<Snapshot> = {}): Snapshot {
  const task = {
    step: 'a',
    phase: 'run' as const,
    attempt: 1,
    idempotencyKey: 'k',
    handler: 'h',
    dispatchedAt: 0,
    deadline: at,
    dispatchVersion: 1,
  };
  return makeTestSnapshot(id, { workflow: wf, wakeAt: at, tasks: { 'a:run': task }, ...patch });
}

/** A task queued for any worker, due at `at`: the write announces it and hands over the snapshot. */
function handoff(id: string, at: number, patch: Partial<Snapshot> = {}): Snapshot {
  const s = deadlineOnly(id, at, patch);
  s.tasks['a:run']!.queued = true;
  return s;
}

/** Wake time `at` is a sleep timer: the write announces it. */
function timer(id: string, at: number, patch: Partial<Snapshot> = {}): Snapshot {
  return makeTestSnapshot(id, {
    workflow: wf,
    wakeAt: at,
    timers: [{ kind: 'sleep', step: 'a', at }],
    ...patch,
  });
}

/** A listener recording its calls in order, and a way to wait for a condition on them. */
function recorder() {
  const events: string[] = [];
  const hints: WakeNotice[] = [];
  const listener: WakeListener = {
    wake(hint) {
      hints.push(hint);
      events.push('wake');
    },
    lost() {
      events.push('lost');
    },
    restored() {
      events.push('restored');
    },
  };
  const until = async (what: string, ok: () => boolean, ms = 20_000) => {
    const end = Date.now() + ms;
    while (!ok()) {
      if (Date.now() > end) throw new Error(`waited ${ms} ms for ${what}; saw ${JSON.stringify(events)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { listener, events, hints, until };
}

async function indexes(table: string): Promise<Record<string, string>> {
  const r = await pool.query<{ indexname: string; indexdef: string }>(
    'SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2',
    [TEST_SCHEMA, table],
  );
  return Object.fromEntries(r.rows.map((x) => [x.indexname.slice(table.length + 1), x.indexdef]));
}

/** Each snapshot column's compression as pg_attribute records it ('l' lz4, 'p' pglz, '' the server default). */
async function compression(table: string): Promise<Record<string, string>> {
  const r = await pool.query<{ attname: string; attcompression: string }>(
    `SELECT attname, attcompression::text FROM pg_attribute
     WHERE attrelid = $1::regclass AND attname IN ('snapshot', 'snapshot_text')`,
    [`"${TEST_SCHEMA}"."${table}"`],
  );
  return Object.fromEntries(r.rows.map((x) => [x.attname, x.attcompression]));
}

describe('postgres snapshot compression', () => {
  it('setup() has the server compress snapshots with lz4, and they read back intact', async () => {
    const store = await fresh();
    expect(await compression(store.table)).toEqual({ snapshot: 'l', snapshot_text: 'l' });
    // Large and repetitive enough that the server compresses it in the row.
    const big = timer('big', 10, { input: { text: 'stepfold '.repeat(2_000) } });
    await store.create(big);
    const r = await pool.query<{ method: string | null }>(
      `SELECT pg_column_compression(snapshot_text) AS method FROM "${TEST_SCHEMA}"."${store.table}" WHERE id = 'big'`,
    );
    expect(r.rows).toEqual([{ method: 'lz4' }]);
    expect(await store.load('big')).toEqual(big);
  });

  it('a method set by hand stays, and then migration 3 takes no lock on the table', async () => {
    await fresh(); // the schema and the migrations table exist
    const table = freshTable('c');
    const names = tableNames(TEST_SCHEMA, table);
    for (const m of MIGRATIONS.filter((x) => x.version < 3)) {
      for (const statement of m.statements(names)) await pool.query(statement);
      await pool.query(
        `INSERT INTO ${names.migrations} (table_name, version, description) VALUES ($1, $2, $3)`,
        [table, m.version, m.description],
      );
    }
    await pool.query(
      `ALTER TABLE ${names.qualified} ALTER COLUMN snapshot SET COMPRESSION pglz, ALTER COLUMN snapshot_text SET COMPRESSION lz4`,
    );
    // An open transaction that read the table: an ALTER TABLE would wait for it to end. Migration
    // 3's statements alone: later migrations that drop an index (5, 9) wait for it by nature.
    const reader = await pool.connect();
    try {
      await reader.query('BEGIN');
      await reader.query(`SELECT count(*) FROM ${names.qualified}`);
      const third = MIGRATIONS.find((x) => x.version === 3)!;
      const outcome = await Promise.race([
        (async () => {
          for (const statement of third.statements(names)) await pool.query(statement);
          return 'migrated';
        })(),
        new Promise((r) => setTimeout(() => r('waited for the lock'), 5_000)),
      ]);
      expect(outcome).toBe('migrated');
    } finally {
      await reader.query('ROLLBACK');
      reader.release();
    }
    await createPostgresStore({ pool, schema: TEST_SCHEMA, table }).setup();
    expect(await compression(table)).toEqual({ snapshot: 'p', snapshot_text: 'l' });
  });
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

/** The tables a plan reads whole. */
const seqScans = (n: PlanNode): string[] => [
  ...(n['Node Type'] === 'Seq Scan' ? [n['Relation Name'] ?? ''] : []),
  ...(n.Plans ?? []).flatMap(seqScans),
];

describe('postgres due lanes', () => {
  it('a lane query is served by the lane due index, in custom and generic plans', async () => {
    const store = await fresh();
    const t = `"${TEST_SCHEMA}"."${store.table}"`;
    // 60,000 due rows in 60 workflows: enough that without the lane index the planner would walk
    // the due index filtering out 59 rows in 60, or sort the lane's rows.
    await pool.query(
      `INSERT INTO ${t} (id, version, status, workflow, wake_at, snapshot)
       SELECT 'r-' || g, 1, 'waiting', 'wf-' || (g % 60), 1000 + g, '{}'::jsonb
       FROM generate_series(1, 60000) AS g`,
    );
    await pool.query(`VACUUM ANALYZE ${t}`);
    const texts: string[] = [];
    const lane = spied(store.table, texts);
    expect(await lane.listDue(1600, 5, { workflow: 'wf-7' })).toEqual([
      'r-7',
      'r-67',
      'r-127',
      'r-187',
      'r-247',
    ]);
    const text = texts.at(-1)!;
    expect(text).toContain('workflow = $5');

    // The adapter's prepared statements switch to a generic plan after five runs: check both kinds.
    const client = await pool.connect();
    try {
      await client.query(`PREPARE lane_plan AS ${text}`);
      for (const mode of ['force_custom_plan', 'force_generic_plan']) {
        await client.query(`SET plan_cache_mode = ${mode}`);
        const plan = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
          `EXPLAIN (FORMAT JSON) EXECUTE lane_plan(1600, 31600, 5, 'tok', 'wf-7')`,
        );
        const json = JSON.stringify(plan.rows);
        expect(json, mode).toContain(`"Index Name":"${store.table}_lane_fair_due"`);
        // Only `$fair` (a row per key) may be read whole, never the instances.
        expect(seqScans(plan.rows[0]!['QUERY PLAN'][0].Plan), mode).not.toContain(store.table);
      }
      // Without it (dropped in a transaction rolled back), the generic plan filters the whole
      // due range for the lane: a quiet lane would wait behind a flooded one.
      await client.query(`BEGIN; DROP INDEX "${TEST_SCHEMA}"."${store.table}_lane_fair_due"`);
      const plan = await client.query(
        `EXPLAIN (FORMAT JSON) EXECUTE lane_plan(1600, 31600, 5, 'tok', 'wf-7')`,
      );
      await client.query('ROLLBACK');
      expect(JSON.stringify(plan.rows)).not.toContain('_lane_fair_due');
    } finally {
      await client.query('ROLLBACK; DEALLOCATE lane_plan; RESET plan_cache_mode').catch(() => {});
      client.release();
    }
  });

  it('setup() upgrades a table made at version 1 to the latest, keeping its rows', async () => {
    await fresh(); // the schema and the migrations table exist
    const table = freshTable('v');
    const names = tableNames(TEST_SCHEMA, table);
    const v1 = MIGRATIONS.find((m) => m.version === 1)!;
    for (const statement of v1.statements(names)) await pool.query(statement);
    await pool.query(
      `INSERT INTO ${names.migrations} (table_name, version, description) VALUES ($1, 1, $2)`,
      [table, v1.description],
    );
    const store = createPostgresStore({ pool, schema: TEST_SCHEMA, table });
    // A row as version 1's statements wrote it (this store's own need the latest columns).
    await pool.query(
      `INSERT INTO ${names.qualified} (id, version, status, workflow, wake_at, snapshot_text)
       VALUES ('old', 1, 'running', 'w', 10, $1)`,
      [JSON.stringify(timer('old', 10))],
    );
    expect(Object.keys(await indexes(table))).not.toContain('due_lane');

    await store.setup();
    await store.setup();
    const versions = await pool.query(
      `SELECT version FROM ${names.migrations} WHERE table_name = $1 ORDER BY version`,
      [table],
    );
    expect(versions.rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
    expect(await compression(table)).toEqual({ snapshot: 'l', snapshot_text: 'l' });
    // Migration 2's lane index came and went, and so did migration 5's: migration 9's replaces them.
    const defs = await indexes(table);
    expect(defs.due_lane).toBeUndefined();
    expect(defs.lane_due_at).toBeUndefined();
    expect(defs.lane_fair_due).toMatch(
      /\(workflow, fair_key, GREATEST\(wake_at, claimed_until\), wake_at, id\) WHERE \(wake_at IS NOT NULL\)$/,
    );
    expect(await store.load('old')).toEqual(timer('old', 10));
    expect(await store.listDue(100, 10, { workflow: 'w' })).toEqual(['old']);
  });

  it('claims.release clears the claims of exactly the ids given taken with its token, in one statement', async () => {
    const store = await fresh();
    for (const id of ['x', 'y', 'z']) await store.create(timer(id, 5));
    expect(await store.listDue(10, 10, { token: 'mine' })).toEqual(['x', 'y', 'z']);
    const texts: string[] = [];
    await spied(store.table, texts).claims.release(['x', 'z', 'never-stored'], 'mine');
    expect(texts).toHaveLength(1);
    expect(texts[0]).toContain('ANY($1::text[]) AND claim_token = $2');
    expect(await store.listDue(10, 10)).toEqual(['x', 'z']);
    await spied(store.table, texts).claims.release([]);
    expect(texts).toHaveLength(1); // nothing to give back, no query
    await expect(store.claims.release(['bad id'])).rejects.toMatchObject({ code: 'INVALID_ID' });
  });
});

describe('postgres wake notices', () => {
  it('uses one channel per table: a plain identifier under 64 bytes, distinct for distinct tables', async () => {
    const store = await fresh();
    expect(store.channel).toMatch(/^stepfold_[0-9a-f]{16}$/);
    expect(store.channel).toBe(wakeChannel(TEST_SCHEMA, store.table));
    expect(createPostgresStore({ pool, schema: TEST_SCHEMA, table: store.table }).channel).toBe(
      store.channel,
    );
    expect(wakeChannel('a_b', 'c')).not.toBe(wakeChannel('a', 'b_c'));
    const longest = wakeChannel('s'.repeat(63), 't'.repeat(48));
    expect(Buffer.byteLength(longest)).toBeLessThanOrEqual(63);
  });

  it('payloads are small JSON; anything else on the channel is ignored', async () => {
    const name = 'n'.repeat(200);
    const id = 'i'.repeat(200);
    const payload = wakePayload(1_700_000_000_000.5, name, id);
    expect(JSON.parse(payload)).toEqual({ at: 1_700_000_000_000.5, w: name, i: id });
    expect(Buffer.byteLength(payload)).toBeLessThan(8000);
    expect(parseWake(payload)).toEqual({ at: 1_700_000_000_000.5, workflow: name, id });
    expect(parseWake('{"at":5}')).toEqual({ at: 5 });
    // An id that is not a valid one (anyone may NOTIFY the channel) is left out, the rest kept.
    expect(parseWake('{"at":5,"w":"w","i":"no spaces"}')).toEqual({ at: 5, workflow: 'w' });
    for (const junk of [undefined, '', 'junk', '[1]', 'null', '{"at":"5"}', '{"w":"x"}']) {
      expect(parseWake(junk), String(junk)).toBeNull();
    }

    const store = await fresh();
    const rec = recorder();
    const sub = await store.wakes.subscribe(rec.listener);
    try {
      await pool.query(`SELECT pg_notify($1, 'not ours'), pg_notify($1, '{"at":"soon"}')`, [store.channel]);
      await store.create(timer('t', 77));
      await rec.until('the timer notice', () => rec.hints.length > 0);
      expect(rec.hints).toEqual([{ at: 77, workflow: 'w', id: 't' }]);
    } finally {
      await sub.close();
    }
  });

  it('a hand-off payload carries the snapshot while it fits NOTIFY’s 8000 bytes, counted in UTF-8', async () => {
    const small = JSON.stringify(handoff('h', 5));
    expect(parseWake(wakePayload(5, 'w', 'h', small))).toEqual({
      at: 5,
      workflow: 'w',
      id: 'h',
      snapshot: JSON.parse(small),
    });
    // Sized to land exactly on the limit, in ASCII and in three-byte characters.
    const sized = (pad: string, bytes: number) => {
      const base = Buffer.byteLength(
        wakePayload(5, 'w', 'h', JSON.stringify(handoff('h', 5, { input: '' }))),
      );
      const n = Math.floor((bytes - base) / Buffer.byteLength(pad));
      return JSON.stringify(handoff('h', 5, { input: pad.repeat(n) }));
    };
    for (const pad of ['x', '€']) {
      const fits = sized(pad, 7999);
      expect(Buffer.byteLength(wakePayload(5, 'w', 'h', fits))).toBeLessThanOrEqual(7999);
      expect(parseWake(wakePayload(5, 'w', 'h', fits))?.snapshot, pad).toEqual(JSON.parse(fits));
      const over = sized(pad, 8002);
      expect(wakePayload(5, 'w', 'h', over), pad).toBe('{"at":5,"w":"w","i":"h"}');
    }
    // A snapshot of another instance, or one that is not an object, is not handed over.
    expect(parseWake('{"at":5,"w":"w","i":"h","s":{"id":"other"}}')).toEqual({
      at: 5,
      workflow: 'w',
      id: 'h',
    });
    expect(parseWake('{"at":5,"w":"w","i":"h","s":"h"}')).toEqual({ at: 5, workflow: 'w', id: 'h' });
    expect(parseWake('{"at":5,"w":"w","s":{"id":"h"}}')).toEqual({ at: 5, workflow: 'w' });
  });

  it('a hand-off write sends its snapshot with the notice (alone or in a group commit); a timer or a large one sends none', async () => {
    for (const groupCommit of [false, true]) {
      const store = await freshStore({ groupCommit });
      const rec = recorder();
      const sub = await store.wakes.subscribe(rec.listener);
      try {
        const created = handoff('c', 10);
        await store.create(created);
        await store.create(timer('t', 20));
        const saved = handoff('t', 30, { version: 2, timers: [] });
        await store.save(saved, 1);
        const big = handoff('b', 40, { input: 'x'.repeat(9000) });
        await store.create(big);
        await rec.until('four notices', () => rec.hints.length >= 4);
        expect(rec.hints).toEqual([
          { at: 10, workflow: 'w', id: 'c', snapshot: created },
          { at: 20, workflow: 'w', id: 't' },
          { at: 30, workflow: 'w', id: 't', snapshot: saved },
          { at: 40, workflow: 'w', id: 'b' },
        ]);
      } finally {
        await sub.close();
      }
    }
  });

  it('a write with notice null runs the plain statement and sends nothing; a failed save sends nothing', async () => {
    const store = await fresh();
    const texts: string[] = [];
    const s = spied(store.table, texts);
    const rec = recorder();
    const sub = await s.wakes.subscribe(rec.listener);
    try {
      await s.create(deadlineOnly('quiet', 1111));
      expect(texts.at(-1)).toMatch(/^INSERT INTO/);
      await s.save(deadlineOnly('quiet', 2222, { version: 2 }), 1);
      expect(texts.at(-1)).toMatch(/^UPDATE/);
      expect(texts.join('\n')).not.toContain('pg_notify');
      // A conditional save that fails writes nothing and announces nothing, though it ran the NOTIFY form.
      await expect(s.save(timer('quiet', 3333, { version: 3 }), 1)).rejects.toMatchObject({
        code: 'VERSION_CONFLICT',
      });
      expect(texts.at(-2)).toContain('pg_notify');
      await s.save(timer('quiet', 4444, { version: 3 }), 2);
      await s.create(timer('loud', 5555));
      // NOTIFYs arrive in commit order: had any earlier write sent one, it would come first.
      await rec.until('two notices', () => rec.hints.length >= 2);
      expect(rec.hints).toEqual([
        { at: 4444, workflow: 'w', id: 'quiet' },
        { at: 5555, workflow: 'w', id: 'loud' },
      ]);
      expect((await s.load('quiet'))?.version).toBe(3);
    } finally {
      await sub.close();
    }
  });

  it('holds one wakePool connection per subscription; close UNLISTENs and returns it; store.close closes the rest', async () => {
    const table = (await fresh()).table;
    const one = testPool(PG_URL, 1);
    try {
      const store = createPostgresStore({ pool, wakePool: one, schema: TEST_SCHEMA, table });
      const rec = recorder();
      const sub = await store.wakes.subscribe(rec.listener);
      expect([one.totalCount, one.idleCount]).toEqual([1, 0]);
      await sub.close();
      await sub.close();
      expect([one.totalCount, one.idleCount]).toEqual([1, 1]);
      // The same connection comes back from the pool listening to nothing.
      expect((await one.query('SELECT pg_listening_channels() AS c')).rows).toEqual([]);

      await store.wakes.subscribe(rec.listener);
      expect(one.idleCount).toBe(0);
      await store.close();
      expect([one.totalCount, one.idleCount]).toEqual([1, 1]);
      expect((await one.query('SELECT pg_listening_channels() AS c')).rows).toEqual([]);
      expect(rec.events).toEqual([]);
    } finally {
      await one.end();
    }
  });
});

// The one restart test. It stops and starts a PostgreSQL of its own (a free port, or
// STEPFOLD_PG_WAKES_PORT; made on first use), so no other test or bench loses its server meanwhile.
const restarted = await ownServer('STEPFOLD_PG_WAKES_PORT');
describe('postgres wake subscription across a server restart', () => {
  it('reports lost, reconnects with backoff, reports restored, then delivers new notices', async () => {
    await restarted.up();
    const own = testPool(restarted.url, 4);
    const store = createPostgresStore({ pool: own, schema: TEST_SCHEMA, table: uniqueTable('r') });
    try {
      await requireServer(own, restarted.url);
      await store.setup();
      const rec = recorder();
      const sub = await store.wakes.subscribe(rec.listener);
      await store.create(timer('before', 100));
      await rec.until('the first notice', () => rec.hints.length === 1);

      await restarted.stop();
      try {
        await rec.until('lost', () => rec.events.includes('lost'));
        // While the server is down a new subscription fails, typed and retryable.
        await expect(store.wakes.subscribe(recorder().listener)).rejects.toMatchObject({
          code: 'STORE_UNAVAILABLE',
          retryable: true,
        });
      } finally {
        await restarted.start();
      }
      await rec.until('restored', () => rec.events.includes('restored'), 60_000);
      expect(rec.events).toEqual(['wake', 'lost', 'restored']);

      // The pool may hand out a connection that died with the old server once: retry that write.
      for (let tries = 0; ; tries++) {
        try {
          await store.create(timer('after', 200));
          break;
        } catch (e) {
          if (tries >= 5) throw e;
        }
      }
      await rec.until('the notice after the restart', () => rec.hints.length === 2);
      expect(rec.hints).toEqual([
        { at: 100, workflow: 'w', id: 'before' },
        { at: 200, workflow: 'w', id: 'after' },
      ]);
      expect(rec.events).toEqual(['wake', 'lost', 'restored', 'wake']);
      await sub.close();
    } finally {
      await store.close();
      await dropTable(own, store.table).catch(() => {});
      await own.end();
    }
  });
});

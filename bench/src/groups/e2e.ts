import { createRunner, type Runner, type Snapshot, type Store, snapshotBytes, step } from '@stepfold/engine';
import { type Backend, backends, type Connection } from '../backends.js';
import { median } from '../measure.js';
import { snapshotOfAbout } from '../payload.js';
import { type Group, type Row, rateRow } from '../row.js';
import { LINEAR_STEPS, linear10, noop } from '../workflows.js';

// End to end: 10-step workflows with no-op handlers, 4 concurrent runners, each runner
// its own driver client over the same server. A runner's start() returns once the workflow has
// completed (it runs the dispatched handlers in-process and feeds their results back), so 4
// loops of `await runner.start(...)` keep 4 workflows in flight at all times. Each workflow is
// 11 conditional writes (create + one save per step result, which also dispatches the next
// step) and 1 load (start() reads the final state back).

export const RUNNERS = 4;

/** Counts the writes that go through a store (nothing else: no serializing on the timed path). */
function counting(store: Store, count: { writes: number }): Store {
  return {
    ...store,
    async create(s) {
      await store.create(s);
      count.writes++;
    },
    async save(s, expected) {
      await store.save(s, expected);
      count.writes++;
    },
  };
}

/** Mean JSON bytes of the snapshots one e2e workflow writes (computed once, off the timed path). */
function meanSnapshotBytes(id: string): number {
  let s = step(linear10, null, { type: 'start', at: 1_700_000_000_000, id, input: { orderId: 1 } });
  let total = snapshotBytes(JSON.stringify(s));
  for (const [k, name] of LINEAR_STEPS.entries()) {
    s = step(linear10, s, {
      type: 'task.completed',
      at: 1_700_000_000_001 + k,
      step: name,
      attempt: 1,
      output: null,
    });
    total += snapshotBytes(JSON.stringify(s));
  }
  return Math.round(total / (LINEAR_STEPS.length + 1));
}

export interface OursRun {
  workflowsPerSec: number;
  writesPerSec: number;
  seconds: number;
}

/** A fleet of RUNNERS runners, one connection each, ready to run batches of workflows. */
export async function fleet(b: Backend): Promise<{
  run(workflows: number): Promise<OursRun>;
  conns: Connection[];
  /** Mean JSON bytes of the snapshots a workflow of this fleet writes. */
  snapshotBytes: number;
  close(): Promise<void>;
}> {
  const conns = await Promise.all(Array.from({ length: RUNNERS }, () => b.connect()));
  await conns[0]!.store.setup();
  const count = { writes: 0 };
  const runners: Runner[] = conns.map((c) =>
    createRunner({ store: counting(c.store, count), workflows: [linear10], handlers: { noop } }),
  );
  const tag = `e2e-${process.pid}-${Date.now().toString(36)}`;
  let seq = 0;
  const ids: string[] = [];
  return {
    conns,
    snapshotBytes: meanSnapshotBytes(`${tag}-1000`),
    async run(workflows) {
      const before = { ...count };
      let left = workflows;
      const t0 = performance.now();
      await Promise.all(
        runners.map(async (r) => {
          while (left > 0) {
            left--;
            const id = `${tag}-${seq++}`;
            ids.push(id);
            const s: Snapshot = await r.start('bench-linear', id, { orderId: seq });
            if (s.status !== 'completed') throw new Error(`${id} ended ${s.status}`);
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      const writes = count.writes - before.writes;
      return {
        workflowsPerSec: workflows / seconds,
        writesPerSec: writes / seconds,
        seconds,
      };
    },
    async close() {
      // Leave the server as we found it (best effort: a dead server must not hide the results).
      const store = conns[0]!.store;
      for (let i = 0; i < ids.length; i += 50) {
        await Promise.all(ids.slice(i, i + 50).map((id) => store.delete(id).catch(() => false)));
      }
      await Promise.all(conns.map((c) => c.close().catch(() => {})));
    },
  };
}

/** Raw conditional updates/s from RUNNERS clients, one instance each, with a snapshot of `bytes`. */
export async function rawLimit(conns: Connection[], bytes: number, seconds: number): Promise<number[]> {
  const base = snapshotOfAbout(bytes);
  const prefix = `limit-${process.pid}`;
  const state = await Promise.all(
    conns.map(async (c, w) => {
      const id = `${prefix}-${w}`;
      await c.store.delete(id);
      const s: Snapshot = { ...base, id, version: 1 };
      await c.store.create(s);
      return { c, s };
    }),
  );
  const samples: number[] = [];
  try {
    for (let k = 0; k < seconds; k++) {
      let n = 0;
      const end = performance.now() + 1000;
      const t0 = performance.now();
      await Promise.all(
        state.map(async (st) => {
          while (performance.now() < end) {
            const next = { ...st.s, version: st.s.version + 1 };
            await st.c.raw(next, st.s.version);
            st.s = next;
            n++;
          }
        }),
      );
      samples.push(n / ((performance.now() - t0) / 1000));
    }
  } finally {
    for (const st of state) await st.c.store.delete(st.s.id).catch(() => false);
  }
  return samples;
}

function e2eGroup(b: Backend): Group {
  return {
    name: `e2e-${b.name}`,
    async run(): Promise<Row[]> {
      const down = await b.unavailable();
      if (down) {
        return [
          { ...rateRow(`e2e-${b.name}`, null, null, 'workflows/s', null), note: `not measured: ${down}` },
        ];
      }
      const f = await fleet(b);
      try {
        await f.run(Math.max(8, Math.round(b.e2eWorkflows / 10))); // warm-up
        const rounds: OursRun[] = [];
        for (let r = 0; r < 3; r++) rounds.push(await f.run(Math.round(b.e2eWorkflows / 3)));
        const wps = median(rounds.map((r) => r.workflowsPerSec));
        return [
          rateRow(`e2e-${b.name}`, wps, null, 'workflows/s', null, {
            note: `${b.server}: ${RUNNERS} runners (one client each), ${b.e2eWorkflows} 10-step no-op workflows in 3 rounds; no baseline (reported as is)`,
            details: { rounds },
          }),
        ];
      } finally {
        await f.close();
      }
    },
  };
}

/** e2e rows for every backend except postgres, which has its own group with the baselines. */
export const e2eGroups: Group[] = backends.filter((b) => b.name !== 'postgres').map(e2eGroup);

/**
 * e2e-postgres: our 4 runners against DBOS Transact at concurrency 4 on the same server, in
 * alternating rounds (ours, DBOS, DBOS, ours, ...); then e2e-postgres-limit: the writes/s our
 * runners achieved against raw conditional UPDATEs/s from 4 clients with a snapshot of the
 * same mean size (the physical limit of one write per transition).
 */
export const e2ePostgres: Group = {
  name: 'e2e-postgres',
  async run(): Promise<Row[]> {
    const b = backends.find((x) => x.name === 'postgres');
    const missing = (note: string): Row[] => [
      { ...rateRow('e2e-postgres', null, null, 'workflows/s', 3), note },
      { ...rateRow('e2e-postgres-limit', null, null, 'writes/s', 0.7), note },
    ];
    if (!b) return missing('not measured: no postgres store adapter in this checkout yet');
    const down = await b.unavailable();
    if (down) return missing(`not measured: ${down}`);

    const dbos = await import('../dbos.js');
    const PER_ROUND = 100;
    const ROUNDS = 4;
    const f = await fleet(b);
    const ours: OursRun[] = [];
    const theirs: number[] = [];
    let dbosNote: string | null = null;
    try {
      try {
        await dbos.launchDbos(b.url);
      } catch (e) {
        dbosNote = `DBOS Transact ${dbos.DBOS_VERSION} could not run: ${e instanceof Error ? e.message : String(e)}`;
      }
      await f.run(20); // warm-up
      let first = 0;
      if (!dbosNote) {
        await dbos.runDbos(20, RUNNERS, first);
        first += 20;
      }
      for (let r = 0; r < ROUNDS; r++) {
        const oursFirst = r % 2 === 0;
        if (oursFirst) ours.push(await f.run(PER_ROUND));
        if (!dbosNote) {
          theirs.push(await dbos.runDbos(PER_ROUND, RUNNERS, first));
          first += PER_ROUND;
        }
        if (!oursFirst) ours.push(await f.run(PER_ROUND));
      }
      const bytes = f.snapshotBytes;
      const limit = await rawLimit(f.conns, bytes, 6);
      const wps = median(ours.map((o) => o.workflowsPerSec));
      const writes = median(ours.map((o) => o.writesPerSec));
      return [
        rateRow('e2e-postgres', wps, dbosNote ? null : median(theirs), 'workflows/s', 3, {
          note:
            dbosNote ??
            `${RUNNERS} runners (one pg pool of 1 connection each) vs DBOS Transact ${dbos.DBOS_VERSION} at concurrency ${RUNNERS} (its own system database on the same server), ${ROUNDS}×${PER_ROUND} workflows each, alternating rounds`,
          details: { ours, dbos: theirs },
        }),
        rateRow('e2e-postgres-limit', writes, median(limit), 'writes/s', 0.7, {
          note: `our conditional writes/s during e2e-postgres (11 per workflow) vs raw conditional UPDATEs/s from ${RUNNERS} clients, ${bytes} B snapshots (the mean our runners wrote)`,
          details: { ourWritesPerSec: ours.map((o) => o.writesPerSec), rawSamples: limit },
        }),
      ];
    } finally {
      if (!dbosNote) await dbos.shutdownDbos().catch(() => {});
      await f.close();
    }
  },
};

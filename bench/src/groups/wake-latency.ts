import { createRunner } from '@stepfold/engine';
import { createPostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { backends, pgDatabaseUrl } from '../backends.js';
import { type Fleet, startFleet } from '../fleet/fleet.js';
import { signalProbe, timerProbe } from '../fleet/probes.js';
import { percentile, wallMs } from '../peers/common.js';
import { graphileWakeLatency } from '../peers/graphile-latency.js';
import { costRow, type Group, type Row } from '../row.js';

// wake-latency: how long from an event written by another process to the handler it makes due
// starting in an idle worker, on PostgreSQL (LISTEN/NOTIFY), against graphile-worker's job
// add → task start on the same server, in alternating rounds. Two of ours:
//  - signal: this process sends a signal (`runner.send`: one statement appends it to the inbox and
//    NOTIFYs the snapshot with it) to an instance waiting in a `wait` step; the worker process
//    applies it and takes the task it dispatches in one write, then runs it. The rows with `sync`
//    time `runner.signal` instead (load, write, and the worker's take: a round trip more), with no goal.
//  - timer: this process starts an instance that sleeps until a time 50–100 ms ahead; the worker
//    learns the time from the NOTIFY of that write and ticks when it falls due.
// A sample is the handler's wall clock at entry minus the signal's send time (or the timer's due
// time), in ms, one at a time with a 10–30 ms pause between, as graphile's samples are taken.
// idle-queries: poll queries per second of an idle worker (LISTEN live), after a 10 s ramp-up.

// Per round. A p99 is the ninth-slowest of 900 samples: with 300 (100 a round) it was the third, and
// runs of unchanged code read 0.76–1.4× the baseline's.
const SAMPLES = 225;
// Timer samples wait 50–100 ms each: fewer per round.
const TIMER_SAMPLES = 100;
// An even number: ours, graphile, graphile, ours, ours, graphile, … gives each side the same share
// of a slow drift (the server still settling after the groups before this one). With 3 rounds ours
// went first twice, right after the e2e groups' writes.
const ROUNDS = 4;
// Samples thrown away first, while the worker process is still being optimized.
const WARM = 30;
const TABLE = 'wake_latency';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves with the next latency the fleet's `hit` handler reports for `id`. */
function hitOf(fleet: Fleet): (id: string) => Promise<number> {
  const waiting = new Map<string, (ms: number) => void>();
  fleet.onHit((ms, id) => {
    waiting.get(id)?.(ms);
    waiting.delete(id);
  });
  return (id) => new Promise((resolve) => waiting.set(id, resolve));
}

async function ourLatencies(url: string, fleet: Fleet, round: number) {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const store = createPostgresStore({ pool, table: TABLE });
  // Emptied each round, as graphile-worker gets a new database each round: no run's rows (or their
  // dead versions) weigh on the next.
  await pool.query(`TRUNCATE "${store.schema}"."${TABLE}", "${store.schema}"."${TABLE}$sent"`);
  // Hands its tasks off: the worker process runs every handler.
  const api = createRunner({
    store,
    workflows: [signalProbe, timerProbe],
    handlers: { hit: () => null },
    execute: false,
  });
  const hit = hitOf(fleet);
  const tag = `wl-${round}-${Date.now().toString(36)}`;
  const signal: number[] = [];
  const sync: number[] = [];
  const timer: number[] = [];
  try {
    for (const [kind, into] of [
      ['s', signal],
      ['y', sync],
    ] as const) {
      for (let i = 0; i < SAMPLES + WARM; i++) {
        const id = `${tag}-${kind}-${i}`;
        await api.start('bench-signal', id);
        await pause(10 + Math.random() * 20);
        const arrived = hit(id);
        const payload = { sentAt: wallMs() };
        await (kind === 's' ? api.send(id, 'go', payload) : api.signal(id, 'go', payload));
        const ms = await arrived;
        if (i >= WARM) into.push(ms);
      }
    }
    for (let i = 0; i < TIMER_SAMPLES + WARM; i++) {
      const id = `${tag}-t-${i}`;
      const arrived = hit(id);
      await api.start('bench-timer', id, { dueAt: Math.ceil(wallMs() + 50 + Math.random() * 50) });
      const ms = await arrived;
      if (i >= WARM) timer.push(ms);
      await pause(10 + Math.random() * 20);
    }
  } finally {
    await pool.end();
  }
  return { signal, sync, timer };
}

export const wakeLatency: Group = {
  name: 'wake-latency',
  async run(): Promise<Row[]> {
    const b = backends.find((x) => x.name === 'postgres')!;
    const names = [
      'wake-latency-signal-p50',
      'wake-latency-signal-p99',
      'wake-latency-timer-p50',
      'wake-latency-timer-p99',
      'wake-latency-signal-sync-p50',
      'wake-latency-signal-sync-p99',
    ];
    const down = await b.unavailable();
    if (down)
      return names.map((n) => ({ ...costRow(n, null, null, 'ms', 1), note: `not measured: ${down}` }));
    const url = pgDatabaseUrl(b.url, 'stepfold_bench');
    const fleet = await startFleet({ pgUrl: url, processes: 1, concurrency: 2, table: TABLE });
    const signal: number[] = [];
    const sync: number[] = [];
    const timer: number[] = [];
    const graphile: number[] = [];
    try {
      for (let r = 0; r < ROUNDS; r++) {
        if (r % 2 === 1) graphile.push(...(await graphileWakeLatency(b.url, SAMPLES)).samples);
        const ours = await ourLatencies(url, fleet, r);
        signal.push(...ours.signal);
        sync.push(...ours.sync);
        timer.push(...ours.timer);
        if (r % 2 === 0) graphile.push(...(await graphileWakeLatency(b.url, SAMPLES)).samples);
        process.stderr.write(`  wake-latency: round ${r + 1}/${ROUNDS} done\n`);
      }
    } finally {
      await fleet.stop();
    }
    const g50 = percentile(graphile, 50);
    const g99 = percentile(graphile, 99);
    const note = (what: string) =>
      `${what} → handler start in a worker process (createWorker, LISTEN/NOTIFY) vs graphile-worker job add → task start (another process adds), ${ROUNDS}×${SAMPLES} samples each (${ROUNDS}×${TIMER_SAMPLES} of timers), alternating rounds`;
    const details = { signal, sync, timer, graphile };
    return [
      costRow(names[0]!, percentile(signal, 50), g50, 'ms', 1, {
        note: note('signal sent (runner.send) by another process'),
        details,
      }),
      costRow(names[1]!, percentile(signal, 99), g99, 'ms', 1, {
        note: note('signal sent (runner.send) by another process'),
      }),
      costRow(names[2]!, percentile(timer, 50), g50, 'ms', 1, { note: note('timer due') }),
      costRow(names[3]!, percentile(timer, 99), g99, 'ms', 1, { note: note('timer due') }),
      costRow(names[4]!, percentile(sync, 50), g50, 'ms', null, {
        note: note('runner.signal (load and write, then the worker’s take) from another process'),
      }),
      costRow(names[5]!, percentile(sync, 99), g99, 'ms', null, {
        note: note('runner.signal (load and write, then the worker’s take) from another process'),
      }),
    ];
  },
};

/** idle-queries: store queries per second of an idle worker (goal: at most one). */
export const idleQueries: Group = {
  name: 'idle-queries',
  async run(): Promise<Row[]> {
    const b = backends.find((x) => x.name === 'postgres')!;
    const down = await b.unavailable();
    if (down) return [{ ...costRow('idle-queries', null, 1, 'queries/s', 1), note: `not measured: ${down}` }];
    const fleet = await startFleet({
      pgUrl: pgDatabaseUrl(b.url, 'stepfold_bench'),
      processes: 1,
      concurrency: 2,
      table: 'idle_queries',
    });
    const RAMP_S = 10;
    const MEASURE_S = 30;
    try {
      await pause(RAMP_S * 1000);
      const [before] = await fleet.queries();
      await pause(MEASURE_S * 1000);
      const [after] = await fleet.queries();
      const calls = after! - before!;
      // No call at all in the window is reported at the window's resolution (one call in
      // MEASURE_S seconds), an upper bound, so the ratio stays finite.
      const perSecond = Math.max(calls, 1) / MEASURE_S;
      return [
        costRow('idle-queries', perSecond, 1, 'queries/s', 1, {
          note: `poll queries/s (listDue, claimDue, the inbox claim) of one idle worker (3 workflows, so 3 lanes and the inbox lane per lane round, one query per lease round between them; LISTEN live) over ${MEASURE_S} s after a ${RAMP_S} s ramp-up (${before} calls during it)${calls === 0 ? `; no call in the window: reported as at most one per ${MEASURE_S} s` : ''}; baseline = the goal of one query per second`,
          details: { rampCalls: before, measuredCalls: after! - before! },
        }),
      ];
    } finally {
      await fleet.stop();
    }
  },
};

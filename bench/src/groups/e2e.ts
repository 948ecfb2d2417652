import { availableParallelism } from 'node:os';
import { snapshotBytes, step } from '@stepfold/engine';
import { backends, pgDatabaseUrl } from '../backends.js';
import { type Fleet, type FleetRun, startFleet } from '../fleet/fleet.js';
import { median } from '../measure.js';
import { snapshotOfAbout } from '../payload.js';
import { PEERS, type Peer } from '../peers/index.js';
import { type Group, pairedRateRow, type Row, rateRow } from '../row.js';
import { LINEAR_STEPS, linear10 } from '../workflows.js';

// End to end: 10-step workflows with no-op handlers, 4 in flight at all times, from worker
// processes (fleet/). A runner's start() returns once the workflow has completed (it runs the
// dispatched handlers in-process and feeds their results back), so loops of `await
// runner.start(...)` keep the workflows in flight. Each workflow is 11 conditional writes (create
// + one save per step result, which also dispatches the next step). The other stores' rows:
// e2e-stores.ts.

/** Workflows in flight in all, in every e2e row. */
export const RUNNERS = 4;

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

/**
 * Worker processes of e2e-postgres: half the cores (at least one), since the database under test
 * runs on the same machine and spends about as much CPU per write as our processes do. On two
 * cores, two worker processes beside PostgreSQL's backends cost each side ~1.5× the CPU per write
 * of one process (measured: 92–101 vs 51–65 µs in our processes), so one does more.
 */
export const E2E_PROCESSES = Math.max(1, Math.floor(availableParallelism() / 2));
/** Workflows in flight per e2e-postgres worker process (RUNNERS in all). */
export const PER_PROCESS = Math.max(1, Math.round(RUNNERS / E2E_PROCESSES));
/** The same workload from one worker process per core (at least two), shown beside it. */
const EVERY_CORE = Math.max(2, availableParallelism());
const EVERY_CORE_PER_PROCESS = Math.max(1, Math.round(RUNNERS / EVERY_CORE));

// Untimed work before every timed round, ours and each peer's, in batches until this long: whatever
// runs first after the machine sat idle (our workers through the peers' rounds) costs up to 1.5×
// the CPU for a while, the raw writes too (measured: 76 vs 59 µs per write).
const WARM_UP_MS = 1_000;

/** Runs `batch(0)`, `batch(1)`, … until {@link WARM_UP_MS} have passed. */
async function warmUp(batch: (k: number) => Promise<unknown>): Promise<void> {
  const t0 = performance.now();
  for (let k = 0; performance.now() - t0 < WARM_UP_MS; k++) await batch(k);
}

/** Warms a fresh fleet until its code is optimized: the first few hundred workflows of a new process cost twice the CPU per write of the ones after. */
async function warmFleet(f: Fleet, tag: string): Promise<void> {
  for (let w = 0; w < 3; w++) await f.run(400, `${tag}-${w}-${Date.now().toString(36)}`);
}

// 1,000 workflows a round: ours take ~1.5 s, long enough that one GC pause or checkpoint cannot
// swing a round; each peer runs the same count.
const E2E_PER_ROUND = 1000;
const E2E_ROUNDS = 3;

/** Goal of e2e-postgres-limit: our writes/s at least this share of the same writes by hand. */
const LIMIT_GOAL = 0.85;
/** Goal of e2e-postgres-limit-every-core (one worker process per core). */
const EVERY_CORE_LIMIT_GOAL = 0.8;

/** The e2e-postgres row of a peer: dbos's is the headline row. */
const rowName = (p: Peer) => (p.name === 'dbos' ? 'e2e-postgres' : `e2e-postgres-vs-${p.name}`);

/** Every e2e-postgres row, empty, with why it was not measured. */
function unmeasured(note: string): Row[] {
  return [
    ...PEERS.map((p) => ({ ...rateRow(rowName(p), null, null, 'workflows/s', 5), note })),
    { ...rateRow('e2e-postgres-limit', null, null, 'writes/s', LIMIT_GOAL), note },
    { ...rateRow('e2e-postgres-every-core', null, null, 'workflows/s', null), note },
    { ...rateRow('e2e-postgres-limit-every-core', null, null, 'writes/s', EVERY_CORE_LIMIT_GOAL), note },
  ];
}

/** The peers of e2e-postgres: those that launched, each one's rounds or why it could not run. */
interface PeerRounds {
  live: Peer[];
  theirs: Map<string, number[]>;
  notes: Map<string, string>;
  /** The number of the next peer workflow: each peer run starts its ids there. */
  first: number;
}

/** One layer's raw sample: writes/s and client CPU per write. */
type RawSample = { perSec: number; cpuUsPerWrite: number };

/** What e2e-postgres measured, round by round. */
interface E2eSamples {
  ours: FleetRun[];
  // The limit's samples, each taken right after one of our rounds and as long, so ours and the
  // raw writes meet the same machine state (the peers' databases' autovacuum, checkpoints).
  limit: number[];
  rawCpu: number[];
  // The layers between, as in e2e-stores.ts: the adapter alone, and the reducer with it.
  layers: Record<'adapter' | 'reducer', RawSample[]>;
  wideRuns: FleetRun[];
  wideLimit: number[];
  peers: PeerRounds;
  /** Mean JSON bytes of one workflow's snapshots. */
  bytes: number;
  /** The older limit: one row UPDATEd over and over with a snapshot of the mean size. */
  oneRow: number[];
}

/**
 * e2e-postgres: our worker processes (half the cores, `RUNNERS` workflows in flight in all) against
 * each peer at concurrency `RUNNERS` on the same server, in alternating rounds (ours first, then
 * the peers, then the reverse); and e2e-postgres-limit: the writes/s our processes achieved
 * against the same writes by hand from as many processes and clients, each raw sample taken right
 * after one of our rounds (the physical limit of one write per transition).
 */
export const e2ePostgres: Group = {
  name: 'e2e-postgres',
  async run(): Promise<Row[]> {
    const b = backends.find((x) => x.name === 'postgres');
    if (!b) return unmeasured('not measured: no postgres store adapter in this checkout yet');
    const down = await b.unavailable();
    if (down) return unmeasured(`not measured: ${down}`);
    const fleet = await startFleet({
      pgUrl: pgDatabaseUrl(b.url, 'stepfold_bench'),
      processes: E2E_PROCESSES,
      concurrency: PER_PROCESS,
      table: 'e2e_workers',
    });
    const wide = await startFleet({
      pgUrl: pgDatabaseUrl(b.url, 'stepfold_bench'),
      processes: EVERY_CORE,
      concurrency: EVERY_CORE_PER_PROCESS,
      table: 'e2e_workers',
    });
    try {
      return e2eRows(await measureE2e(b.url, fleet, wide));
    } finally {
      await fleet.stop();
      await wide.stop();
    }
  },
};

/** Warms each peer once (launched and shut down); a peer that cannot run is noted and left out. */
async function warmPeers(url: string): Promise<PeerRounds> {
  const peers: PeerRounds = { live: [], theirs: new Map(), notes: new Map(), first: 0 };
  for (const p of PEERS) {
    try {
      process.stderr.write(`  e2e-postgres: launching ${p.version}\n`);
      await p.launch(url);
      await p.run(100, RUNNERS, peers.first); // warm-up
      peers.first += 100;
      peers.live.push(p);
      peers.theirs.set(p.name, []);
      await p.shutdown();
    } catch (e) {
      peers.notes.set(p.name, `${p.version} could not run: ${e instanceof Error ? e.message : String(e)}`);
      await p.shutdown().catch(() => {});
    }
  }
  return peers;
}

/** The alternating rounds, then the one-row limit. Every timed round, ours and each peer's (launched fresh for it), follows warmUp(). */
async function measureE2e(url: string, fleet: Fleet, wide: Fleet): Promise<E2eSamples> {
  const peers = await warmPeers(url);
  await warmFleet(fleet, 'warm');
  await warmFleet(wide, 'warm-wide');
  const s: E2eSamples = {
    ours: [],
    limit: [],
    rawCpu: [],
    layers: { adapter: [], reducer: [] },
    wideRuns: [],
    wideLimit: [],
    peers,
    bytes: 0,
    oneRow: [],
  };
  for (let r = 0; r < E2E_ROUNDS; r++) {
    const tag = `e2e-${r}-${Date.now().toString(36)}`;
    if (r % 2 === 0) await oursRound(s, fleet, wide, tag);
    for (const p of r % 2 === 0 ? peers.live : [...peers.live].reverse()) await peerRound(url, p, peers);
    if (r % 2 === 1) await oursRound(s, fleet, wide, tag);
    process.stderr.write(`  e2e-postgres: round ${r + 1}/${E2E_ROUNDS} done\n`);
  }
  s.bytes = meanSnapshotBytes('e2e-0-xxxxxxxx-0-1000');
  // The limit: the same writes by hand (each workflow's INSERT and ten conditional UPDATEs, the
  // reducer's snapshots serialized per write) from the same processes and clients, sampled
  // after each of our rounds (oursRound). The older figure, one row UPDATEd over and over with a
  // snapshot of the mean size, is kept in details.
  for (let k = 0; k < 3; k++) s.oneRow.push((await fleet.raw(1000, snapshotOfAbout(s.bytes))).perSec);
  return s;
}

/** Our round: the fleet's workflows, the raw limit and its layers right after, then the every-core fleet's. */
async function oursRound(s: E2eSamples, fleet: Fleet, wide: Fleet, tag: string): Promise<void> {
  await warmUp((k) => fleet.run(200, `${tag}-warm-${k}`));
  const o = await fleet.run(E2E_PER_ROUND, tag);
  s.ours.push(o);
  const r = await fleet.raw(Math.max(1000, o.seconds * 1000));
  s.limit.push(r.perSec);
  s.rawCpu.push(r.cpuUsPerWrite);
  for (const through of ['adapter', 'reducer'] as const)
    s.layers[through].push(await fleet.raw(Math.max(1000, o.seconds * 1000), undefined, through));
  // The every-core fleet right after, with its own raw sample from as many processes.
  await warmUp((k) => wide.run(200, `${tag}-wide-warm-${k}`));
  const w = await wide.run(E2E_PER_ROUND, `${tag}-wide`);
  s.wideRuns.push(w);
  s.wideLimit.push((await wide.raw(Math.max(1000, w.seconds * 1000))).perSec);
}

/**
 * One peer's round: launched for it and shut down after, so no peer's idle polling runs during
 * another contender's round.
 */
async function peerRound(url: string, p: Peer, peers: PeerRounds): Promise<void> {
  await p.launch(url);
  await warmUp(async () => {
    await p.run(60, RUNNERS, peers.first);
    peers.first += 60;
  });
  peers.theirs.get(p.name)!.push(await p.run(E2E_PER_ROUND, RUNNERS, peers.first));
  peers.first += E2E_PER_ROUND;
  await p.shutdown();
}

/** The e2e-postgres rows of what was measured. */
function e2eRows(s: E2eSamples): Row[] {
  const { ours, limit, layers, wideRuns, wideLimit, bytes } = s;
  const { theirs, notes } = s.peers;
  const wps = median(ours.map((o) => o.workflowsPerSec));
  const setup = `${E2E_PROCESSES} worker process${E2E_PROCESSES === 1 ? '' : 'es'} × ${PER_PROCESS} workflows in flight (createWorker, one pg pool each)`;
  return [
    ...PEERS.map((p) =>
      rateRow(rowName(p), wps, notes.has(p.name) ? null : median(theirs.get(p.name)!), 'workflows/s', 5, {
        note:
          notes.get(p.name) ??
          `${setup} vs ${p.version} at concurrency ${RUNNERS} (its own database on the same server), ${E2E_ROUNDS}×${E2E_PER_ROUND} workflows each, alternating rounds`,
        details: { ours, [p.name]: theirs.get(p.name) ?? [] },
      }),
    ),
    pairedRateRow(
      'e2e-postgres-limit',
      ours.map((o) => o.writesPerSec),
      limit,
      'writes/s',
      LIMIT_GOAL,
      {
        note: `our conditional writes/s during e2e-postgres (11 per workflow) vs the same statements by hand (per workflow the INSERT and ten conditional UPDATEs with the reducer's snapshots, mean ${bytes} B) from the same ${E2E_PROCESSES} processes × ${PER_PROCESS} clients, each sample taken right after one of our rounds and as long; the ratio is the median of those pairs' ratios (ours and the raw figures are the medians)`,
        details: {
          ourWritesPerSec: ours.map((o) => o.writesPerSec),
          rawSamples: limit,
          oneRowUpdatesPerSec: s.oneRow,
          // Where the gap is: client CPU per write in our processes vs the raw loop's.
          ourCpuUsPerWrite: ours.map((o) => o.cpuUsPerWrite),
          rawCpuUsPerWrite: s.rawCpu,
          adapterWritesPerSec: layers.adapter.map((l) => l.perSec),
          adapterCpuUsPerWrite: layers.adapter.map((l) => l.cpuUsPerWrite),
          reducerAdapterWritesPerSec: layers.reducer.map((l) => l.perSec),
          reducerAdapterCpuUsPerWrite: layers.reducer.map((l) => l.cpuUsPerWrite),
        },
      },
    ),
    rateRow(
      'e2e-postgres-every-core',
      median(wideRuns.map((o) => o.workflowsPerSec)),
      wps,
      'workflows/s',
      null,
      {
        note: `the e2e-postgres workload from ${EVERY_CORE} worker processes × ${EVERY_CORE_PER_PROCESS} workflows in flight (one per core) vs ${setup}, each round right after the other`,
        details: { everyCore: wideRuns, ours },
      },
    ),
    pairedRateRow(
      'e2e-postgres-limit-every-core',
      wideRuns.map((o) => o.writesPerSec),
      wideLimit,
      'writes/s',
      EVERY_CORE_LIMIT_GOAL,
      {
        note: `as e2e-postgres-limit (the median of the pairs' ratios), from ${EVERY_CORE} worker processes × ${EVERY_CORE_PER_PROCESS} workflows in flight vs the same writes by hand from ${EVERY_CORE} processes × ${EVERY_CORE_PER_PROCESS} clients`,
        details: {
          ourWritesPerSec: wideRuns.map((o) => o.writesPerSec),
          rawSamples: wideLimit,
          ourCpuUsPerWrite: wideRuns.map((o) => o.cpuUsPerWrite),
        },
      },
    ),
  ];
}

/** Workflows in flight per process in busy-postgres (32 in all on two processes). */
const BUSY_PER_PROCESS = 16;

/**
 * busy-postgres: the e2e-postgres fleet with many more workflows in flight, with the store's
 * group commit on vs off (two fleets of the same processes, alternating rounds), and the writes/s
 * with it on against the raw limit from as many clients. No goal: it shows what `groupCommit`
 * buys once the database is the busy part.
 */
export const e2ePostgresBusy: Group = {
  name: 'busy-postgres',
  async run(): Promise<Row[]> {
    const b = backends.find((x) => x.name === 'postgres');
    const down = b ? await b.unavailable() : 'no postgres store adapter in this checkout yet';
    if (!b || down) {
      return [
        { ...rateRow('busy-postgres', null, null, 'workflows/s', null), note: `not measured: ${down}` },
      ];
    }
    const PER_ROUND = 2000;
    const ROUNDS = 3;
    const start = (groupCommit: boolean) =>
      startFleet({
        pgUrl: pgDatabaseUrl(b.url, 'stepfold_bench'),
        processes: EVERY_CORE,
        concurrency: BUSY_PER_PROCESS,
        table: 'e2e_busy',
        groupCommit,
      });
    const on = await start(true);
    const off = await start(false).catch(async (e) => {
      await on.stop();
      throw e;
    });
    try {
      const results = { on: [] as FleetRun[], off: [] as FleetRun[], limit: [] as number[] };
      for (const f of [on, off]) await warmFleet(f, 'busy-warm');
      const round = async (which: 'on' | 'off', tag: string) => {
        const f = which === 'on' ? on : off;
        await warmUp((k) => f.run(400, `${tag}-${which}-warm-${k}`));
        const r = await f.run(PER_ROUND, `${tag}-${which}`);
        results[which].push(r);
        if (which === 'on') results.limit.push((await on.raw(Math.max(1000, r.seconds * 1000))).perSec);
      };
      for (let r = 0; r < ROUNDS; r++) {
        const tag = `busy-${r}-${Date.now().toString(36)}`;
        for (const which of r % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const))
          await round(which, tag);
        process.stderr.write(`  busy-postgres: round ${r + 1}/${ROUNDS} done\n`);
      }
      const wps = (runs: FleetRun[]) => median(runs.map((x) => x.workflowsPerSec));
      return [
        rateRow('busy-postgres', wps(results.on), wps(results.off), 'workflows/s', null, {
          note: `${EVERY_CORE} worker processes × ${BUSY_PER_PROCESS} workflows in flight, groupCommit on vs off (same processes and statements otherwise), ${ROUNDS}×${PER_ROUND} workflows each, alternating rounds`,
          details: {
            on: results.on,
            off: results.off,
            // Group commit's writes/s against the raw limit (one UPDATE per write) from as many clients.
            onWritesPerSec: results.on.map((x) => x.writesPerSec),
            rawLimitWritesPerSec: results.limit,
            limitRatios: results.on.map((x, i) => x.writesPerSec / results.limit[i]!),
          },
        }),
      ];
    } finally {
      await Promise.all([on.stop(), off.stop()]);
    }
  },
};

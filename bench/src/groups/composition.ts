import pg from 'pg';
import { backends, pgDatabaseUrl } from '../backends.js';
import { type Fleet, type FleetRun, type RunOptions, startFleet } from '../fleet/fleet.js';
import { MAP_CONCURRENCY, MAP_ITEMS, TREE_CHILDREN } from '../fleet/trees.js';
import { median } from '../measure.js';
import { costRow, type Group, type Row, rateRow } from '../row.js';
import { E2E_PROCESSES, PER_PROCESS } from './e2e.js';

// Composition on PostgreSQL, driven as e2e-postgres drives work: the same worker processes
// (createWorker, one pg pool each, half the cores) with the same number of workflows in flight,
// each round timed from the first command to the last reply. Every contender of a group runs in
// the same fleet, one after the other in each round, the order reversed every other round.
//
// map-postgres: one workflow whose map step runs a no-op handler over 10,000 items (the array of
// their indexes, in its input), 50 in flight, results discarded; items/s against one-task
// workflows/s (start, one no-op task, end: the smallest unit of work a worker takes). Each item
// costs its parent one write (the result, which dispatches the next item), so the row weighs a
// write of the parent, which carries the items, against a one-task workflow's two small writes.
// Snapshot bytes are measured in an untimed pass (a JSON.stringify per write).
//
// child-postgres: workflows with ten `child` steps in a row, each starting a one-task workflow and
// waiting for its end, against one-task workflows started directly; child-postgres-map: the same
// ten children from one map step, all at once. The children's ends reach their parent through its
// inbox, applied by a worker, as in any deployment with workers.

const TABLE = 'composition';
/** Bytes a map's parent snapshot should stay under (the row's budget). */
const PARENT_BUDGET = 64 * 1024;
const ROUNDS = 3;
/** One-task workflows per timed round (about as long as e2e-postgres's rounds). */
const ONE_TASK_ROUND = 2000;
/** Tree parents per timed round: 1,000 children. */
const TREES_ROUND = 100;
/** Untimed one-task work before each of its timed rounds (whatever runs first after a pause costs more). */
const WARM_UP_MS = 1000;

const pgUrl = (url: string) => pgDatabaseUrl(url, 'stepfold_bench');

async function truncate(url: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: pgUrl(url), max: 1 });
  try {
    await pool.query(`TRUNCATE "stepfold"."${TABLE}", "stepfold"."${TABLE}$sent"`);
  } finally {
    await pool.end();
  }
}

/** A fleet of the e2e-postgres shape with the composition workflows, warmed up and on an empty table. */
async function compositionFleet(url: string): Promise<Fleet> {
  const fleet = await startFleet({
    pgUrl: pgUrl(url),
    processes: E2E_PROCESSES,
    concurrency: PER_PROCESS,
    table: TABLE,
    composition: true,
    // The map's maxConcurrency: its 50 items may all run. The one-task rounds still keep
    // PER_PROCESS workflows in flight, so the baseline is the e2e row's.
    slots: MAP_CONCURRENCY,
  });
  try {
    await truncate(url);
    const tag = Date.now().toString(36);
    for (let w = 0; w < 3; w++) await fleet.run(400, `warm-${w}-${tag}`, { workflow: 'bench-one' });
  } catch (e) {
    await fleet.stop();
    throw e;
  }
  return fleet;
}

/** Runs `run` until {@link WARM_UP_MS} have passed. */
async function warmUp(run: (k: number) => Promise<unknown>): Promise<void> {
  const t0 = performance.now();
  for (let k = 0; performance.now() - t0 < WARM_UP_MS; k++) await run(k);
}

/** Contenders measured alternately: each round runs them all, the order reversed every other round. */
async function alternate(
  contenders: Record<string, (tag: string) => Promise<FleetRun>>,
  group: string,
): Promise<Record<string, FleetRun[]>> {
  const names = Object.keys(contenders);
  const out: Record<string, FleetRun[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < ROUNDS; r++) {
    const tag = `${r}-${Date.now().toString(36)}`;
    for (const name of r % 2 === 0 ? names : [...names].reverse())
      out[name]!.push(await contenders[name]!(`${name}-${tag}`));
    process.stderr.write(`  ${group}: round ${r + 1}/${ROUNDS} done\n`);
  }
  return out;
}

/** One-task workflows started directly: the baseline of both groups. */
const oneTask = (fleet: Fleet, count: number) => async (tag: string) => {
  await warmUp((k) => fleet.run(200, `${tag}-warm-${k}`, { workflow: 'bench-one' }));
  return fleet.run(count, tag, { workflow: 'bench-one' });
};

const perSec = (runs: FleetRun[], per: number) => median(runs.map((r) => r.workflowsPerSec * per));

/** Why a group could not run, as rows with no figures. */
async function unavailable(names: Array<[string, string, number | null]>): Promise<Row[] | string> {
  const b = backends.find((x) => x.name === 'postgres');
  const down = b ? await b.unavailable() : 'no postgres store adapter in this checkout';
  if (!b || down)
    return names.map(([n, unit, goal]) => ({
      ...rateRow(n, null, null, unit, goal),
      note: `not measured: ${down}`,
    }));
  return b.url;
}

const setup = `${E2E_PROCESSES} worker process${E2E_PROCESSES === 1 ? '' : 'es'} × ${PER_PROCESS} in flight (createWorker with ${MAP_CONCURRENCY} handler slots, one pg pool each), as e2e-postgres`;

/** map-postgres: a 10,000-item map's items/s against one-task workflows/s, and its parent's size. */
export const mapPostgres: Group = {
  name: 'map-postgres',
  async run(): Promise<Row[]> {
    const url = await unavailable([
      ['map-postgres', 'items/s', 0.5],
      ['map-postgres-bytes', 'bytes', 1],
      ['map-postgres-collect', 'items/s', null],
      ['map-postgres-collect-bytes', 'bytes', null],
    ]);
    if (typeof url !== 'string') return url;
    const fleet = await compositionFleet(url);
    try {
      const map =
        (workflow: string, extra: RunOptions = {}) =>
        (tag: string) =>
          fleet.run(1, tag, { workflow, items: MAP_ITEMS, ...extra });
      // Untimed, also the maps' warm-up: the largest snapshot each parent writes.
      const bytes = {
        discard: (await map('bench-map', { bytes: true })('bytes-d')).maxBytes!,
        collect: (await map('bench-map-collect', { bytes: true })('bytes-c')).maxBytes!,
      };
      const runs = await alternate(
        {
          map: map('bench-map'),
          oneTask: oneTask(fleet, ONE_TASK_ROUND),
          collect: map('bench-map-collect'),
        },
        'map-postgres',
      );
      const items = perSec(runs['map']!, MAP_ITEMS);
      const collect = perSec(runs['collect']!, MAP_ITEMS);
      const one = perSec(runs['oneTask']!, 1);
      const what = `one workflow, one map step over ${MAP_ITEMS.toLocaleString('en-US')} items (their indexes, in its input), maxConcurrency ${MAP_CONCURRENCY}, a no-op handler per item`;
      const writes = (rs: FleetRun[]) => rs.map((r) => r.writesPerSec);
      const cpu = (rs: FleetRun[]) => rs.map((r) => r.cpuUsPerWrite);
      return [
        rateRow('map-postgres', items, one, 'items/s', 0.5, {
          note: `${what}, results 'discard', vs one-task workflows/s (${ROUNDS}×${ONE_TASK_ROUND} per round); ${setup}; alternating rounds`,
          details: {
            map: runs['map'],
            oneTask: runs['oneTask'],
            mapWritesPerSec: writes(runs['map']!),
            oneTaskWritesPerSec: writes(runs['oneTask']!),
            mapCpuUsPerWrite: cpu(runs['map']!),
            oneTaskCpuUsPerWrite: cpu(runs['oneTask']!),
          },
        }),
        costRow('map-postgres-bytes', bytes.discard, PARENT_BUDGET, 'bytes', 1, {
          note: `the largest snapshot the map-postgres parent wrote (UTF-8 bytes of its JSON; the items alone are ${JSON.stringify(Array.from({ length: MAP_ITEMS }, (_, i) => i)).length.toLocaleString('en-US')}) vs a 64 KB budget (ratio = budget / ours)`,
        }),
        rateRow('map-postgres-collect', collect, items, 'items/s', null, {
          note: `the map-postgres workflow with results 'collect' (every item's null kept in the step's output) vs 'discard', same rounds`,
          details: { collect: runs['collect'], collectCpuUsPerWrite: cpu(runs['collect']!) },
        }),
        costRow('map-postgres-collect-bytes', bytes.collect, PARENT_BUDGET, 'bytes', null, {
          note: `the largest snapshot of the 'collect' parent vs the 64 KB budget (${bytes.discard.toLocaleString('en-US')} with 'discard')`,
        }),
      ];
    } finally {
      await fleet.stop();
      await truncate(url).catch(() => {});
    }
  },
};

/** child-postgres: children/s inside parents (ten child steps; a map of ten) against the same workflows started directly. */
export const childPostgres: Group = {
  name: 'child-postgres',
  async run(): Promise<Row[]> {
    const url = await unavailable([
      ['child-postgres', 'workflows/s', null],
      ['child-postgres-map', 'workflows/s', null],
    ]);
    if (typeof url !== 'string') return url;
    const fleet = await compositionFleet(url);
    try {
      const trees =
        (workflow: string, extra: RunOptions = {}) =>
        (tag: string) =>
          fleet.run(TREES_ROUND, tag, { workflow, ...extra });
      // Untimed: a few of each, so neither meets cold code in its first timed round.
      await trees('bench-tree')('warm-tree');
      await trees('bench-tree-map', { items: TREE_CHILDREN })('warm-tree-map');
      const runs = await alternate(
        {
          chain: trees('bench-tree'),
          direct: oneTask(fleet, TREES_ROUND * TREE_CHILDREN),
          map: trees('bench-tree-map', { items: TREE_CHILDREN }),
        },
        'child-postgres',
      );
      const direct = perSec(runs['direct']!, 1);
      const detail = (rs: FleetRun[]) => ({
        writesPerSec: rs.map((r) => r.writesPerSec),
        cpuUsPerWrite: rs.map((r) => r.cpuUsPerWrite),
      });
      return [
        rateRow('child-postgres', perSec(runs['chain']!, TREE_CHILDREN), direct, 'workflows/s', null, {
          note: `one-task workflows run as children of parents with ${TREE_CHILDREN} child steps in a row (children/s; ${ROUNDS}×${TREES_ROUND} parents) vs the same workflows started directly (${ROUNDS}×${TREES_ROUND * TREE_CHILDREN}); ${setup}: as many children in flight as direct workflows; alternating rounds`,
          details: { chain: runs['chain'], direct: runs['direct'], ...detail(runs['chain']!) },
        }),
        rateRow('child-postgres-map', perSec(runs['map']!, TREE_CHILDREN), direct, 'workflows/s', null, {
          note: `the same children from one map step of ${TREE_CHILDREN} child workflows per parent (all ten at once: ${TREE_CHILDREN}× the children in flight) vs the same direct rounds`,
          details: { map: runs['map'], ...detail(runs['map']!) },
        }),
      ];
    } finally {
      await fleet.stop();
      await truncate(url).catch(() => {});
    }
  },
};

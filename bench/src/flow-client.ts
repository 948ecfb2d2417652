// Where a flow-limited workflow's client time goes: the flow-concurrency-postgres fleet (its -every-task row) (one worker
// process per two cores, 4 workflows in flight each) on a table of its own, running the limited
// 10-step workflow, the plain one, or both in alternating rounds, and printing per workflow the
// worker's CPU, the statements its pool sent and its voluntary context switches (each an idle event
// loop woken by a socket or a timer). With `slow`, the plain rounds run against the same server made
// slower by a trigger that burns `burn` loop turns per saved row: the client's cost of a slower
// server alone. Profile one side with BENCH_CHILD_ARGV="--cpu-prof --cpu-prof-dir=DIR".
// Usage: node bench/dist/flow-client.js [both|all|limited|plain|slow] [rounds] [workflows per round] [burn]
// (both: limited and plain; all: with slow too; slow: plain and slow).

import pg from 'pg';
import { backends, pgDatabaseUrl } from './backends.js';
import { type FleetRun, startFleet } from './fleet/fleet.js';
import { E2E_PROCESSES, PER_PROCESS } from './groups/e2e.js';
import { median } from './measure.js';
import { FLOW_KEYS } from './workflows.js';

const [mode = 'both', roundsArg = '3', perRoundArg = '600', burnArg = '400'] = process.argv.slice(2);
const TABLE = 'flow_client';
const b = backends.find((x) => x.name === 'postgres')!;
const down = await b.unavailable();
if (down) throw new Error(down);
const url = pgDatabaseUrl(b.url, 'stepfold_bench');
const fleet = await startFleet({
  pgUrl: url,
  processes: E2E_PROCESSES,
  concurrency: PER_PROCESS,
  table: TABLE,
  flow: true,
});

const admin = new pg.Client({ connectionString: url });
await admin.connect();
const qualified = `"stepfold"."${TABLE}"`;
/** Turns the trigger that slows every saved row on or off. */
async function slow(on: boolean): Promise<void> {
  await admin.query(`DROP TRIGGER IF EXISTS bench_slow ON ${qualified}`);
  if (!on) return;
  await admin.query(`CREATE OR REPLACE FUNCTION stepfold.bench_slow() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE i int := 0; BEGIN WHILE i < ${Number(burnArg)} LOOP i := i + 1; END LOOP; RETURN NEW; END $$`);
  await admin.query(
    `CREATE TRIGGER bench_slow BEFORE UPDATE ON ${qualified} FOR EACH ROW EXECUTE FUNCTION stepfold.bench_slow()`,
  );
}

const runs = new Map<string, FleetRun[]>();
const kinds =
  mode === 'both'
    ? ['limited', 'plain']
    : mode === 'slow'
      ? ['plain', 'slow']
      : mode === 'all'
        ? ['limited', 'plain', 'slow']
        : [mode];
const one = async (which: string, n: number, tag: string) => {
  await slow(which === 'slow');
  const r =
    which === 'limited'
      ? await fleet.run(n, tag, { workflow: 'bench-linear-flow', keys: FLOW_KEYS })
      : await fleet.run(n, tag);
  if (which === 'slow') await slow(false);
  return r;
};
try {
  for (let w = 0; w < 2; w++)
    for (const k of kinds) await one(k, 300, `fc-warm-${k}-${w}-${Date.now().toString(36)}`);
  const rounds = Number(roundsArg);
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? kinds : [...kinds].reverse();
    for (const k of order) {
      const run = await one(k, Number(perRoundArg), `fc-${k}-${r}-${Date.now().toString(36)}`);
      runs.set(k, [...(runs.get(k) ?? []), run]);
    }
  }
} finally {
  await slow(false).catch(() => {});
  await admin.query('DROP FUNCTION IF EXISTS stepfold.bench_slow()').catch(() => {});
  await admin.end();
  await fleet.stop();
}
for (const [k, rs] of runs) {
  const m = (f: (r: FleetRun) => number) => median(rs.map(f));
  console.log(
    `${k.padEnd(8)} ${m((r) => r.workflowsPerSec).toFixed(0)} wf/s, ${m((r) => (r.seconds * 1000 * PER_PROCESS * E2E_PROCESSES) / (r.workflowsPerSec * r.seconds)).toFixed(2)} ms per workflow in flight, ` +
      `${m((r) => r.perWorkflow.cpuUs).toFixed(0)} µs CPU (${m((r) => r.perWorkflow.systemUs).toFixed(0)} sys), ${m((r) => r.perWorkflow.statements ?? Number.NaN).toFixed(2)} statements, ` +
      `${m((r) => r.perWorkflow.sleeps).toFixed(2)} sleeps, ${m((r) => r.perWorkflow.preempted).toFixed(2)} preempted per workflow (median of ${rs.length})`,
  );
}

import { type Backend, backends, serverNote } from '../backends.js';
import { type FleetRun, startFleet } from '../fleet/fleet.js';
import { median } from '../measure.js';
import { type Group, pairedRateRow, type Row, rateRow } from '../row.js';
import { pidListening, withServerCpu } from '../server-cpu.js';
import { E2E_PROCESSES, PER_PROCESS } from './e2e.js';

// e2e-redis, e2e-mongo, e2e-dynamo and their -limit rows: the e2e-postgres workload on the other
// stores, run as a user runs it in production — worker processes with createWorker (the same fleet
// as e2e-postgres: half the cores, 4 workflows in flight in all) — and the same writes by hand from
// the same processes and clients, each raw sample as long as one of our rounds and taken right
// after it, or right before it on alternate rounds.

/**
 * Per store: workflows per timed round (a round lasts ~1-3 s on this machine), the table (or key
 * prefix segment) of the bench's instances, and the requests the raw loop sends (child-stores.ts).
 */
const SIZES: Record<string, { perRound: number; warmRounds: number; table: string; requests: string }> = {
  redis: {
    perRound: 2000,
    // A fresh process's first workflows cost twice the CPU of the ones after: run until optimized.
    warmRounds: 3,
    table: 'e2e',
    requests:
      "EVALSHA of the adapter's create script, then of its save script, keys and arguments built by hand",
  },
  mongo: {
    perRound: 150,
    // The server is the busy side: one round warms its caches and our connections.
    warmRounds: 1,
    table: 'e2e_workers',
    requests:
      "insertOne of the adapter's document, then updateOne({_id, version: expected}, {$set: its fields, $unset: the claim's})",
  },
  dynamo: {
    perRound: 150,
    warmRounds: 1,
    table: 'stepfold_e2e',
    requests:
      "PutItem of the adapter's item if attribute_not_exists(id), then UpdateItem(SET its attributes REMOVE the claim's, if #version = :expected)",
  },
};

const ROUNDS = 3;
/** Goal of each -limit row: our writes/s at least this share of the same requests by hand. */
const LIMIT_GOAL = 0.7;
// Untimed work before each timed round (see e2e.ts: the first work after a pause costs more CPU).
const WARM_UP_MS = 1_000;

/** The port of a store's URL or endpoint, for finding its server process. */
function portOf(url: string): number {
  const u = new URL(url);
  return Number(u.port || (u.protocol === 'redis:' ? 6379 : u.protocol === 'mongodb:' ? 27017 : 80));
}

function storeGroup(b: Backend): Group {
  const name = `e2e-${b.name}`;
  const size = SIZES[b.name]!;
  return {
    name,
    async run(): Promise<Row[]> {
      const down = await b.unavailable();
      const missing = (note: string): Row[] => [
        { ...rateRow(name, null, null, 'workflows/s', null), note },
        { ...rateRow(`${name}-limit`, null, null, 'writes/s', LIMIT_GOAL), note },
      ];
      if (down) return missing(`not measured: ${down}`);
      const kind = b.name as 'redis' | 'mongo' | 'dynamo';
      const fleet = await startFleet({
        store: { kind, url: b.url },
        processes: E2E_PROCESSES,
        concurrency: PER_PROCESS,
        table: size.table,
      });
      const server = pidListening(portOf(b.url));
      const ours: FleetRun[] = [];
      const limit: number[] = [];
      const rawCpu: number[] = [];
      const serverOurs: Array<number | null> = [];
      const serverRaw: Array<number | null> = [];
      // The layers between: the same writes through the adapter, and through the reducer and the adapter.
      const layers: Record<'adapter' | 'reducer', Array<{ perSec: number; cpuUsPerWrite: number }>> = {
        adapter: [],
        reducer: [],
      };
      try {
        const warm = Math.max(8, Math.round(size.perRound / 5));
        for (let w = 0; w < size.warmRounds; w++)
          await fleet.run(size.perRound, `warm-${w}-${Date.now().toString(36)}`);
        for (let r = 0; r < ROUNDS; r++) {
          const tag = `${name}-${r}-${Date.now().toString(36)}`;
          const t0 = performance.now();
          for (let k = 0; performance.now() - t0 < WARM_UP_MS; k++) await fleet.run(warm, `${tag}-warm-${k}`);
          const oursRound = async () => {
            const [o, cpu] = await withServerCpu(server, () => fleet.run(size.perRound, tag));
            ours.push(o);
            serverOurs.push(cpu);
            return o.seconds;
          };
          const rawSample = async (seconds: number) => {
            const [raw, cpu] = await withServerCpu(server, () => fleet.raw(Math.max(1000, seconds * 1000)));
            limit.push(raw.perSec);
            rawCpu.push(raw.cpuUsPerWrite);
            serverRaw.push(cpu);
          };
          // Alternated: ours then the raw sample, then the reverse (as long as our last round), so
          // neither side always meets the server after the other (a growing table, a busy machine).
          if (r % 2 === 0) await rawSample(await oursRound());
          else {
            await rawSample(ours[ours.length - 1]!.seconds);
            await oursRound();
          }
          const seconds = Math.max(1000, ours[ours.length - 1]!.seconds * 1000);
          for (const through of ['adapter', 'reducer'] as const)
            layers[through].push(await fleet.raw(seconds, undefined, through));
          process.stderr.write(`  ${name}: round ${r + 1}/${ROUNDS} done\n`);
        }
      } finally {
        await fleet.stop();
      }
      const setup = `${E2E_PROCESSES} worker process${E2E_PROCESSES === 1 ? '' : 'es'} × ${PER_PROCESS} workflows in flight (createWorker, one client each)`;
      return [
        rateRow(name, median(ours.map((o) => o.workflowsPerSec)), null, 'workflows/s', null, {
          note: `${serverNote(b)}: ${setup}, ${ROUNDS}×${size.perRound} 10-step no-op workflows; no baseline (the -limit row compares the writes)`,
          details: { ours },
        }),
        pairedRateRow(
          `${name}-limit`,
          ours.map((o) => o.writesPerSec),
          limit,
          'writes/s',
          LIMIT_GOAL,
          {
            note: `${b.testServer ? `${b.testServer}: ` : ''}our conditional writes/s during ${name} (11 per workflow) vs the same requests by hand (per workflow the adapter's create and ten conditional saves with the reducer's snapshots: ${size.requests}) from the same processes and clients, each sample as long as one of our rounds and taken right after it or (alternately) right before; the ratio is the median of those pairs' ratios (ours and the raw figures are the medians)`,
            details: {
              ourWritesPerSec: ours.map((o) => o.writesPerSec),
              rawSamples: limit,
              // Where the time goes: client CPU µs per write of ours and the raw loop's, and the
              // server process's CPU (cores busy on average) during each.
              ourCpuUsPerWrite: ours.map((o) => o.cpuUsPerWrite),
              rawCpuUsPerWrite: rawCpu,
              serverCoresOurs: serverOurs,
              serverCoresRaw: serverRaw,
              conflicts: ours.map((o) => o.conflicts),
              // Writes/s and client CPU µs per write without the runner: the adapter's create and
              // save of the reducer's snapshots made beforehand, and with each event reduced first.
              adapterWritesPerSec: layers.adapter.map((l) => l.perSec),
              adapterCpuUsPerWrite: layers.adapter.map((l) => l.cpuUsPerWrite),
              reducerAdapterWritesPerSec: layers.reducer.map((l) => l.perSec),
              reducerAdapterCpuUsPerWrite: layers.reducer.map((l) => l.cpuUsPerWrite),
            },
          },
        ),
      ];
    },
  };
}

/** e2e rows for every backend but postgres, which has its own group with the peers. */
export const e2eGroups: Group[] = backends.filter((b) => b.name !== 'postgres').map(storeGroup);

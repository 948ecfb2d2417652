// `pnpm bench [group-or-row...]`: runs the selected groups (all by default), prints the table
// and merges the rows into bench/results.json (rows not run this time are kept, with their date).

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { agentTurnPostgres } from './groups/agent-turn.js';
import { aslReducer } from './groups/asl-reducer.js';
import { bundle } from './groups/bundle.js';
import { codecOverhead } from './groups/codec.js';
import { coldStartLambda } from './groups/cold-start-lambda.js';
import { childPostgres, mapPostgres } from './groups/composition.js';
import { dryRunPostgres } from './groups/dry-run.js';
import { e2ePostgres, e2ePostgresBusy } from './groups/e2e.js';
import { e2eGroups } from './groups/e2e-stores.js';
import { flatCost } from './groups/flat-cost.js';
import { flowGroups } from './groups/flow.js';
import { reducer } from './groups/reducer.js';
import { requestsDynamo } from './groups/requests-dynamo.js';
import { runnerMemory } from './groups/runner-memory.js';
import { scalePostgres } from './groups/scale.js';
import { scaleRedis } from './groups/scale-redis.js';
import { searchPostgres } from './groups/search.js';
import { searchMongo } from './groups/search-mongo.js';
import { searchRedis } from './groups/search-redis.js';
import { storeGroups } from './groups/stores.js';
import { streamGroups } from './groups/stream.js';
import { types } from './groups/types.js';
import { idleQueries, wakeLatency } from './groups/wake-latency.js';
import { wakeLatencyDynamo } from './groups/wake-latency-dynamo.js';
import type { Group, Row } from './row.js';

const GROUPS: Group[] = [
  reducer,
  aslReducer,
  runnerMemory,
  flatCost,
  bundle,
  types,
  ...storeGroups,
  scalePostgres,
  scaleRedis,
  searchPostgres,
  searchRedis,
  searchMongo,
  e2ePostgres,
  e2ePostgresBusy,
  codecOverhead,
  mapPostgres,
  childPostgres,
  dryRunPostgres,
  wakeLatency,
  wakeLatencyDynamo,
  idleQueries,
  ...streamGroups,
  agentTurnPostgres,
  ...e2eGroups,
  ...flowGroups,
  requestsDynamo,
  coldStartLambda,
];

const RESULTS = fileURLToPath(new URL('../results.json', import.meta.url));
const README = fileURLToPath(new URL('../README.md', import.meta.url));

interface Results {
  machine: {
    cores: number;
    cpu: string;
    node: string;
    platform: string;
    memoryGB: number;
    /** 1-minute load average when the run began: other work on the machine skews timings. */
    loadAverage: number;
  };
  date: string;
  rows: Row[];
}

function machine(): Results['machine'] {
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    memoryGB: Math.round(totalmem() / 2 ** 30),
    loadAverage: Math.round(loadavg()[0]! * 100) / 100,
  };
}

/** The group a row belongs to: the longest group name it starts with (`wake-latency-dynamo-p50` is not `wake-latency`'s). */
function groupOf(row: string): number {
  let best = -1;
  GROUPS.forEach((g, i) => {
    if (
      (row === g.name || row.startsWith(`${g.name}-`)) &&
      (best < 0 || g.name.length > GROUPS[best]!.name.length)
    )
      best = i;
  });
  return best;
}

/** A group runs when an argument names it, a row of it (`e2e-postgres-limit`), or a prefix (`store`). */
function selected(args: string[]): Group[] {
  if (args.length === 0) return GROUPS;
  const picks = (g: Group, a: string) => g.name.startsWith(a) || GROUPS[groupOf(a)] === g;
  const out = GROUPS.filter((g) => args.some((a) => picks(g, a)));
  const unknown = args.filter((a) => !GROUPS.some((g) => picks(g, a)));
  if (unknown.length) {
    console.error(`unknown row ${unknown.join(', ')}; rows: ${GROUPS.map((g) => g.name).join(', ')}`);
    process.exit(2);
  }
  return out;
}

function fmt(v: number | null, digits = 3): string {
  if (v === null) return '—';
  if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString('en-US');
  return Number(v.toPrecision(digits)).toString();
}

export function table(rows: Row[]): string {
  const head = ['row', 'ours', 'baseline', 'unit', 'ratio', 'goal', 'met'];
  const body = rows.map((r) => [
    r.name,
    fmt(r.ours),
    fmt(r.baseline),
    r.unit,
    r.ratio === null ? '—' : `${fmt(r.ratio)}×`,
    r.goal === null ? '—' : `≥ ${r.goal}`,
    r.met === null ? '—' : r.met ? 'yes' : 'NO',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

async function main(): Promise<void> {
  const groups = selected(process.argv.slice(2));
  const m = machine();
  console.log(`stepfold bench · ${m.cpu} · ${m.cores} cores · Node ${m.node} · load ${m.loadAverage}`);
  const fresh: Row[] = [];
  const t0 = performance.now();
  for (const g of groups) {
    const start = performance.now();
    process.stdout.write(`${g.name} … `);
    let rows: Row[];
    try {
      rows = await g.run();
    } catch (e) {
      rows = [
        {
          name: g.name,
          ours: null,
          baseline: null,
          unit: '',
          ratio: null,
          goal: null,
          met: null,
          note: `failed: ${e instanceof Error ? e.message : String(e)}`,
        },
      ];
      console.error(e);
    }
    const seconds = Math.round((performance.now() - start) / 100) / 10;
    const at = new Date().toISOString();
    for (const r of rows) fresh.push({ ...r, seconds, at });
    console.log(`${seconds} s`);
  }
  console.log(`\n${table(fresh)}\n`);
  for (const r of fresh) if (r.note) console.log(`${r.name}: ${r.note}`);
  console.log(`\ntotal ${Math.round((performance.now() - t0) / 1000)} s`);

  // Merge: rows of this run replace rows of the same name; the rest stay, in GROUPS order.
  const old: Results | null = existsSync(RESULTS)
    ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as Results)
    : null;
  const byName = new Map<string, Row>();
  for (const r of old?.rows ?? []) byName.set(r.name, r);
  for (const r of fresh) byName.set(r.name, r);
  const order = (name: string) => {
    const i = groupOf(name);
    return i < 0 ? GROUPS.length : i;
  };
  const rows = [...byName.values()].sort((a, b) => order(a.name) - order(b.name));
  const results: Results = { machine: m, date: new Date().toISOString(), rows };
  writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`wrote ${RESULTS}`);
  updateReadme(results);
}

/** Rewrites the table between the results markers of bench/README.md (if the markers are there). */
function updateReadme(r: Results): void {
  if (!existsSync(README)) return;
  const text = readFileSync(README, 'utf8');
  const start = '<!-- results:start -->';
  const end = '<!-- results:end -->';
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0 || b < a) return;
  const m = r.machine;
  const dates = r.rows.map((x) => x.at?.slice(0, 10)).filter((d): d is string => !!d);
  const span = dates.length ? [...new Set([dates.sort()[0], dates[dates.length - 1]])].join(' … ') : '';
  const block = [
    start,
    `${m.cpu}, ${m.cores} cores, Node ${m.node}, ${span} (generated from results.json by \`pnpm bench\`)`,
    '',
    table(r.rows),
    '',
    end,
  ].join('\n');
  writeFileSync(README, text.slice(0, a) + block + text.slice(b + end.length));
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);

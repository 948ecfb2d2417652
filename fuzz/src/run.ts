import { parseArgs } from 'node:util';
import { type AnyTarget, type RunOptions, runTarget, type TargetReport } from './driver.js';
import { TARGETS } from './targets/index.js';

// `pnpm fuzz [--runs N] [--target a,b] [--seed N] [--path P] [--plant NAME]`: every target (or
// those named) for its share of at least 100 000 inputs; one line per target, a reproducing
// command per failure; exit 1 on any finding.

const { values } = parseArgs({
  options: {
    runs: { type: 'string' },
    target: { type: 'string' },
    seed: { type: 'string' },
    path: { type: 'string' },
    plant: { type: 'string' },
    help: { type: 'boolean' },
  },
});

if (values.help) {
  console.log(
    `pnpm fuzz [--runs N] [--target ${TARGETS.map((t) => t.name).join(',')}] [--seed N] [--path P] [--plant NAME]`,
  );
  process.exit(0);
}

const names = values.target?.split(',').filter(Boolean);
const chosen: AnyTarget[] = names
  ? names.map((n) => {
      const t = TARGETS.find((x) => x.name === n);
      if (!t) throw new Error(`no target ${n}; targets: ${TARGETS.map((x) => x.name).join(', ')}`);
      return t;
    })
  : [...TARGETS];

if (values.plant) {
  const { plant } = await import('./plants.js');
  console.log(`planted: ${plant(values.plant)}`);
}

const seed = values.seed === undefined ? undefined : Number(values.seed);
const reports: TargetReport[] = [];
const started = performance.now();
for (const target of chosen) {
  const options: RunOptions = {
    runs: values.runs === undefined ? undefined : Number(values.runs),
    seed,
    path: values.path,
  };
  const r = await runTarget(target, options);
  reports.push(r);
  const rate = Math.round(r.runs / (r.ms / 1000));
  console.log(
    `${target.name.padEnd(18)} ${String(r.runs).padStart(7)} inputs ${(r.ms / 1000).toFixed(1).padStart(7)} s ${String(rate).padStart(7)}/s  ${r.failure ? 'FAILED' : 'ok'}`,
  );
  if (r.failure) {
    console.log(`  ${r.failure.message}`);
    console.log(`  input: ${r.failure.input}`);
    // Replaying one input: where it broke, too.
    if (values.path) console.log(r.failure.stack.split('\n').slice(0, 16).join('\n'));
    console.log(`  seed=${r.seed} path=${r.failure.path}`);
    console.log(`  reproduce: pnpm fuzz --target ${target.name} --seed ${r.seed} --path ${r.failure.path}`);
  }
}
const total = reports.reduce((n, r) => n + r.runs, 0);
const failed = reports.filter((r) => r.failure);
console.log(
  `${total} inputs in ${((performance.now() - started) / 1000).toFixed(1)} s, ${failed.length} finding${failed.length === 1 ? '' : 's'}`,
);
process.exit(failed.length ? 1 : 0);

// @ts-check
// `pnpm soak`: scenario 17 on every store, 1,000 workflows each, worker processes SIGKILLed every
// 1-3 s and (except on DynamoDB Local, which keeps nothing across a restart) the store's server
// stopped and started once mid-run. Each store has a time budget and fails rather than hangs.
// Prints progress, then one summary line per store; exits 1 on any violation.
//
//   node packages/node/test/soak/run.mjs [--stores postgres,redis,mongo,dynamo] [--instances 1000]
//                                        [--budget-s <per store>] [--no-restart] [--processes 3]
// STEPFOLD_SOAK_PG_GROUP_COMMIT=1 in the environment turns on the PostgreSQL store's groupCommit.
import { parseArgs } from 'node:util';
import { runSoak } from './driver.mjs';
import { KINDS, RESTARTABLE } from './stores.mjs';

// Seconds each store may take for 1,000 workflows before the run fails: FerretDB (one command at a
// time, every due query a collection scan) and DynamoDB Local (Java, several Queries per poll) are
// several times slower than PostgreSQL and Redis on a two-core machine.
const BUDGET_S = { postgres: 360, redis: 360, mongo: 1800, dynamo: 600 };

// Milliseconds between SIGKILLs (chosen at random in the range). FerretDB finishes about two
// instances a second at best, so it gets a kill every 5-10 s instead of every 1-3 s: at the faster
// pace it would lose a worker for every instance it finished and spend the run recovering.
/** @type {Record<import('./stores.mjs').StoreKind, [number, number]>} */
const KILL_EVERY_MS = {
  postgres: [1000, 3000],
  redis: [1000, 3000],
  mongo: [5000, 10000],
  dynamo: [1000, 3000],
};

// The AWS SDK warns once per process on Node 20 about its future Node 22 floor: noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const { values } = parseArgs({
  options: {
    stores: { type: 'string', default: KINDS.join(',') },
    instances: { type: 'string', default: '1000' },
    'budget-s': { type: 'string' },
    processes: { type: 'string', default: '3' },
    'no-restart': { type: 'boolean', default: false },
  },
});
const kinds = values.stores.split(',').map((k) => {
  const kind = KINDS.find((x) => x === k.trim());
  if (!kind) throw new Error(`unknown store "${k}" (expected ${KINDS.join(', ')})`);
  return kind;
});

/** @type {string[]} */
const summaries = [];
let failed = false;
for (const kind of kinds) {
  const restart = !values['no-restart'] && RESTARTABLE[kind] !== undefined;
  console.log(
    `[${kind}] ${values.instances} workflows, kills every ${KILL_EVERY_MS[kind][0] / 1000}-${KILL_EVERY_MS[kind][1] / 1000} s${restart ? ', one server restart' : ''}`,
  );
  try {
    const r = await runSoak({
      kind,
      instances: Number(values.instances),
      budgetMs: Number(values['budget-s'] ?? BUDGET_S[kind]) * 1000,
      killEveryMs: KILL_EVERY_MS[kind],
      processes: Number(values.processes),
      restart,
      progress: (line) => console.log(line),
    });
    for (const v of r.violations.slice(0, 50)) console.log(`[${kind}] VIOLATION ${v}`);
    if (r.violations.length > 50) console.log(`[${kind}] … ${r.violations.length - 50} more violations`);
    for (const c of r.crashes) console.log(`[${kind}] unplanned exit: ${c}`);
    console.log(r.summary);
    summaries.push(r.summary);
    failed ||= !r.ok;
  } catch (e) {
    console.error(`[${kind}] the soak run failed:`, e);
    summaries.push(`store=${kind} error=${e instanceof Error ? e.message : String(e)}`);
    failed = true;
  }
}
console.log('\nsoak summary:');
for (const s of summaries) console.log(s);
process.exit(failed ? 1 : 0);

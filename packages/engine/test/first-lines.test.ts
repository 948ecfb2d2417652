import { describe, expect, it } from 'vitest';
import { firstLines } from './first-lines.js';

// Where the compiler catches a mistake, the first line of its error names the mistake, not a dump
// of the types around it: each program below makes one mistake, compiled as a user's editor does.

const head = `import { composition, createMemoryStore, createRunner, createWorker, workflow } from '@stepfold/engine';
import { defineMigration, migrate } from '@stepfold/engine/migrations';
import { createSchedules } from '@stepfold/engine/schedules';
import * as z from 'zod/mini';
const store = createMemoryStore();
const handlers = { go: async () => 1 };
const pay = workflow('payment', 1).task('go', { handler: 'go' }).build();
const order = workflow('order', 1)
  .input(z.object({ sku: z.string() }))
  .signal('shipped', z.object({ tracking: z.string() }))
  .wait('ship', { signal: 'shipped' })
  .build();
const report = workflow('report', 1).input(z.object({ team: z.string() })).task('t', { handler: 'go' }).build();
const schedules = createSchedules({ store, workflows: [report] });
`;

const programs = {
  unregisteredChild: `const parent = workflow('parent', 1).child('sub', { workflow: pay }).build();
createRunner({ store, workflows: [parent], kinds: [composition], handlers });`,
  lastOutput: `workflow('w', 1).output(z.object({ a: z.string() })).task('t', { handler: 'go' }).build();`,
  cronAndEvery: `void schedules.create({ id: 'n', workflow: report, cron: '0 2 * * *', everyMs: 60_000, input: { team: 'a' } });`,
  scheduleInput: `void schedules.create({ id: 'n', workflow: report, cron: '0 2 * * *' });`,
  noTiming: `void schedules.create({ id: 'n', workflow: report, input: { team: 'a' } });`,
  migrateTarget: `const report2 = workflow('report', 2).input(z.object({ team: z.string() })).task('t', { handler: 'go' }).task('u', { handler: 'go' }).build();
void migrate(createRunner({ store, workflows: [report], handlers }), defineMigration({ from: report, to: report2 }), 'r-1');`,
  unknownSignal: `void createRunner({ store, workflows: [order], handlers }).signal('o-1', 'shiped', { tracking: 'T' });`,
  startInput: `void createRunner({ store, workflows: [order], handlers }).start('order', 'o-1', { sku: 1 });`,
  workerCaps: `createWorker({ runner: createRunner({ store, workflows: [order, report], handlers }), workflowConcurrency: { reprot: 2 } });`,
  pinnedVersion: `const parent = workflow('parent', 1).child('sub', { workflow: pay, version: 2 }).build();
createRunner({ store, workflows: [parent, pay], kinds: [composition], handlers });`,
  unknownSend: `void createRunner({ store, workflows: [order], handlers }).send('o-1', 'shiped', { tracking: 'T' });`,
  sendData: `void createRunner({ store, workflows: [order], handlers }).send('o-1', 'shipped', { tracking: 1 });`,
  signalData: `void createRunner({ store, workflows: [order], handlers }).signal('o-1', 'shipped', { tracking: 1 });`,
  migrationDown: `const report2 = workflow('report', 2).input(z.object({ team: z.string() })).task('t', { handler: 'go' }).task('u', { handler: 'go' }).build();
defineMigration({ from: report2, to: report });`,
  migrationOther: `defineMigration({ from: pay, to: workflow('order', 2).task('go', { handler: 'go' }).build() });`,
  flowKey: `workflow('f', 1).input(z.object({ customer: z.string() })).task('t', { handler: 'go', concurrency: { key: 'input.custmer', limit: 1 } });`,
  flowKeyObject: `workflow('f', 1).input(z.object({ customer: z.object({ id: z.string() }) })).task('t', { handler: 'go', concurrency: { key: 'input.customer', limit: 1 } });`,
  flowLimit: `workflow('f', 1).task('t', { handler: 'go', concurrency: { limit: 0 } });`,
  flowPeriod: `workflow('f', 1).task('t', { handler: 'go', rateLimit: { limit: 5, periodMs: 1.5 } });`,
};

describe('first lines of compile errors', () => {
  const lines = firstLines(Object.fromEntries(Object.entries(programs).map(([k, v]) => [k, head + v])));

  it.each([
    [
      'an unregistered child workflow',
      'unregisteredChild',
      /^Type 'MemoryStore' is not assignable to type 'Store & "payment: a child or map step starts it, so register it in workflows too"'/,
    ],
    [
      "a last step's output that does not match .output()",
      'lastOutput',
      /the last step's output does not match the declared \.output\(\)/,
    ],
    [
      'cron and everyMs together',
      'cronAndEvery',
      /^Type '"n"' is not assignable to type '"cron and everyMs together: give exactly one of them"'/,
    ],
    [
      'a missing schedule input',
      'scheduleInput',
      /^Type '"n"' is not assignable to type '"the workflow declares an input: give the input each run starts with"'/,
    ],
    [
      'a schedule with neither cron nor everyMs',
      'noTiming',
      /^Type '"n"' is not assignable to type '"give cron or everyMs: when the schedule fires"'/,
    ],
    [
      'migrate with a runner that lacks the target',
      'migrateTarget',
      /^Argument of type '"r-1"' is not assignable to parameter of type '"the runner does not register the migration's target: add it to the runner's workflows"'/,
    ],
    [
      'a signal no workflow declares',
      'unknownSignal',
      /^Argument of type '"shiped"' is not assignable to parameter of type '"shipped"'/,
    ],
    ['a start input of the wrong type', 'startInput', /^Type 'number' is not assignable to type 'string'/],
    ['a worker cap for a workflow the runner lacks', 'workerCaps', /'reprot' does not exist/],
    [
      'a child pinned to a version the runner lacks',
      'pinnedVersion',
      /^Type 'MemoryStore' is not assignable to type 'Store & "payment v2: a child or map step pins this version, so register it in workflows too"'/,
    ],
    [
      'a sent signal no workflow declares',
      'unknownSend',
      /^Argument of type '"shiped"' is not assignable to parameter of type '"shipped"'/,
    ],
    [
      "a sent signal's data of the wrong type",
      'sendData',
      /^Type 'number' is not assignable to type 'string'/,
    ],
    ["a signal's data of the wrong type", 'signalData', /^Type 'number' is not assignable to type 'string'/],
    [
      "a migration whose to.version is not above from's",
      'migrationDown',
      /to's version is not above from's: a migration moves instances to a newer version/,
    ],
    [
      'a migration between two workflows',
      'migrationOther',
      /from and to are different workflows: a migration moves instances between versions of one/,
    ],
    [
      'a flow key path with a typo',
      'flowKey',
      /^Type '"input\.custmer"' is not assignable to type '"input\.customer"/,
    ],
    [
      'a flow key path to an object',
      'flowKeyObject',
      /^Type '"input\.customer"' is not assignable to type '"input\.customer\.id"/,
    ],
    [
      'a limit of 0',
      'flowLimit',
      /^Type 'number' is not assignable to type '"limit must be a positive integer"'/,
    ],
    [
      'a fractional window',
      'flowPeriod',
      /^Type 'number' is not assignable to type '"periodMs must be a positive integer"'/,
    ],
  ])('%s', (_, name, pattern) => {
    expect(lines[name]?.[0]).toMatch(pattern);
    expect(lines[name]).toHaveLength(1);
  });
}, 180_000);

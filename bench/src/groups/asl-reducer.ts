import { aslHandlers, fromAsl } from '@stepfold/asl';
import {
  type AnyDefinition,
  createHarness,
  defineWorkflow,
  type Handler,
  type Snapshot,
  step,
  type WorkflowEvent,
} from '@stepfold/engine';
import { compareSync } from '../measure.js';
import { type Group, rateRow } from '../row.js';

// The reducer on an imported Step Functions state machine against the same workflow written
// natively: a validation, a Choice on the amount, a review for big orders, a charge and a notice.
// Each contender's events are recorded once from a harness run with its own handlers (the ASL
// handler for the import), then folded with `step()` from `null` to `completed` per instance.

const FN = 'arn:aws:lambda:eu-west-1:111111111111:function:';

const MACHINE = {
  StartAt: 'Validate',
  States: {
    Validate: { Type: 'Task', Resource: `${FN}validate`, ResultPath: '$.valid', Next: 'Route' },
    Route: {
      Type: 'Choice',
      Choices: [{ Variable: '$.amount', NumericGreaterThan: 100, Next: 'Review' }],
      Default: 'Charge',
    },
    Review: { Type: 'Task', Resource: `${FN}review`, ResultPath: '$.review', Next: 'Charge' },
    Charge: { Type: 'Task', Resource: `${FN}charge`, ResultPath: '$.payment', Next: 'Notify' },
    Notify: { Type: 'Task', Resource: `${FN}notify`, ResultPath: '$.notice', End: true },
  },
};

const NATIVE = defineWorkflow({
  name: 'native-order',
  version: 1,
  start: 'validate',
  steps: {
    validate: { kind: 'task', handler: 'validate', next: 'route' },
    route: {
      kind: 'choice',
      branches: [{ when: { '>': [{ var: 'input.amount' }, 100] }, next: 'review' }],
      otherwise: 'charge',
    },
    review: { kind: 'task', handler: 'review', next: 'charge' },
    charge: { kind: 'task', handler: 'charge', next: 'notify' },
    notify: { kind: 'task', handler: 'notify' },
  },
});

const INPUT = { order: 'o-1', amount: 250 };
const functions = {
  validate: () => true,
  review: () => 'ok',
  charge: () => ({ receipt: 'R-1' }),
  notify: () => 'sent',
};

/** The events of one run in the harness, to fold again and again. */
async function record(def: AnyDefinition, handlers: Record<string, Handler>): Promise<WorkflowEvent[]> {
  const h = createHarness(def, { now: 1_000 });
  h.start(INPUT as never);
  await h.run(handlers as never, { timers: 'advance' });
  if (h.status !== 'completed') throw new Error(`${def.name}: expected completed, got ${h.status}`);
  return [...h.events];
}

function folder(def: AnyDefinition, events: readonly WorkflowEvent[]): (i: number) => Snapshot {
  return () => {
    let s: Snapshot | null = null;
    for (const e of events) s = step(def, s, e);
    if (s?.status !== 'completed') throw new Error(`${def.name}: expected completed, got ${s?.status}`);
    return s;
  };
}

export const aslReducer: Group = {
  name: 'asl-reducer',
  async run() {
    const imported = fromAsl(MACHINE, { name: 'asl-order' });
    const asl = defineWorkflow(imported.definition);
    const aslEvents = await record(asl, aslHandlers(imported, { resources: functions, now: () => 1_000 }));
    const nativeEvents = await record(NATIVE, functions as Record<string, Handler>);
    const [a, n] = compareSync(folder(asl, aslEvents), folder(NATIVE, nativeEvents), {
      warmupMs: 1500,
      sampleMs: 400,
      samples: 9,
    });
    const ours = a.hz * aslEvents.length;
    const baseline = n.hz * nativeEvents.length;
    return [
      rateRow('asl-reducer', ours, baseline, 'events/s', 0.8, {
        note: `step() events/s on an imported Step Functions state machine (Task, Choice, Task, Task, Task; ${aslEvents.length} events per instance) vs the same workflow written natively (${nativeEvents.length} events), rates per CPU-second`,
        details: {
          aslEventsPerInstance: aslEvents.length,
          nativeEventsPerInstance: nativeEvents.length,
          aslInstancesPerSec: Math.round(a.hz),
          nativeInstancesPerSec: Math.round(n.hz),
          oursEventsPerSec: a.samples.map((v) => Math.round(v * aslEvents.length)),
          baselineEventsPerSec: n.samples.map((v) => Math.round(v * nativeEvents.length)),
        },
      }),
    ];
  },
};

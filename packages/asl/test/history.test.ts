import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { composition, createHarness, type Snapshot } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { compareEvents } from '../src/conformance/compare-history.js';
import { listCases, readCase } from '../src/conformance/index.js';
import { standIns } from '../src/conformance/replay.js';
import { type AslHistoryEvent, aslHandlers, fromAsl, toAslHistory } from '../src/index.js';
import { ORDER_MACHINE, ORDER_RUNS, orderFunctions } from './machines.js';

/** Runs a machine in the harness; returns the snapshot and a lookup of its child instances. */
async function runInHarness(
  machine: unknown,
  input: unknown,
  resources: Parameters<typeof aslHandlers>[1]['resources'],
  options: { context?: Record<string, unknown>; start?: number; envelope?: boolean } = {},
) {
  const imported = fromAsl(machine, { name: 'history' });
  const h = createHarness(imported.definition, {
    workflows: imported.workflows,
    kinds: [composition],
    now: options.start ?? Date.UTC(2026, 0, 1),
    maxTransitions: 100_000,
  });
  const handlers = aslHandlers(imported, {
    resources,
    invoke: options.envelope ? 'envelope' : 'payload',
    now: () => h.now,
    random: () => 1,
    hash: (algorithm, data) =>
      createHash(algorithm.replace('-', '').toLowerCase()).update(data).digest('hex'),
    ...(options.context ? { context: () => options.context! } : {}),
  });
  h.start(input as never);
  await h.run(handlers as never, { timers: 'advance', maxRounds: 100_000 });
  const child = (id: string): Snapshot | undefined => {
    try {
      return h.child(id).snapshot as Snapshot;
    } catch {
      return undefined;
    }
  };
  return { imported, snapshot: h.snapshot as Snapshot, child };
}

/** The `(type, state, index)` of an event, and the block it ran in, as the corpus records them. */
function simplify(events: readonly AslHistoryEvent[]) {
  const out: Array<{ type: string; state?: string; index?: number; block?: string }> = [];
  let depth = 0;
  let blocks = 0;
  let block: string | undefined;
  for (const e of events) {
    const d = Object.entries(e).find(([k]) => k.endsWith('EventDetails'))?.[1] as
      | { name?: string; index?: number }
      | undefined;
    const named = /State(Entered|Exited)$|^MapIteration/.test(e.type);
    const x = {
      type: e.type,
      ...(named && d?.name !== undefined ? { state: d.name } : {}),
      ...(e.type.startsWith('MapIteration') && d?.index !== undefined ? { index: d.index } : {}),
    };
    const ends = /^(Map|Parallel)State(Succeeded|Failed|Aborted)$/.test(e.type);
    if (ends) depth--;
    if (ends && depth === 0) block = undefined;
    out.push(block ? { ...x, block } : x);
    if (e.type === 'MapStateStarted' || e.type === 'ParallelStateStarted') {
      if (depth === 0) block = `${e.type.startsWith('Map') ? 'm' : 'p'}${++blocks}`;
      depth++;
    }
  }
  return out;
}

describe('toAslHistory', () => {
  it("gives an execution's events in Step Functions' shape, with ids, previous ids and the snapshot's times", async () => {
    const run = ORDER_RUNS[0];
    const start = Date.UTC(2026, 0, 1);
    const { imported, snapshot, child } = await runInHarness(ORDER_MACHINE, run.input, orderFunctions(), {
      start,
    });
    const events = toAslHistory(snapshot, imported, { children: child });
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.map((e) => e.previousEventId)).toEqual(events.map((_, i) => i));
    expect(events[0]).toMatchObject({ type: 'ExecutionStarted', timestamp: new Date(start) });
    expect(JSON.parse(events[0]!.executionStartedEventDetails!['input'] as string)).toEqual(run.input);
    const last = events.at(-1)!;
    expect(last.type).toBe('ExecutionSucceeded');
    expect(JSON.parse(last.executionSucceededEventDetails!['output'] as string)).toEqual(run.output);
    // The retry (1 s) and the Wait (1 s) show in the times.
    expect(last.timestamp.getTime() - start).toBeGreaterThanOrEqual(2000);
    expect(simplify(events).map((e) => [e.type, e.index ?? e.state ?? ''].join(' ').trim())).toEqual([
      'ExecutionStarted',
      'PassStateEntered Prepare',
      'PassStateExited Prepare',
      'MapStateEntered Price lines',
      'MapStateStarted',
      'MapIterationStarted 0',
      'TaskStateEntered Price',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
      'TaskStateExited Price',
      'MapIterationSucceeded 0',
      'MapIterationStarted 1',
      'TaskStateEntered Price',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
      'TaskStateExited Price',
      'MapIterationSucceeded 1',
      'MapIterationStarted 2',
      'TaskStateEntered Price',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
      'TaskStateExited Price',
      'MapIterationSucceeded 2',
      'MapStateSucceeded',
      'MapStateExited Price lines',
      'TaskStateEntered Charge',
      'TaskScheduled',
      'TaskStarted',
      'TaskFailed',
      'TaskScheduled',
      'TaskStarted',
      'TaskSucceeded',
      'TaskStateExited Charge',
      'ChoiceStateEntered Big order?',
      'ChoiceStateExited Big order?',
      'WaitStateEntered Cool off',
      'WaitStateExited Cool off',
      'ParallelStateEntered Ship',
      'ParallelStateStarted',
      'TaskStateEntered Label',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
      'TaskStateExited Label',
      'PassStateEntered Note',
      'PassStateExited Note',
      'ParallelStateSucceeded',
      'ParallelStateExited Ship',
      'SucceedStateEntered Done',
      'SucceedStateExited Done',
      'ExecutionSucceeded',
    ]);
    const failed = events.find((e) => e.type === 'TaskFailed')!;
    expect(failed.taskFailedEventDetails).toMatchObject({
      error: 'Gateway.Timeout',
      cause: 'the gateway did not answer',
    });
    const entered = events.find((e) => e.stateEnteredEventDetails?.['name'] === 'Charge')!;
    expect(JSON.parse(entered.stateEnteredEventDetails!['input'] as string)).toMatchObject({
      prices: [10, 20, 30],
    });
  });

  it('ends with ExecutionFailed and the error, after the caught and uncaught failures', async () => {
    const machine = {
      StartAt: 'Charge',
      States: {
        Charge: {
          Type: 'Task',
          Resource: 'arn:aws:lambda:eu-west-1:111111111111:function:charge',
          Catch: [{ ErrorEquals: ['Card.Declined'], Next: 'Give up' }],
          End: true,
        },
        'Give up': { Type: 'Fail', Error: 'Order.Failed', Cause: 'declined' },
      },
    };
    const { imported, snapshot } = await runInHarness(
      machine,
      {},
      {
        charge: () => {
          throw Object.assign(new Error('no funds'), { name: 'Card.Declined' });
        },
      },
    );
    const events = toAslHistory(snapshot, imported);
    expect(events.map((e) => e.type)).toEqual([
      'ExecutionStarted',
      'TaskStateEntered',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionFailed',
      'TaskStateExited',
      'FailStateEntered',
      'ExecutionFailed',
    ]);
    expect(events.at(-1)!.executionFailedEventDetails).toEqual({ error: 'Order.Failed', cause: 'declined' });
  });
});

// The recorded executions (outside the repository, like the conformance test's): the event type
// sequence toAslHistory reads from the snapshots, against what AWS recorded, for every case whose
// events are meaningful (L2) and that runs without a state entered twice (a loop keeps only its
// last entry in a snapshot).
const here = dirname(fileURLToPath(import.meta.url));
const corpus = process.env['STEPFOLD_ASL_CORPUS'] ?? resolve(here, '../../../../shared/asl');

describe.skipIf(!existsSync(corpus))('toAslHistory against the recorded histories', () => {
  it('matches the recorded event sequence of the recorded executions', { timeout: 600_000 }, async () => {
    let compared = 0;
    const mismatched: string[] = [];
    for (const id of listCases(corpus)) {
      const c = readCase(corpus, id);
      if (c.kind !== 'execution' || c.levels.L2 !== true) continue;
      for (const run of c.runs) {
        const events = run.expected.events ?? [];
        const entered = events
          .filter((e) => e.type.endsWith('StateEntered'))
          .map((e) => `${e.block ?? ''}/${e.iteration ?? ''}/${e.state}`);
        if (new Set(entered).size !== entered.length || run.expected.status === 'RUNNING') continue;
        const stand = standIns(run.lambdas, run.masks);
        let got: ReturnType<typeof simplify>;
        try {
          const start = run.clock?.start ? Date.parse(run.clock.start) : Date.UTC(2024, 0, 1);
          const r = await runInHarness(c.definition, run.input, stand.resources, {
            context: run.context,
            start,
            envelope: true,
          });
          got = simplify(toAslHistory(r.snapshot, r.imported, { children: r.child }));
        } catch (e) {
          mismatched.push(`${id}: ${(e as Error).message}`);
          continue;
        }
        compared++;
        const dropParallelSucceeded = JSON.stringify(c.levels.notes ?? '').includes(
          'Drop ParallelStateSucceeded',
        );
        const why = compareEvents(got as never, events, { dropParallelSucceeded, prefix: false });
        if (why) mismatched.push(`${id} ${run.dir}: ${why}`);
      }
    }
    console.log(
      `toAslHistory: ${compared - mismatched.length} of ${compared} recorded histories match${mismatched.length ? `; differing:\n  ${mismatched.join('\n  ')}` : ''}`,
    );
    expect(compared).toBeGreaterThan(0);
    expect(compared - mismatched.length).toBeGreaterThanOrEqual(HISTORY_FLOOR);
  });
});

/** How many recorded histories toAslHistory matched when this test was written: none may be lost. */
const HISTORY_FLOOR = 190;

import {
  createMemoryStore,
  createRunner,
  createWorker,
  isStepfoldError,
  type ScheduledFor,
  type Store,
  type Worker,
  workflow,
} from '@stepfold/engine';
import { createSchedules, type Schedules } from '@stepfold/engine/schedules';
import * as z from 'zod';

// A simulated world for schedule tests: one memory store, a clock the test moves, workers started
// and stopped at will, and a count of every instance created (a run started twice would show).

/** Midnight UTC on 2026-01-01: the simulated day starts here. */
export const T0 = Date.UTC(2026, 0, 1);
export const MIN = 60_000;

/** The target: a report built by one task (finished as soon as a worker runs it). */
export const report = workflow('report', 1)
  .input(z.object({ team: z.string() }))
  .task('build', { handler: 'buildReport', input: { team: 'input.team' } })
  .build();

/** A target that keeps running until it gets `finish`: for overlap tests. */
export const long = workflow('long', 1).wait('hold', { signal: 'finish' }).build();

/** The simulation. */
export interface Sim {
  now: number;
  store: Store;
  schedules: Schedules<readonly [typeof report, typeof long]>;
  /** Successful creates by instance id. */
  created: Map<string, number>;
  /** Creates refused with ALREADY_EXISTS, by instance id. */
  refused: Map<string, number>;
  /** What each report run's handler was told of its schedule (`ctx.schedule`), by instance id. */
  told: Map<string, ScheduledFor | undefined>;
  /** A new runner and worker over the store (a process starting). */
  worker(): Promise<Worker>;
  /** Moves the clock to `at` and lets every running worker finish what is due. */
  advance(at: number, workers: readonly Worker[]): Promise<void>;
  /** Ids of the target runs created, sorted. */
  runs(workflow?: string): string[];
}

/** A simulation starting at `start` (default: 30 s before {@link T0}). */
export function createSim(start = T0 - 30_000): Sim {
  const inner = createMemoryStore();
  const created = new Map<string, number>();
  const refused = new Map<string, number>();
  const workflowOf = new Map<string, string>();
  const bump = (m: Map<string, number>, id: string) => m.set(id, (m.get(id) ?? 0) + 1);
  const store = new Proxy(inner, {
    get(target, key, receiver) {
      if (key !== 'create') return Reflect.get(target, key, receiver);
      return async (s: Parameters<Store['create']>[0]) => {
        try {
          await target.create(s);
        } catch (e) {
          if (isStepfoldError(e, 'ALREADY_EXISTS')) bump(refused, s.id);
          throw e;
        }
        bump(created, s.id);
        workflowOf.set(s.id, s.workflow.name);
      };
    },
  });
  const sim: Sim = {
    now: start,
    store,
    created,
    refused,
    told: new Map(),
    schedules: createSchedules({ store, workflows: [report, long], clock: () => sim.now }),
    async worker() {
      // What a worker process does: its own runner, with the schedule workflow and its handler.
      const runner = createRunner({
        store,
        workflows: [report, long, sim.schedules.workflow],
        handlers: {
          buildReport: ({ input, instanceId, schedule }) => {
            sim.told.set(instanceId, schedule);
            return `report for ${input.team}`;
          },
          ...sim.schedules.handlers,
        },
        clock: () => sim.now,
      });
      const worker = createWorker({ runner, clock: () => sim.now, on: { error: (e) => console.error(e) } });
      await worker.start();
      return worker;
    },
    async advance(at, workers) {
      sim.now = at;
      for (const w of workers) w.nudge();
      await Promise.all(workers.map((w) => w.idle()));
    },
    runs(name = 'report') {
      return [...created.keys()].filter((id) => workflowOf.get(id) === name).sort();
    },
  };
  return sim;
}

import { afterEach, it } from 'vitest';
import { workflow } from '../../definition/builder.js';
import { defineWorkflow } from '../../definition/compile.js';
import type { WorkflowDefinition } from '../../definition/schema.js';
import type { StandardSchema } from '../../definition/typing.js';
import { createRunner } from '../../runner/runner.js';
import type { Runner } from '../../runner/types.js';
import type { Store } from '../../store/store.js';
import type { Worker, WorkerOptions } from '../../worker/types.js';
import { createWorker } from '../../worker/worker.js';
import type { SuiteContext } from './context.js';

// What the parts of the inbox suite share: the workflows they send to, and the harness that starts
// senders and workers on a fresh store and stops every worker after each test.

/** Signals waiting for the instances named, counted through the inbox's claim by id (which takes no lease). */
export const waitingIn = async (store: Store, ...ids: string[]) =>
  (await store.inbox!.claim(0, ids.length, ids)).reduce((n, d) => n + d.sent.length, 0);

/** Waits for `go`, then runs `hit` with what it said. */
export const waits = defineWorkflow({
  name: 'send-waits',
  version: 1,
  start: 'go',
  steps: {
    go: { kind: 'wait', signal: 'go', next: 'hit' },
    hit: { kind: 'task', handler: 'hit', input: { said: 'outputs.go.said' } },
  },
});
// Batches two `item` signals: its output keeps their order.
export const batches = defineWorkflow({
  name: 'send-batches',
  version: 1,
  start: 'gather',
  steps: {
    gather: { kind: 'collect', signal: 'item', maxItems: 2, next: 'hit' },
    hit: { kind: 'task', handler: 'hit', input: { said: 'outputs.gather' } },
  },
});
// A Standard Schema by hand (this package does not depend on zod): `{ n: number }`.
const numbered: StandardSchema<{ n: number }> = {
  '~standard': {
    version: 1,
    vendor: 'test',
    validate: (v) =>
      typeof (v as { n?: unknown })?.n === 'number'
        ? { value: v as { n: number } }
        : { issues: [{ message: 'n must be a number', path: ['n'] }] },
  },
};
/** The typed builder's workflow: `go` carries `{ n: number }`. */
export const typed = workflow('send-typed', 1).signal('go', numbered).wait('go', { signal: 'go' }).build();
// Beside JSON definitions in one runner, as a JSON definition (its typed client is tested alone).
export const typedJson = typed as unknown as WorkflowDefinition;

/** A started runner that hands off, and what the workers that {@link InboxHarness.setup} started ran. */
export interface InboxSetup {
  store: Store;
  sender: Runner;
  ran: Array<{ id: string; input: unknown }>;
  runners: Runner[];
}

/** Senders and workers for the inbox tests: every worker started here is stopped after each test. */
export interface InboxHarness {
  ctx: SuiteContext;
  /** The workers started; a test that starts its own pushes them here. */
  workers: Worker[];
  /** Registers a test only notices can drive: for a store with wakes, absent (not skipped) without. */
  wakesOnly(name: string, test: () => Promise<void>): void;
  /** A runner that only writes: the tasks its events dispatch go to workers. */
  senderOn(store: Store, workflows: readonly WorkflowDefinition[]): Runner;
  /** A started worker over `store` whose `hit` handler records its input in `ran`. */
  recordingWorker(
    store: Store,
    workflows: readonly WorkflowDefinition[],
    ran: unknown[],
    options?: Omit<WorkerOptions, 'runner'>,
  ): Promise<Worker>;
  /** A runner that hands off (the sender) and `n` workers whose handler records what it was given. */
  setup(
    n: number,
    workerOptions?: Parameters<typeof createWorker>[0] extends infer O ? Partial<O> : never,
  ): Promise<InboxSetup>;
}

/** The harness of one inbox suite; registers the `afterEach` that stops its workers. */
export function inboxHarness(ctx: SuiteContext): InboxHarness {
  // Tests only notices can drive: registered for a store with wakes, absent (not skipped) without.
  const wakesOnly = (name: string, test: () => Promise<void>) => {
    if (ctx.options.capabilities.includes('wakes')) it(name, test);
  };
  const workers: Worker[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 1000 })));
  });

  /** A runner that only writes: the tasks its events dispatch go to workers. */
  const senderOn = (store: Store, workflows: readonly WorkflowDefinition[]) =>
    createRunner({ store, workflows, handlers: { hit: () => null }, execute: false });

  /** A started worker over `store` whose `hit` handler records its input in `ran`. */
  async function recordingWorker(
    store: Store,
    workflows: readonly WorkflowDefinition[],
    ran: unknown[],
    options: Omit<WorkerOptions, 'runner'> = {},
  ): Promise<Worker> {
    const runner = createRunner({
      store,
      workflows,
      handlers: {
        hit: ({ input }) => {
          ran.push(input);
          return null;
        },
      },
    });
    const worker = createWorker({ runner, ...options });
    workers.push(worker);
    await worker.start();
    return worker;
  }

  /** A runner that hands off (the sender) and `n` workers whose handler records what it was given. */
  async function setup(
    n: number,
    workerOptions: Parameters<typeof createWorker>[0] extends infer O ? Partial<O> : never = {},
  ) {
    const store = await ctx.fresh();
    const sender = createRunner({
      store,
      workflows: [waits, batches, typedJson],
      handlers: { hit: () => null },
      execute: false,
    });
    const ran: Array<{ id: string; input: unknown }> = [];
    const runners: Runner[] = [];
    for (let i = 0; i < n; i++) {
      const runner = createRunner({
        store,
        workflows: [waits, batches, typedJson],
        handlers: {
          hit: ({ instanceId, input }: { instanceId: string; input: unknown }) => {
            ran.push({ id: instanceId, input });
            return null;
          },
        },
      });
      runners.push(runner);
      const worker = createWorker({ runner, ...workerOptions });
      workers.push(worker);
      await worker.start();
    }
    return { store, sender, ran, runners };
  }

  return { ctx, workers, wakesOnly, senderOn, recordingWorker, setup };
}

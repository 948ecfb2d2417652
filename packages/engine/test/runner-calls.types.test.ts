import {
  createMemoryStore,
  createRunner,
  createWorker,
  defineWorkflow,
  type HandlerContext,
  type SignalDataOf,
  workflow,
} from '@stepfold/engine';
import { describe, expectTypeOf, it } from 'vitest';
import * as z from 'zod/mini';

// Runner calls check the neighbours of the names they take: the input for a workflow's name, the
// signal names the workflows declare, startIfMissing, requeue's inputPatch, a worker's caps.
// Each expected-error line is a mistake the compiler must see; vitest runs these as no-ops.

const handlers = {
  charge: async ({ input }: HandlerContext<{ amount: number }>) => ({ id: `C-${input.amount}` }),
};
const order = workflow('order', 1)
  .handlers<typeof handlers>()
  .input(z.object({ amount: z.number(), sku: z.string() }))
  .signal('shipped', z.object({ tracking: z.string() }))
  .task('charge', { handler: 'charge', input: { amount: 'input.amount' } })
  .wait('ship', { signal: 'shipped' })
  .human('approve')
  .build();
const report = workflow('report', 1).task('run', { handler: 'charge' }).build();
const json = defineWorkflow({
  name: 'json',
  version: 1,
  start: 'a',
  steps: { a: { kind: 'task', handler: 'charge' } },
});
const store = createMemoryStore();

describe('runner.start', () => {
  it('checks the input against the declared input of the workflow it names', () => {
    const typeOnly = () => {
      const runner = createRunner({ store, workflows: [order, report], handlers });
      void runner.start('order', 'o-1', { amount: 1, sku: 'B' });
      void runner.start('order', 'o-1', { amount: 1, sku: 'B' }, { wait: 'write' });
      // @ts-expect-error amount is a number
      void runner.start('order', 'o-1', { amount: '1', sku: 'B' });
      // @ts-expect-error the declared input is required
      void runner.start('order', 'o-1');
      // A workflow without a declared input takes anything, or nothing.
      void runner.start('report', 'r-1');
      void runner.start('report', 'r-1', { any: 'thing' });
      // @ts-expect-error not a workflow of this runner
      void runner.start('ordr', 'o-1', {});
    };
    void typeOnly;
  });

  it('takes a version the runner registers under that name', () => {
    const typeOnly = () => {
      const order2 = workflow('order', 2)
        .input(z.object({ sku: z.string() }))
        .build();
      const runner = createRunner({ store, workflows: [order, order2, report], handlers });
      void runner.start('order', 'o-1', { amount: 1, sku: 'B' }, { version: 1 });
      void runner.start('order', 'o-1', { sku: 'B' }, { version: 2 });
      // @ts-expect-error the runner registers order v1 and v2, not v3
      void runner.start('order', 'o-1', { sku: 'B' }, { version: 3 });
      // @ts-expect-error report is registered at v1 only
      void runner.start('report', 'r-1', undefined, { version: 2 });
      const input = { amount: 1, sku: 'B' };
      void runner.signal(
        'o-1',
        'shipped',
        { tracking: 'T' },
        { startIfMissing: { workflow: 'order', input } },
      );
      void runner.signal(
        'o-1',
        'shipped',
        { tracking: 'T' },
        // @ts-expect-error no order v3 here
        { startIfMissing: { workflow: 'order', input, version: 3 } },
      );
      // JSON definitions: any version (UNKNOWN_VERSION at run time).
      void createRunner({ store, workflows: [json], handlers }).start('json', 'x-1', 1, { version: 9 });
    };
    void typeOnly;
  });

  it('takes any name and input once a JSON definition is registered', () => {
    const typeOnly = () => {
      const runner = createRunner({ store, workflows: [order, json], handlers });
      void runner.start('anything', 'x-1', 42);
      void runner.start('json', 'x-1');
    };
    void typeOnly;
  });
});

const refund = workflow('refund', 1)
  .signal('refunded', z.object({ id: z.string() }))
  .wait('w', { signal: 'refunded' })
  .build();

describe('runner.signal', () => {
  it('takes a signal name a workflow declares or listens for', () => {
    const typeOnly = () => {
      const runner = createRunner({ store, workflows: [order, refund], handlers });
      void runner.signal('o-1', 'shipped', { tracking: 'T' });
      void runner.signal('o-1', 'refunded', { id: 'R' });
      void runner.signal('o-1', 'approve', { decision: 'approve' });
      // @ts-expect-error no registered workflow declares or listens for "shiped"
      void runner.signal('o-1', 'shiped', { tracking: 'T' });
    };
    void typeOnly;
  });

  it("checks the data against the signal's declared type", () => {
    const typeOnly = () => {
      const runner = createRunner({ store, workflows: [order, refund], handlers });
      // @ts-expect-error tracking is a string
      void runner.signal('o-1', 'shipped', { tracking: 1 });
      // @ts-expect-error shipped declares its data: it is required
      void runner.signal('o-1', 'shipped');
      // @ts-expect-error a human step's decision is approve or reject
      void runner.signal('o-1', 'approve', { decision: 'maybe' });
      void runner.signal('o-1', 'approve', { approved: true, by: 'ana' }, { signalId: 'd-1' });
    };
    void typeOnly;
  });

  it('takes any name once a workflow does not declare its signals (a wait names any)', () => {
    const typeOnly = () => {
      const runner = createRunner({ store, workflows: [order, report], handlers });
      void runner.signal('o-1', 'anything');
    };
    void typeOnly;
  });

  it('startIfMissing names a registered workflow, with its input', () => {
    const typeOnly = () => {
      const runner = createRunner({ store, workflows: [order, report], handlers });
      const input = { amount: 1, sku: 'B' };
      void runner.signal(
        'o-1',
        'shipped',
        { tracking: 'T' },
        { startIfMissing: { workflow: 'order', input } },
      );
      void runner.signal(
        'o-1',
        'shipped',
        { tracking: 'T' },
        { startIfMissing: { workflow: 'report', input: 7 } },
      );
      void runner.signal(
        'o-1',
        'shipped',
        { tracking: 'T' },
        // @ts-expect-error not a workflow of this runner
        { startIfMissing: { workflow: 'ordr', input } },
      );
      void runner.signal(
        'o-1',
        'shipped',
        { tracking: 'T' },
        // @ts-expect-error order's input needs a sku
        { startIfMissing: { workflow: 'order', input: { amount: 1 } } },
      );
    };
    void typeOnly;
  });

  it('takes any name once a JSON definition is registered', () => {
    const typeOnly = () => {
      const runner = createRunner({ store, workflows: [order, json], handlers });
      void runner.signal('x-1', 'whatever', 1, { startIfMissing: { workflow: 'anything', input: 1 } });
    };
    void typeOnly;
  });
});

const recall = workflow('recall', 1)
  .signal('refunded', z.object({ amount: z.number() }))
  .wait('w', { signal: 'refunded' })
  .build();

describe('runner.send', () => {
  it('takes a signal name a workflow declares or listens for, as signal does', () => {
    const typeOnly = () => {
      const runner = createRunner({ store, workflows: [order, refund], handlers });
      void runner.send('o-1', 'shipped', { tracking: 'T' });
      void runner.send('o-1', 'refunded', { id: 'R' }, { signalId: 's-1', rejectFinished: true });
      void runner.send('o-1', 'approve', { decision: 'approve' });
      // @ts-expect-error no registered workflow declares or listens for "shiped"
      void runner.send('o-1', 'shiped', { tracking: 'T' });
    };
    void typeOnly;
  });

  it("checks the data against the signal's declared type", () => {
    const typeOnly = () => {
      const runner = createRunner({ store, workflows: [order, refund], handlers });
      // @ts-expect-error tracking is a string
      void runner.send('o-1', 'shipped', { tracking: 1 });
      // @ts-expect-error shipped declares its data: it is required
      void runner.send('o-1', 'shipped');
      // @ts-expect-error refunded's data has an id
      void runner.send('o-1', 'refunded', { tracking: 'T' });
      // @ts-expect-error the options are send's: no startIfMissing
      void runner.send('o-1', 'shipped', { tracking: 'T' }, { startIfMissing: { workflow: 'order' } });
    };
    void typeOnly;
    expectTypeOf<SignalDataOf<readonly [typeof order, typeof refund], 'shipped'>>().toEqualTypeOf<{
      tracking: string;
    }>();
  });

  it('takes the data of either workflow where two declare one name with different types', () => {
    const typeOnly = () => {
      const runner = createRunner({ store, workflows: [refund, recall], handlers });
      void runner.send('x-1', 'refunded', { id: 'R' });
      void runner.send('x-1', 'refunded', { amount: 3 });
      // @ts-expect-error neither declares a string amount
      void runner.send('x-1', 'refunded', { amount: '3' });
    };
    void typeOnly;
  });

  it('takes any name and data once a workflow does not declare its signals, or is JSON', () => {
    const typeOnly = () => {
      void createRunner({ store, workflows: [order, report], handlers }).send('o-1', 'anything');
      void createRunner({ store, workflows: [order, json], handlers }).send('x-1', 'whatever', 1);
      // A declared name keeps its declared data beside a workflow that takes any.
      const open = createRunner({ store, workflows: [order, json], handlers });
      void open.send('o-1', 'shipped', { tracking: 'T' });
      // @ts-expect-error order declares shipped's data
      void open.send('o-1', 'shipped', { tracking: 1 });
    };
    void typeOnly;
  });
});

describe('requeue', () => {
  it("types inputPatch as some fields of the workflow's input", () => {
    const typeOnly = () => {
      const runner = createRunner({ store, workflows: [order], handlers });
      void runner.requeue('o-1', { inputPatch: { sku: 'C' } });
      // @ts-expect-error sku is a string
      void runner.requeue('o-1', { inputPatch: { sku: 3 } });
      // @ts-expect-error no field "skuu" in the input
      void runner.requeue('o-1', { inputPatch: { skuu: 'C' } });
      void runner.requeue('o-1', { step: 'charge' });
      // @ts-expect-error no registered workflow has a step "chrage"
      void runner.requeue('o-1', { step: 'chrage' });
      const client = runner.client(order);
      void client.requeue('o-1', { inputPatch: { amount: 2 } });
      // @ts-expect-error amount is a number
      void client.requeue('o-1', { inputPatch: { amount: '2' } });
      // Untyped: any record.
      void createRunner({ store, workflows: [json], handlers }).requeue('x', { inputPatch: { a: 1 } });
    };
    void typeOnly;
  });
});

describe('createWorker', () => {
  it("keys workflowConcurrency by the runner's workflow names", () => {
    const typeOnly = () => {
      const runner = createRunner({ store, workflows: [order, report], handlers });
      createWorker({ runner, workflowConcurrency: { report: 2 } });
      // @ts-expect-error "reprot" is not a workflow of this runner
      createWorker({ runner, workflowConcurrency: { reprot: 2 } });
      const open = createRunner({ store, workflows: [json], handlers });
      createWorker({ runner: open, workflowConcurrency: { anything: 2 } });
    };
    void typeOnly;
    expectTypeOf(createWorker).toBeFunction();
  });
});

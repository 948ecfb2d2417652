import {
  createHarness,
  createMemoryStore,
  createRunner,
  defineWorkflow,
  type FinishedStatus,
  type HandlerContext,
  type Runner,
  type RunnerOptions,
  type SendResult,
  type Snapshot,
  type TypedSnapshot,
  type WorkflowHarness,
  type WorkflowNameOf,
  workflow,
} from '@stepfold/engine';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as z from 'zod/mini';

// "Every name checked": each @ts-expect-error line is a mistake the compiler must see (tsc fails
// if a line stops being an error); vitest runs these as no-ops.

const handlers = {
  submit: async ({ input }: HandlerContext<{ amount: number }>) => ({ id: `E-${input.amount}` }),
  pay: async ({ input }: HandlerContext<{ id: string }>) => ({ paymentId: `P-${input.id}` }),
};
const expenseInput = z.object({ amount: z.number(), owner: z.object({ team: z.string() }) });
const base = () =>
  workflow('expense', 1)
    .handlers<typeof handlers>()
    .input(expenseInput)
    .task('submit', { handler: 'submit', input: { amount: 'input.amount' } });

const expense = base()
  .choice('big', {
    branches: [{ when: { '>=': [{ var: 'input.amount' }, 5000] }, next: 'second' }],
    otherwise: 'pay',
  })
  .human('second')
  .task('pay', { handler: 'pay', input: { id: 'outputs.submit.id' } })
  .build();

describe('1. condition paths', () => {
  it('a choice reads only paths of the declared input and of earlier steps', () => {
    const b = base();
    // @ts-expect-error 'input.amout' is not a path of the declared input
    b.choice('c', { branches: [{ when: { '>=': [{ var: 'input.amout' }, 5000] }, next: 'x' }] });
    // @ts-expect-error nested: 'input.owner.tem'
    b.choice('c', { branches: [{ when: { and: [{ exists: 'input.owner.tem' }] }, next: 'x' }] });
    // @ts-expect-error a step that does not exist (or runs later)
    b.choice('c', { branches: [{ when: { var: 'outputs.pay.paymentId' }, next: 'x' }] });
    // @ts-expect-error paths start with input or outputs
    b.choice('c', { branches: [{ when: { '==': [{ var: 'amount' }, 1] }, next: 'x' }] });
    expectTypeOf(
      b.choice('c', {
        branches: [{ when: { '!': { '==': [{ var: 'outputs.submit.id' }, 'E-1'] } }, next: 'x' }],
      }),
    ).not.toBeNever();
  });
});

describe('2. the harness, typed by the definition', () => {
  it('complete / fail / signal take its step ids, outputs and signal names', () => {
    // Only compiled: at run time these calls would throw (that is the point of the errors).
    const typeOnly = () => {
      const h = createHarness(expense).start({ amount: 1, owner: { team: 't' } });
      h.complete('submit', { id: 'E-1' });
      // @ts-expect-error no step "sbumit"
      h.complete('sbumit', { id: 'E-1' });
      // @ts-expect-error the output of submit is { id: string }
      h.complete('submit', { id: 1 });
      // @ts-expect-error no step "py"
      h.fail('py', 'boom');
      const strict = createHarness(
        workflow('s', 1)
          .signal('go', z.object({ n: z.number() }))
          .wait('w', { signal: 'go' })
          .build(),
      );
      strict.signal('go', { n: 1 });
      // @ts-expect-error not a declared signal
      strict.signal('og', { n: 1 });
      // @ts-expect-error the payload of go is { n: number }
      strict.signal('go', { n: 'one' });
    };
    void typeOnly;
  });

  it('a typed harness still passes where a WorkflowHarness is asked for', () => {
    expectTypeOf<WorkflowHarness<typeof expense>>().toExtend<WorkflowHarness>();
  });

  it('JSON definitions keep taking strings', () => {
    // Only compiled: at run time these calls would throw (that is the point of the errors).
    const typeOnly = () => {
      const json = defineWorkflow({
        name: 'j',
        version: 1,
        start: 'a',
        steps: { a: { kind: 'task', handler: 'h' } },
      });
      const h = createHarness(json).start();
      h.complete('anything', { any: 1 });
      h.signal('whatever', 1);
      expectTypeOf(h.dispatched()[0]!.step).toEqualTypeOf<string>();
    };
    void typeOnly;
  });
});

const store = createMemoryStore();
const runnerHandlers = {
  submit: async ({ input }: HandlerContext<{ amount: number }>) => ({ id: `E-${input.amount}` }),
  pay: async ({ input }: HandlerContext<{ id: string }>) => ({ paymentId: `P-${input.id}` }),
};

describe('3. runner.start', () => {
  it('takes the names of the registered typed workflows; any string with a JSON one among them', async () => {
    const runner = createRunner({ store, workflows: [expense], handlers: runnerHandlers, execute: false });
    expect((await runner.start('expense', 'e-1', { amount: 1, owner: { team: 't' } })).id).toBe('e-1');
    // @ts-expect-error 'expens' is not a registered workflow
    await expect(runner.start('expens', 'e-2')).rejects.toMatchObject({ code: 'UNKNOWN_WORKFLOW' });
    const json = defineWorkflow({ name: 'j', version: 1, start: 'a', steps: { a: { kind: 'succeed' } } });
    expectTypeOf<WorkflowNameOf<readonly [typeof expense]>>().toEqualTypeOf<'expense'>();
    expectTypeOf<WorkflowNameOf<readonly [typeof expense, typeof json]>>().toEqualTypeOf<string>();
  });
});

describe('4. TypedSnapshot.steps', () => {
  it('has the keys of the definition steps only', () => {
    // Only compiled: at run time these calls would throw (that is the point of the errors).
    const typeOnly = () => {
      type Steps = TypedSnapshot<typeof expense>['steps'];
      expectTypeOf<keyof Steps>().toEqualTypeOf<'submit' | 'big' | 'second' | 'pay'>();
      // Still a Snapshot wherever one is asked for.
      expectTypeOf<TypedSnapshot<typeof expense>>().toExtend<Snapshot>();
      expectTypeOf<NonNullable<Steps['pay']>['output']>().toEqualTypeOf<{ paymentId: string } | undefined>();
      const s = {} as TypedSnapshot<typeof expense>;
      // @ts-expect-error no step "pya"
      void s.steps.pya;
    };
    void typeOnly;
  });
});

describe('5. the declared output', () => {
  it('is checked against the last step and a succeed mapping', () => {
    const paid = base().output<{ paymentId: string }>();
    paid.task('pay', { handler: 'pay', input: { id: 'outputs.submit.id' } }).build();
    paid.succeed('done', { output: { paymentId: 'outputs.submit.id' } }).build();
    const wrong = base().output<{ paymentId: number }>();
    // @ts-expect-error the last step ends with { paymentId: string }
    wrong.task('pay', { handler: 'pay', input: { id: 'outputs.submit.id' } }).build();
    // @ts-expect-error the succeed mapping gives { paymentId: string }
    wrong.succeed('done', { output: { paymentId: 'outputs.submit.id' } });
    // Without .output() anything goes.
    expectTypeOf(
      base()
        .task('pay', { handler: 'pay', input: { id: 'outputs.submit.id' } })
        .build(),
    ).not.toBeNever();
  });
});

describe('6. a step id used twice', () => {
  it('is a compile error naming it', () => {
    // @ts-expect-error duplicate step id "submit"
    base().task('submit', { handler: 'submit', input: { amount: 'input.amount' } });
    // @ts-expect-error any kind of step
    base().human('second').sleep('second', { ms: 1 });
  });
});

describe('7. a typed and a JSON definition in one runner', () => {
  it('compiles; the JSON definition asks only for functions', () => {
    const json = defineWorkflow({
      name: 'j',
      version: 1,
      start: 'a',
      steps: { a: { kind: 'task', handler: 'jh' } },
    });
    const runner = createRunner({
      store,
      workflows: [expense, json],
      handlers: { ...runnerHandlers, jh: async () => 1 },
    });
    expectTypeOf(runner.client(expense).start).parameter(1).toEqualTypeOf<{
      amount: number;
      owner: { team: string };
    }>();
    // send answers what happened: narrowing on status gives the fields of that case.
    expectTypeOf(runner.send).returns.resolves.toEqualTypeOf<SendResult>();
    expectTypeOf(runner.client(expense).send).returns.resolves.toEqualTypeOf<SendResult>();
    type Finished = Extract<SendResult, { status: 'finished' }>;
    expectTypeOf<Finished['finished']>().toEqualTypeOf<FinishedStatus>();
    expectTypeOf<Extract<SendResult, { snapshot: unknown }>['snapshot']>().toEqualTypeOf<Snapshot>();
    createRunner({
      store,
      workflows: [expense, json],
      handlers: {
        ...runnerHandlers,
        // @ts-expect-error the typed definition's handlers are still checked (pay takes { id: string })
        pay: async ({ input }: HandlerContext<{ id: number }>) => input.id,
        jh: () => 1,
      },
    });
  });
});

describe('createRunner', () => {
  it('still takes a RunnerOptions value, executing or not', () => {
    const typeOnly = (o: RunnerOptions<readonly [typeof expense]>) => createRunner(o);
    expectTypeOf(typeOnly).returns.toEqualTypeOf<Runner<readonly [typeof expense]>>();
    expectTypeOf(createRunner({ store, workflows: [expense], execute: false })).not.toBeNever();
  });
});

describe('8. short first lines', () => {
  it('a missing handler, a wrong human decision', () => {
    // Only compiled: at run time these calls would throw (that is the point of the errors).
    const typeOnly = () => {
      // @ts-expect-error Type '{ submit: ... }' is not assignable to type '... & { pay: "missing handler"; }'
      createRunner({ store, workflows: [expense], handlers: { submit: runnerHandlers.submit } });
      createRunner({
        store,
        workflows: [expense],
        strictHandlers: true,
        // @ts-expect-error with strictHandlers, refund: not assignable to '"no workflow of this runner names this handler"'
        handlers: { ...runnerHandlers, refund: () => 1 },
      });
      const runner = createRunner({ store, workflows: [expense], handlers: runnerHandlers });
      // @ts-expect-error not assignable to '({ decision: "approve" | "reject"; } | { approved: boolean; }) & ...'
      void runner.client(expense).signal('e-1', 'second', { decision: 'aprove' });
      // @ts-expect-error No overload matches this call (the last: not one of the workflows of this runner)
      runner.client(workflow('other', 1).human('h').build());
    };
    void typeOnly;
  });
});

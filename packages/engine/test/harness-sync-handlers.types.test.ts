import {
  composition,
  createHarness,
  type DispatchedTask,
  defineWorkflow,
  type HandlerContext,
  type SyncHandlers,
  workflow,
} from '@stepfold/engine';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as z from 'zod/mini';
import { type Line, line } from './line-child.js';

// `runHandlers` takes synchronous handlers typed by the definitions it drives: the handler names
// they use, each task's input as that handler takes it, and what it returns. A line marked to
// expect an error is a mistake tsc must see (`node scripts/typecheck-tests.mjs`); vitest runs the
// harness for real.

const handlers = {
  submit: async ({ input }: HandlerContext<{ amount: number }>) => ({ id: `E-${input.amount}` }),
  price: async ({ input }: HandlerContext<Line>) => ({ cents: input.sku.length }),
  refund: async (_: HandlerContext<{ amount: number }>) => null,
};
const expense = workflow('expense', 1)
  .handlers<typeof handlers>()
  .input(z.object({ amount: z.number(), lines: z.array(z.object({ sku: z.string() })) }))
  .task('submit', { handler: 'submit', compensate: 'refund', input: { amount: 'input.amount' } })
  .map('prices', { items: 'input.lines', handler: 'price' })
  .child('first', { workflow: line, input: { sku: 'outputs.submit.id' } })
  .build();
const input = { amount: 10, lines: [{ sku: 'AB' }] };

describe('runHandlers', () => {
  it("types each handler's task input and output by the handler it is", () => {
    const h = createHarness(expense, { workflows: [line], kinds: [composition] }).start(input);
    h.runHandlers({
      submit: (task) => {
        expectTypeOf(task.input).toEqualTypeOf<{ amount: number }>();
        return { id: `E-${task.input.amount}` };
      },
      price: (task) => ({ cents: task.input.sku.length }),
      // A handler of a child workflow in `workflows`: the harness runs the whole tree.
      pick: (task) => ({ picked: task.input.sku }),
    });
    expect(h.status).toBe('completed');
    expect(h.output('prices')).toEqual([{ cents: 2 }]);
    expect(h.child('first').output('pick')).toEqual({ picked: 'E-10' });
  });

  it('refuses a handler name no definition uses, a wrong input read and a wrong output', () => {
    const typeOnly = () => {
      const h = createHarness(expense, { workflows: [line], kinds: [composition] }).start(input);
      // @ts-expect-error "sbumit" is not a handler of these workflows
      h.runHandlers({ sbumit: () => ({ id: 'E' }) });
      // @ts-expect-error submit's input has no sku
      h.runHandlers({ submit: (task) => ({ id: task.input.sku }) });
      // @ts-expect-error submit returns an id string
      h.runHandlers({ submit: () => ({ id: 1 }) });
      // @ts-expect-error a synchronous handler returns its output, not a promise of it
      h.runHandlers({ price: async () => ({ cents: 1 }) });
      // Without `workflows`, a child workflow's handler is not one of the harness's.
      // @ts-expect-error "pick" is line's, which this harness does not drive
      createHarness(expense, { kinds: [composition] }).runHandlers({ pick: () => ({ picked: 'A' }) });
    };
    expect(typeof typeOnly).toBe('function');
    expectTypeOf<SyncHandlers<readonly [typeof expense]>>().toHaveProperty('refund');
  });

  it('takes any name, input and output for an untyped definition', () => {
    const json = defineWorkflow({
      name: 'j',
      version: 1,
      start: 'a',
      steps: { a: { kind: 'task', handler: 'h' } },
    });
    const h = createHarness(json).start({ n: 1 });
    h.runHandlers({
      h: (task) => {
        expectTypeOf(task.input).toEqualTypeOf<unknown>();
        return task.input;
      },
      other: () => 'never called',
    });
    expect(h.output('a')).toEqual({ n: 1 });
    expectTypeOf<SyncHandlers>().toEqualTypeOf<{
      [name: string]: ((task: DispatchedTask) => unknown) | undefined;
    }>();
  });
});

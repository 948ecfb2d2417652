import {
  composition,
  createHarness,
  createMemoryStore,
  createRunner,
  defineWorkflow,
  type HandlerContext,
  type HumanDecision,
  workflow,
} from '@stepfold/engine';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as z from 'zod/mini';
import { type Line, line } from './line-child.js';

// What the harness writes, typed by its definition as a runner client's calls are: a line marked
// to expect an error is a mistake tsc must see (`node scripts/typecheck-tests.mjs`); vitest runs
// the harness for real, so a refused call is also shown to fail (or do nothing) at run time.

const handlers = {
  submit: async ({ input }: HandlerContext<{ amount: number }>) => ({ id: `E-${input.amount}` }),
  pay: async ({ input }: HandlerContext<{ by: string }>) => ({ paidBy: input.by }),
  refund: async (_: HandlerContext<{ by: string }>) => null,
  price: async ({ input }: HandlerContext<Line>) => ({ cents: input.sku.length }),
};

const expense = workflow('expense', 1)
  .handlers<typeof handlers>()
  .input(z.object({ amount: z.number(), lines: z.array(z.object({ sku: z.string() })) }))
  .signal('approve', z.object({ decision: z.enum(['approve', 'reject']), by: z.string() }))
  .signal('note', z.object({ text: z.string() }))
  .task('submit', { handler: 'submit', input: { amount: 'input.amount' } })
  .human('approve')
  .task('pay', { handler: 'pay', compensate: 'refund', input: { by: 'outputs.approve.by' } })
  .map('prices', { items: 'input.lines', handler: 'price' })
  .child('first', { workflow: line, input: { sku: 'outputs.approve.by' } })
  .wait('noted', { signal: 'note' })
  .build();

const input = { amount: 10, lines: [{ sku: 'A' }] };
const started = () => createHarness(expense, { kinds: [composition] }).start(input);

describe('complete and fail', () => {
  it('take the task steps and handler maps, each with what one task reports (a map: one item)', () => {
    const h = started();
    expect(h.complete('submit', { id: 'E-10' })).toBe(true);
    h.signal('approve', { decision: 'approve', by: 'ana' });
    expect(h.complete('pay', { paidBy: 'ana' })).toBe(true);
    expect(h.complete('prices', { cents: 1 }, { item: 0 })).toBe(true);
    expect(h.output('prices')).toEqual([{ cents: 1 }]);
    expectTypeOf(h.complete<'pay'>)
      .parameter(1)
      .toEqualTypeOf<{ paidBy: string } | undefined>();
    expectTypeOf(h.complete<'prices'>)
      .parameter(1)
      .toEqualTypeOf<{ cents: number } | undefined>();
  });

  it('refuse a human, wait or child step id, naming it, and a wrong output', () => {
    const h = started();
    h.complete('submit', { id: 'E-10' });
    // @ts-expect-error Argument of type '"approve"' is not assignable to parameter of type '"submit" | "pay" | "prices" | "first"'
    expect(() => h.complete('approve', { decision: 'approve', by: 'ana' })).toThrow(
      'no run task in flight for step "approve"',
    );
    // @ts-expect-error "noted" waits for a signal: it runs no task
    expect(() => h.fail('noted', 'boom')).toThrow('no run task in flight for step "noted"');
    // @ts-expect-error no step "sbumit"
    expect(() => h.complete('sbumit')).toThrow('no run task in flight');
    h.signal('approve', { decision: 'approve', by: 'ana' });
    h.complete('pay', { paidBy: 'ana' });
    h.complete('prices', { cents: 1 }, { item: 0 });
    // A child's end reports for its step (here the test's: no `workflows` given).
    // @ts-expect-error "first" starts a workflow: its child's end reports for it
    expect(() => h.complete('first', { picked: 'ana' })).toThrow("its child's end reports for it");
  });

  it('refuse an output of the wrong type', () => {
    const typeOnly = (h: ReturnType<typeof started>) => {
      // @ts-expect-error the output of pay is { paidBy: string }
      h.complete('pay', { paidBy: 1 });
      // @ts-expect-error one item's output of prices is { cents: number }
      h.complete('prices', { cost: 1 }, { item: 0 });
    };
    void typeOnly;
  });

  it('compensate, dispatched and requeue take the steps that dispatch tasks (child steps too)', () => {
    const h = started();
    expect(h.dispatched('submit')).toHaveLength(1);
    expect(h.dispatched('first')).toEqual([]);
    expectTypeOf(h.dispatched()[0]!.step).toEqualTypeOf<'submit' | 'pay' | 'prices' | 'first'>();
    // @ts-expect-error "approve" runs no task
    expect(h.dispatched('approve')).toEqual([]);
    // @ts-expect-error "approve" runs no task
    expect(() => h.compensate('approve')).toThrow('no compensate task in flight for step "approve"');
    h.fail('submit', { message: 'down', retryable: false });
    expect(h.status).toBe('failed');
    expectTypeOf(h.requeue).parameter(0).toEqualTypeOf<
      | {
          step?: 'submit' | 'pay' | 'prices' | 'first' | undefined;
          inputPatch?: { amount?: number; lines?: Array<{ sku: string }> } | undefined;
        }
      | undefined
    >();
    // @ts-expect-error "approve" runs no task
    h.requeue({ step: 'approve' });
    // @ts-expect-error the patch is of the declared input: amount is a number
    expect(() => h.requeue({ inputPatch: { amount: 'ten' } })).toThrow('inputPatch does not match');
  });
});

describe('signal and start', () => {
  it('a decision payload the typed client refuses is refused by the harness', () => {
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [expense, line],
      kinds: [composition],
      execute: false,
    });
    const client = runner.client(expense);
    const h = started();
    // The same payload type on both sides.
    expectTypeOf(h.signal<'approve'>)
      .parameter(1)
      .toEqualTypeOf<Parameters<typeof client.signal<'approve'>>[2]>();
    // Only compiled: each would be refused at run time too.
    const typeOnly = () => {
      // @ts-expect-error Type '"aprove"' is not assignable to type '"approve" | "reject"'
      h.signal('approve', { decision: 'aprove', by: 'ana' });
      // @ts-expect-error by is a string
      h.signal('approve', { decision: 'approve', by: 7 });
      // @ts-expect-error a declared payload is required, as the client asks
      h.signal('note');
      // @ts-expect-error not a declared signal
      h.signal('nope', {});
    };
    void typeOnly;
    expect(() => h.signal('approve', { decision: 'approve', by: 7 as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT' }),
    );
  });

  it('start takes the declared input', () => {
    const typeOnly = () => {
      // @ts-expect-error the declared input is required
      createHarness(expense).start();
      // @ts-expect-error amount is a number
      createHarness(expense).start({ amount: 'ten', lines: [] });
    };
    void typeOnly;
    expectTypeOf(createHarness(expense).start).parameter(0).toEqualTypeOf<{
      amount: number;
      lines: Array<{ sku: string }>;
    }>();
    expect(() => createHarness(expense).start({ amount: 'ten' } as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT' }),
    );
  });

  it('awaitingSignal names the steps and signals of the definition', () => {
    const h = started();
    h.complete('submit', { id: 'E-10' });
    const [w] = h.awaitingSignal();
    expect(w).toEqual({ step: 'approve', signal: 'approve' });
    expectTypeOf(w!.step).toEqualTypeOf<'submit' | 'approve' | 'pay' | 'prices' | 'first' | 'noted'>();
    expectTypeOf(w!.signal).toEqualTypeOf<'approve' | 'note'>();
  });

  it('a human step without a declared schema takes any decision', () => {
    const plain = workflow('plain', 1).human('ok').build();
    const h = createHarness(plain).start();
    expectTypeOf(h.output('ok')).toEqualTypeOf<HumanDecision | undefined>();
    const typeOnly = () => {
      // @ts-expect-error Type '"maybe"' is not assignable to type '"approve" | "reject"'
      h.signal('ok', { decision: 'maybe' });
    };
    void typeOnly;
    expect(() => h.signal('ok', { decision: 'maybe' } as never)).toThrow('needs { decision');
    h.signal('ok', { approved: true });
    expect(h.status).toBe('completed');
  });
});

describe('an untyped (JSON) definition', () => {
  it('keeps taking any string and any data', () => {
    const json = defineWorkflow({
      name: 'j',
      version: 1,
      start: 'a',
      steps: { a: { kind: 'task', handler: 'h', next: 'b' }, b: { kind: 'wait', signal: 'go' } },
    });
    const h = createHarness(json).start();
    expect(h.complete('a', { n: 1 })).toBe(true);
    expect(h.dispatched('anything')).toEqual([]);
    expect(h.signal('go')).toBe(true);
    expect(h.status).toBe('completed');
    expectTypeOf(h.complete<string>)
      .parameter(0)
      .toEqualTypeOf<string>();
    expectTypeOf(h.awaitingSignal()).toEqualTypeOf<Array<{ step: string; signal: string }>>();
    expectTypeOf(h.requeue)
      .parameter(0)
      .toEqualTypeOf<
        { step?: string | undefined; inputPatch?: Record<string, unknown> | undefined } | undefined
      >();
    expectTypeOf(createHarness(json).start).parameter(0).toEqualTypeOf<unknown>();
  });
});

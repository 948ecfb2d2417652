import {
  composition,
  createHarness,
  defineWorkflow,
  type TypedSnapshot,
  type WorkflowHarness,
  workflow,
} from '@stepfold/engine';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { type Line, line, lineHandlers } from './line-child.js';

// The harness's reads typed by its definition, as a runner client's are: each @ts-expect-error line
// is a mistake tsc must see (`node scripts/typecheck-tests.mjs`); vitest runs the harness for real.

const handlers = {
  ...lineHandlers,
  pay: async () => ({ captureId: 'C-1' }),
};
const order = workflow('order', 1)
  .handlers<typeof handlers>()
  .input<{ lines: Line[]; first: Line }>()
  .output<{ captureId: string }>()
  .child('first', { workflow: line, input: 'input.first' })
  .map('lines', { items: 'input.lines', workflow: line })
  .map('prices', { items: 'input.lines', handler: 'pick' })
  .task('payment', { handler: 'pay' })
  .build();

const start = () =>
  createHarness(order, { kinds: [composition], workflows: [line], id: 'o-1' }).start({
    lines: [{ sku: 'A' }, { sku: 'B' }],
    first: { sku: 'F' },
  });

describe('harness reads of a typed definition', () => {
  it('snapshot is the typed snapshot: its steps keyed by step id, with their outputs', async () => {
    const h = start();
    await h.run(handlers);
    expectTypeOf(h.snapshot).toEqualTypeOf<TypedSnapshot<typeof order>>();
    // Keys, not an index signature: `steps.payment` compiles with noPropertyAccessFromIndexSignature.
    expectTypeOf<keyof typeof h.snapshot.steps>().toEqualTypeOf<'first' | 'lines' | 'prices' | 'payment'>();
    expectTypeOf(h.snapshot.steps.payment?.output?.captureId).toEqualTypeOf<string | undefined>();
    expectTypeOf(h.snapshot.input.first.sku).toEqualTypeOf<string>();
    expectTypeOf(h.snapshot.output).toEqualTypeOf<{ captureId: string } | undefined>();
    expect(h.snapshot.steps.payment?.output?.captureId).toBe('C-1');
    expect(h.snapshot.steps.payment?.attempt).toBe(1);
    // @ts-expect-error no step "paymnet"
    expect(h.snapshot.steps.paymnet).toBeUndefined();
  });

  it("output takes the definition's step ids and returns that step's output", async () => {
    const h = start();
    await h.run(handlers);
    expectTypeOf(h.output('payment')).toEqualTypeOf<{ captureId: string } | undefined>();
    expectTypeOf(h.output('first')).toEqualTypeOf<{ picked: string } | undefined>();
    expectTypeOf(h.output('prices')).toEqualTypeOf<Array<{ picked: string } | null> | undefined>();
    expect(h.output('payment')?.captureId).toBe('C-1');
    expect(h.output('prices')).toEqual([{ picked: 'A' }, { picked: 'B' }]);
    // @ts-expect-error no step "paymnt"
    expect(h.output('paymnt')).toBeUndefined();
  });

  it('child takes the steps that start workflows, and its harness is typed by the child definition', async () => {
    const h = start();
    await h.run(handlers);
    expectTypeOf(h.child('first')).toEqualTypeOf<WorkflowHarness<typeof line>>();
    expectTypeOf(h.child('lines', 1).output('pick')).toEqualTypeOf<{ picked: string } | undefined>();
    expect(h.child('lines', 1).output('pick')?.picked).toBe('B');
    expect(h.child('first').snapshot.input.sku).toBe('F');
    // An instance id still reaches a child (untyped: which definition it runs is not known).
    expect(h.child('o-1/1/first/1')).toBe(h.child('first'));
    expectTypeOf(h.child('o-1/1/first/1')).toEqualTypeOf<WorkflowHarness>();
    // Or typed by the definition given.
    expectTypeOf(h.child<typeof line>('o-1/1/lines/1/0')).toEqualTypeOf<WorkflowHarness<typeof line>>();
    // @ts-expect-error "payment" starts no workflow
    expect(() => h.child('payment')).toThrow('no child "payment"');
    // @ts-expect-error "prices" maps a handler, not a workflow
    expect(() => h.child('prices', 0)).toThrow('no child "prices" item 0');
  });

  it('a child step whose workflow is not among `workflows` gives an untyped harness', () => {
    // Only compiled: an unstarted harness has no children.
    const typeOnly = () =>
      expectTypeOf(
        createHarness(order, { kinds: [composition] }).child('first'),
      ).toEqualTypeOf<WorkflowHarness>();
    void typeOnly;
  });

  it('a typed harness, typed reads and all, still passes where a WorkflowHarness is asked for', () => {
    expectTypeOf<WorkflowHarness<typeof order, readonly [typeof line]>>().toExtend<WorkflowHarness>();
  });
});

describe('harness reads of an untyped (JSON) definition', () => {
  it('take any string and read unknown', () => {
    const json = defineWorkflow({
      name: 'j',
      version: 1,
      start: 'a',
      steps: { a: { kind: 'task', handler: 'h' } },
    });
    const h = createHarness(json).start();
    h.complete('a', { n: 1 });
    expectTypeOf(h.output('a')).toEqualTypeOf<unknown>();
    expect(h.output('a')).toEqual({ n: 1 });
    expect(h.output('anything')).toBeUndefined();
    expect(h.snapshot.steps['a']?.output).toEqual({ n: 1 });
    expectTypeOf(h.snapshot.steps['a']?.output).toEqualTypeOf<unknown>();
    expectTypeOf(h.child).parameter(0).toEqualTypeOf<string>();
    expect(() => h.child('anything')).toThrow('no child "anything"');
  });
});

import {
  cancelRefusal,
  createHarness,
  createMemoryStore,
  createRunner,
  decisionSignal,
  declaredSignals,
  defineWorkflow,
  handlerNames,
  pendingDecisions,
  type,
  workflow,
} from '@stepfold/engine';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as z from 'zod/mini';

const expense = workflow('expense', 1)
  .input(type<{ amount: number }>())
  .signal('receipt', z.object({ url: z.string() }))
  .task('reserve', { handler: 'reserveBudget', compensate: 'releaseBudget' })
  .wait('upload', { signal: 'receipt' })
  .human('approve', { signal: 'decision' })
  .task('pay', { handler: 'pay', pivot: true })
  .human('audit')
  .build();

const handlers = {
  reserveBudget: () => ({ ok: true }),
  releaseBudget: () => null,
  pay: () => ({ paid: true }),
};

describe('what tools read off a definition', () => {
  it('handler names: tasks and compensations, sorted, once each', () => {
    expect(handlerNames(expense)).toEqual(['pay', 'releaseBudget', 'reserveBudget']);
  });

  it('declared signals: every name a step listens for, the steps, decisions marked, schemas kept', async () => {
    const signals = declaredSignals(expense);
    expect(signals.map(({ name, steps, decision }) => ({ name, steps, decision }))).toEqual([
      { name: 'audit', steps: ['audit'], decision: true },
      { name: 'decision', steps: ['approve'], decision: true },
      { name: 'receipt', steps: ['upload'], decision: false },
    ]);
    const receipt = signals.find((s) => s.name === 'receipt')!;
    const checked = await receipt.schema!['~standard'].validate({ url: 5 });
    expect(checked.issues?.length).toBeGreaterThan(0);
    expect(signals.find((s) => s.name === 'audit')!.schema).toBeUndefined();
  });

  it('a JSON definition has the same names, and no schemas', () => {
    const json = defineWorkflow(JSON.parse(JSON.stringify(expense)));
    expect(handlerNames(json)).toEqual(handlerNames(expense));
    expect(declaredSignals(json).every((s) => s.schema === undefined)).toBe(true);
  });

  it("the human step's signal: its `signal`, else its id; undefined for any other step", () => {
    expect(decisionSignal(expense, 'approve')).toBe('decision');
    expect(decisionSignal(expense, 'audit')).toBe('audit');
    expect(decisionSignal(expense, 'pay')).toBeUndefined();
    expect(decisionSignal(expense, 'nope')).toBeUndefined();
  });
});

describe('what tools read off an instance', () => {
  it('pending decisions and whether cancel is offered, before and after the pivot', () => {
    const h = createHarness(expense).start({ amount: 10 });
    h.complete('reserve', { ok: true });
    expect(pendingDecisions(expense, h.snapshot)).toEqual([]);
    expect(cancelRefusal(expense, h.snapshot)).toBeUndefined();
    h.signal('receipt', { url: 'https://r' });
    expect(pendingDecisions(expense, h.snapshot)).toEqual([{ step: 'approve', signal: 'decision' }]);
    h.signal('decision', { decision: 'approve' });
    h.complete('pay', { paid: true });
    expect(pendingDecisions(expense, h.snapshot)).toEqual([{ step: 'audit', signal: 'audit' }]);
    const refusal = cancelRefusal(expense, h.snapshot);
    expect(refusal?.code).toBe('PAST_PIVOT');
    expect(refusal?.message).toContain('pay');
    h.signal('audit', { decision: 'approve' });
    expect(h.status).toBe('completed');
    expect(pendingDecisions(expense, h.snapshot)).toEqual([]);
    expect(cancelRefusal(expense, h.snapshot)?.code).toBe('TERMINAL');
  });

  it('cancelRefusal agrees with the runner: refused past the pivot, accepted before it', async () => {
    const store = createMemoryStore();
    const runner = createRunner({ store, workflows: [expense], handlers });
    await runner.start('expense', 'e-1', { amount: 5 });
    await runner.signal('e-1', 'receipt', { url: 'u' });
    await runner.signal('e-1', 'decision', { decision: 'approve' });
    const past = await runner.get('e-1');
    expect(cancelRefusal(expense, past!)?.code).toBe('PAST_PIVOT');
    await expect(runner.cancel('e-1')).rejects.toMatchObject({ code: 'PAST_PIVOT' });
    await runner.start('expense', 'e-2', { amount: 5 });
    expect(cancelRefusal(expense, (await runner.get('e-2'))!)).toBeUndefined();
    expect((await runner.cancel('e-2')).status).toBe('cancelled');
  });
});

describe('createRunner({ execute: false }) needs no handlers', () => {
  it('starts and signals with no handler map; a worker runner with handlers runs the tasks', async () => {
    const store = createMemoryStore();
    const api = createRunner({ store, workflows: [expense], execute: false });
    const started = await api.start('expense', 'e-3', { amount: 1 });
    expect(started.tasks['reserve']?.handler).toBe('reserveBudget');
    const worker = createRunner({ store, workflows: [expense], handlers });
    expect((await worker.tick('e-3')).steps['reserve']?.status).toBe('completed');
  });

  it('type level: handlers optional only when execute is false', () => {
    const store = createMemoryStore();
    expectTypeOf(createRunner({ store, workflows: [expense], execute: false })).not.toBeNever();
    // Compiled, never called: each would throw UNKNOWN_HANDLER at run time too.
    const unchecked = () => {
      // @ts-expect-error a runner that executes must be given its handlers
      createRunner({ store, workflows: [expense] });
      // @ts-expect-error nor may a boolean that could be true leave them out
      createRunner({ store, workflows: [expense], execute: Math.random() > 2 });
    };
    expect(unchecked).toThrow(expect.objectContaining({ code: 'UNKNOWN_HANDLER' }));
  });

  it('a runner that executes still refuses a missing handler at run time (UNKNOWN_HANDLER)', () => {
    const store = createMemoryStore();
    const json = defineWorkflow(JSON.parse(JSON.stringify(expense)));
    expect(() => createRunner({ store, workflows: [json], handlers: { pay: () => null } })).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_HANDLER' }),
    );
    expect(() => createRunner({ store, workflows: [json], execute: false })).not.toThrow();
  });
});

import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  createHarness,
  createMemoryStore,
  createRunner,
  type HandlerContext,
  TaskError,
  type,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';

const order = workflow('order', 1)
  .input(type<{ sku: string }>())
  .task('reserve', { handler: 'reserveStock', compensate: 'releaseStock', input: { sku: 'input.sku' } })
  .task('charge', { handler: 'chargeCard', retry: { maxAttempts: 3, initialMs: 1000 } })
  .wait('ship', { signal: 'shipped' })
  .build();

const handlers = {
  reserveStock: async ({ input }: HandlerContext<{ sku: string }>) => ({ reservation: `R-${input.sku}` }),
  releaseStock: async () => null,
  chargeCard: async ({ attempt, outputs }: HandlerContext) => {
    await new Promise((r) => setTimeout(r, 1));
    if (attempt < 2) throw new TaskError('gateway timeout', { code: 'GATEWAY' });
    return { paymentId: `P-${(outputs.reserve as { reservation: string }).reservation}`, at: new Date(0) };
  },
};

describe("harness timers: 'until-signal' stops before a human deadline", () => {
  const expense = workflow('expense', 1)
    .task('submit', { handler: 'submit', retry: { maxAttempts: 2, initialMs: 1000 } })
    .human('approve', { timeoutMs: 48 * 3_600_000, onTimeout: 'expired' })
    .task('pay', { handler: 'pay', end: true })
    .fail('expired', { error: { message: 'not approved in time' } })
    .build();
  let tries = 0;
  const run = {
    submit: async () => {
      if (++tries % 2 === 1) throw new TaskError('flaky');
      return { id: 'E-1' };
    },
    pay: async () => ({ paid: true }),
  };

  it("'advance' fires the 48 h timeout before any decision (what the option avoids)", async () => {
    const h = createHarness(expense).start();
    await h.run(run, { timers: 'advance' });
    expect(h.status).toBe('failed');
    expect(h.now).toBeGreaterThanOrEqual(48 * 3_600_000);
  });

  it("'until-signal' advances through retries, then stops at the human step with its deadline ahead", async () => {
    const h = createHarness(expense).start();
    await h.run(run, { timers: 'until-signal' });
    expect(h.status).toBe('waiting');
    expect(h.now).toBeGreaterThanOrEqual(1000); // the retry back-off was advanced (jittered)...
    expect(h.now).toBeLessThan(60_000); // ...but not the deadline
    expect(h.awaitingSignal()).toEqual([{ step: 'approve', signal: 'approve' }]);
    expect(h.snapshot.steps.approve?.status).toBe('active');
    h.signal('approve', { decision: 'approve' });
    await h.run(run, { timers: 'until-signal' });
    expect(h.status).toBe('completed');
    expect(h.awaitingSignal()).toEqual([]);
  });
});

describe('harness with the real handlers', () => {
  it('runs async handlers with the full context, advancing the fake clock through retries', async () => {
    const h = createHarness(order).start({ sku: 'BOOK' });
    await h.run(handlers, { timers: 'advance' });
    expect(h.status).toBe('waiting'); // at the wait: nothing left to run or fire
    expect(h.output('charge')).toEqual({ paymentId: 'P-R-BOOK', at: '1970-01-01T00:00:00.000Z' });
    h.signal('shipped', { tracking: 'T' });
    expect(h.status).toBe('completed');
    expect(h.replayed()).toEqual(h.snapshot);
  });

  it('ends in the same state as the runner with the same handlers', async () => {
    let now = 0;
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [order],
      handlers,
      clock: () => now,
    });
    let s = await runner.start('order', 'test-1', { sku: 'BOOK' });
    while (s.wakeAt !== null) {
      now = s.wakeAt;
      await runner.processDue(now);
      s = (await runner.get('test-1'))!;
    }
    const h = createHarness(order).start({ sku: 'BOOK' });
    await h.run(handlers, { timers: 'advance' });
    expect(h.snapshot.steps.charge).toMatchObject({
      status: s.steps.charge?.status,
      attempt: s.steps.charge?.attempt,
      output: s.steps.charge?.output,
    });
    expect(h.status).toBe(s.status);
  });

  it('works under node:test too (the testing entry imports no test framework)', () => {
    const file = fileURLToPath(new URL('./node-test/harness.node.mjs', import.meta.url));
    const out = execFileSync(process.execPath, ['--test', '--test-reporter=tap', file], { encoding: 'utf8' });
    expect(out).toMatch(/# pass 2/);
    expect(out).toMatch(/# fail 0/);
  });
});

describe('the harness checks declared schemas as the runner does', () => {
  const checked = workflow('checked', 1)
    .input(z.object({ sku: z.string().min(1), qty: z.number().positive() }))
    .signal('approve', z.object({ decision: z.enum(['approve', 'reject']), by: z.string() }))
    .signal('shipped', z.object({ tracking: z.string() }))
    .task('reserve', { handler: 'reserve' })
    .human('approve')
    .wait('ship', { signal: 'shipped' })
    .build();
  const runner = createRunner({
    store: createMemoryStore(),
    workflows: [checked],
    handlers: { reserve: async () => ({ ok: true }) },
  });
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => expect.unreachable('accepted'),
      (e: unknown) => e,
    );
  const thrown = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return e;
    }
    return expect.unreachable('accepted');
  };
  const same = (e: unknown) => {
    const { code, message, issues } = e as { code: string; message: string; issues: unknown };
    return { code, message, issues };
  };

  it('a start input its schema refuses is INVALID_INPUT, and nothing starts', async () => {
    const bad = { sku: '', qty: 0 };
    const byRunner = await refusal(runner.start('checked', 'c-1', bad));
    const h = createHarness(checked);
    const byHarness = thrown(() => h.start(bad));
    expect(same(byRunner)).toMatchObject({ code: 'INVALID_INPUT' });
    expect(same(byHarness)).toEqual(same(byRunner));
    expect(() => h.snapshot).toThrow(/start the workflow first/);
    expect(h.events).toEqual([]);
  });

  it("a human decision or a signal's data its schema refuses is INVALID_INPUT, and nothing applies", async () => {
    await runner.start('checked', 'c-2', { sku: 'A', qty: 1 });
    await runner.idle();
    const h = createHarness(checked).start({ sku: 'A', qty: 1 });
    h.complete('reserve', { ok: true });
    const decision = { decision: 'approve', by: 7 } as never;
    const byRunner = await refusal(runner.signal('c-2', 'approve', decision));
    const before = h.snapshot;
    const byHarness = thrown(() => h.signal('approve', decision));
    expect(same(byRunner)).toMatchObject({ code: 'INVALID_INPUT', issues: [{ path: 'signals.approve.by' }] });
    expect(same(byHarness)).toEqual(same(byRunner));
    expect(h.snapshot).toBe(before);
    h.signal('approve', { decision: 'approve', by: 'ana' });
    expect(same(thrown(() => h.signal('shipped', { tracking: 7 } as never)))).toEqual(
      same(await refusal(runner.signal('c-2', 'shipped', { tracking: 7 } as never))),
    );
    expect(h.snapshot.steps.ship?.status).toBe('active');
    h.signal('shipped', { tracking: 'T-1' });
    expect(h.status).toBe('completed');
  });
});

import {
  createMemoryStore,
  createRunner,
  defineHooks,
  type HandlerContext,
  type Snapshot,
  type Store,
  TaskError,
  VersionConflictError,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
// The worker's side of a runner is internal: tests reach it as the worker does, in the built package.
import { runnerPort } from '../dist/runner/port.js';
import { orderWorkflow } from './fixtures.js';

function handlersRecording(
  calls: HandlerContext[],
  overrides: Record<string, (c: HandlerContext) => unknown> = {},
) {
  const rec = (name: string) => (ctx: HandlerContext) => {
    calls.push(ctx);
    return overrides[name] ? overrides[name](ctx) : { from: name };
  };
  return {
    reserveStock: rec('reserveStock'),
    releaseStock: rec('releaseStock'),
    chargeCard: rec('chargeCard'),
    refund: rec('refund'),
    sendEmail: rec('sendEmail'),
  };
}

describe('runner', () => {
  it('a call that finishes the instance returns what it wrote without reading it back; otherwise it reads', async () => {
    const inner = createMemoryStore();
    let loads = 0;
    const store: Store = {
      ...inner,
      load: (id) => {
        loads++;
        return inner.load(id);
      },
    };
    const runner = createRunner({
      store,
      workflows: [orderWorkflow],
      handlers: handlersRecording([]),
      clock: () => 1000,
    });
    const done = await runner.start('order', 'o-read', { amount: 1 });
    expect(loads).toBe(0);
    expect(done).toEqual(await inner.load('o-read'));
    const waiting = createRunner({
      store,
      workflows: [orderWorkflow],
      handlers: handlersRecording([], {
        chargeCard: () => {
          throw new TaskError('later');
        },
      }),
      clock: () => 1000,
    });
    const before = loads;
    const retrying = await waiting.start('order', 'o-read-3', { amount: 1 });
    expect(retrying.status).not.toMatch(/completed|failed|cancelled|aborted/);
    expect(loads).toBe(before + 1); // not finished: the stored state is read back
    expect(retrying).toEqual(await inner.load('o-read-3'));
  });

  it('runs a workflow to completion, giving handlers input, outputs, attempt and idempotency key', async () => {
    const calls: HandlerContext[] = [];
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [orderWorkflow],
      handlers: handlersRecording(calls),
      clock: () => 1000,
    });
    const s = await runner.start('order', 'o-1', { amount: 9 });
    expect(s.status).toBe('completed');
    expect(s.version).toBe(4); // one write per transition: start, reserve, charge, email
    expect(calls.map((c) => c.step)).toEqual(['reserve', 'charge', 'email']);
    const charge = calls[1]!;
    expect(charge.input).toEqual({ amount: 9 });
    expect(charge.workflowInput).toEqual({ amount: 9 });
    expect(charge.outputs).toEqual({ reserve: { from: 'reserveStock' } });
    expect(charge.attempt).toBe(1);
    expect(charge.idempotencyKey).toBe('o-1/1/charge/1');
    expect(charge.signal).toBeInstanceOf(AbortSignal);
    expect(s.output).toEqual({ from: 'sendEmail' });
  });

  it('retries on a simulated clock via processDue and keeps the idempotency key', async () => {
    let now = 0;
    const calls: HandlerContext[] = [];
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [orderWorkflow],
      clock: () => now,
      handlers: handlersRecording(calls, {
        chargeCard: (c) => {
          if (c.attempt < 3) throw new TaskError('declined', { code: 'DECLINED' });
          return { ok: true };
        },
      }),
    });
    let s = await runner.start('order', 'o-2', { amount: 1 });
    expect(s.status).toBe('waiting');
    expect(await runner.processDue(now)).toEqual([]);
    while (s.status === 'waiting') {
      now = s.wakeAt!;
      expect(await runner.processDue(now)).toEqual(['o-2']);
      s = (await runner.get('o-2'))!;
    }
    expect(s.status).toBe('completed');
    const charges = calls.filter((c) => c.step === 'charge');
    expect(charges.map((c) => c.attempt)).toEqual([1, 2, 3]);
    expect(new Set(charges.map((c) => c.idempotencyKey))).toEqual(new Set(['o-2/1/charge/1']));
  });

  it('a version conflict reloads and re-applies the event', async () => {
    const inner = createMemoryStore();
    let conflicts = 0;
    let injected = false;
    // A store whose first save of version 3 loses to a concurrent writer (which bumps nothing).
    const store: Store = {
      ...inner,
      async save(s: Snapshot, expected: number) {
        if (s.version === 3 && !injected) {
          injected = true;
          conflicts++;
          throw new VersionConflictError(s.id, expected, expected + 1);
        }
        return inner.save(s, expected);
      },
    };
    const runner = createRunner({
      store,
      workflows: [orderWorkflow],
      handlers: handlersRecording([]),
      clock: () => 5,
    });
    const s = await runner.start('order', 'o-3', { amount: 1 });
    expect(conflicts).toBe(1);
    expect(s.status).toBe('completed');
    expect(s.version).toBe(4);
  });

  it('a killed runner: once its lease lapses (long before the deadline) another runner re-dispatches with the same key and the next attempt', async () => {
    let now = 0;
    const store = createMemoryStore();
    const calls: HandlerContext[] = [];
    // Runner A wins the write that dispatches reserve, then "dies" (its executor never runs the job).
    const a = createRunner({
      store,
      workflows: [orderWorkflow],
      handlers: handlersRecording([]),
      clock: () => now,
    });
    runnerPort(a).executeWith(() => {});
    const s1 = await a.start('order', 'o-4', { amount: 1 }, { wait: 'write' });
    const lost = s1.tasks.reserve!;
    const b = createRunner({
      store,
      workflows: [orderWorkflow],
      handlers: handlersRecording(calls),
      clock: () => now,
    });
    // The store indexes a lease's end rounded up to the second.
    expect(await b.processDue(lost.leaseUntil! - 1)).toEqual([]);
    expect(lost.leaseUntil! + 1_000).toBeLessThan(lost.deadline);
    now = lost.leaseUntil! + 1_000;
    await b.processDue(now);
    const s = (await b.get('o-4'))!;
    expect(s.status).toBe('completed');
    expect(s.log.find((e) => e.type === 'task.failed')?.detail).toMatch(/^LEASE_LOST: /);
    expect(calls[0]).toMatchObject({ step: 'reserve', attempt: 2, idempotencyKey: lost.idempotencyKey });
  });

  it('execute: false hands tasks off: queued and due at once; a worker tick takes them, same attempt and key', async () => {
    let now = 1000;
    const store = createMemoryStore();
    const calls: HandlerContext[] = [];
    const api = createRunner({
      store,
      workflows: [orderWorkflow],
      handlers: handlersRecording([]),
      clock: () => now,
      execute: false,
    });
    const s1 = await api.start('order', 'o-h', { amount: 1 });
    expect(s1.tasks.reserve).toMatchObject({ queued: true, attempt: 1, deadline: 1000 });
    expect(s1.wakeAt).toBe(1000);
    // The handing-off runner's own tick leaves it queued.
    now = 1005;
    expect((await api.tick('o-h')).version).toBe(s1.version);
    const worker = createRunner({
      store,
      workflows: [orderWorkflow],
      handlers: handlersRecording(calls),
      clock: () => now,
    });
    expect(await worker.processDue(now)).toEqual(['o-h']);
    const s = (await worker.get('o-h'))!;
    expect(s.status).toBe('completed');
    expect(calls[0]).toMatchObject({
      step: 'reserve',
      attempt: 1,
      idempotencyKey: s1.tasks.reserve!.idempotencyKey,
    });
    expect(s.log.some((e) => e.type === 'task.taken' && e.step === 'reserve')).toBe(true);
  });

  it('execute: false answers with its own write: a signal costs one load and one save, no read back', async () => {
    const base = createMemoryStore();
    const calls: string[] = [];
    const store = Object.create(base) as Store;
    for (const m of ['load', 'save', 'create'] as const) {
      const real = (base[m] as (...a: unknown[]) => Promise<unknown>).bind(base);
      Object.defineProperty(store, m, {
        value: (...a: unknown[]) => {
          calls.push(m);
          return real(...a);
        },
      });
    }
    const waits = workflow('waits', 1)
      .wait('go', { signal: 'go' })
      .task('after', { handler: 'reserveStock' })
      .build();
    const api = createRunner({
      store,
      workflows: [waits],
      handlers: { reserveStock: () => null },
      execute: false,
    });
    const started = await api.start('waits', 'w-1');
    expect(calls).toEqual(['create']);
    calls.length = 0;
    const s = await api.signal('w-1', 'go');
    expect(calls).toEqual(['load', 'save']);
    expect(s.version).toBe(started.version + 1);
    expect(s.tasks.after).toMatchObject({ queued: true, attempt: 1 });
    expect(await store.load('w-1')).toEqual(s);
  });

  it('hooks observe transitions and a throwing hook changes nothing', async () => {
    const seen: string[] = [];
    const hookErrors: string[] = [];
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [orderWorkflow],
      handlers: handlersRecording([]),
      hooks: defineHooks({
        onWorkflowStarted: () => {
          seen.push('started');
          throw new Error('hook bug');
        },
        onStepCompleted: (stepId) => {
          seen.push(`done:${stepId}`);
        },
        onWorkflowCompleted: async () => {
          seen.push('completed');
          throw new Error('async hook bug');
        },
        onHookError: (_e, hook) => hookErrors.push(hook),
      }),
    });
    const s = await runner.start('order', 'o-5', { amount: 1 });
    await new Promise((r) => setTimeout(r, 0));
    expect(s.status).toBe('completed');
    expect(seen).toEqual(['started', 'done:reserve', 'done:charge', 'done:email', 'completed']);
    expect(hookErrors).toEqual(['onWorkflowStarted', 'onWorkflowCompleted']);
  });

  it('refuses bare hooks: defineHooks brings the code that calls them', () => {
    const bare = () =>
      createRunner({
        store: createMemoryStore(),
        workflows: [orderWorkflow],
        handlers: handlersRecording([]),
        hooks: { onTransition: () => {} } as never,
      });
    expect(bare).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTIONS',
        issues: [expect.objectContaining({ path: 'hooks' })],
      }),
    );
  });

  it('hooks see every transition of a write, past limits.log, and both events of signalWithStart', async () => {
    const entity = workflow('quiet', 1, { limits: { log: 0 } })
      .collect('gather', { signal: 'event', maxItems: 2 })
      .task('process', { handler: 'process' })
      .build();
    const seen: string[] = [];
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [entity],
      handlers: { process: () => null },
      hooks: defineHooks({
        onTransition: (e) => {
          seen.push(`${e.v}:${e.type}:${e.step ?? ''}`);
        },
      }),
    });
    await runner.signal('q-1', 'event', 1, { startIfMissing: { workflow: 'quiet' } });
    const s = await runner.signal('q-1', 'event', 2);
    expect(s.log).toEqual([]);
    expect(seen).toEqual([
      '1:workflow.started:',
      '1:step.started:gather',
      '2:signal.received:gather',
      '3:signal.received:gather',
      '3:step.started:process',
      '3:task.dispatched:process',
      '4:step.completed:process',
      '4:workflow.completed:',
    ]);
  });

  it('cancel fires the AbortSignal of a running handler; its late success is compensated', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let aborted = false;
    const compensated: string[] = [];
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [orderWorkflow],
      handlers: {
        ...handlersRecording([]),
        chargeCard: async (c) => {
          c.signal.addEventListener('abort', () => {
            aborted = true;
          });
          await gate;
          return { charged: true };
        },
        refund: () => {
          compensated.push('charge');
          return null;
        },
        releaseStock: () => {
          compensated.push('reserve');
          return null;
        },
      },
    });
    const started = runner.start('order', 'o-6', { amount: 1 });
    await new Promise((r) => setTimeout(r, 10));
    const during = await runner.cancel('o-6', 'customer asked');
    expect(aborted).toBe(true);
    void during;
    release();
    await started;
    await runner.idle();
    const s = (await runner.get('o-6'))!;
    expect(s.status).toBe('cancelled');
    expect(compensated.sort()).toEqual(['charge', 'reserve']);
  });

  it('handle() applies one message and reports the next wake time', async () => {
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [orderWorkflow],
      handlers: handlersRecording([], {
        chargeCard: () => {
          throw new Error('flaky');
        },
      }),
      clock: () => 100,
    });
    const r = await runner.handle({ type: 'start', id: 'o-7', workflow: 'order', input: { amount: 1 } });
    expect(r.snapshot.status).toBe('waiting');
    expect(r.wakeAt).toBe(r.snapshot.timers[0]!.at);
    const again = await runner.handle({ type: 'abort', id: 'o-7', reason: 'test' });
    expect(again.snapshot.status).toBe('aborted');
    expect(again.wakeAt).toBeNull();
  });
});

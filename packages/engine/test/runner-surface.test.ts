import {
  createHarness,
  createMemoryStore,
  createRunner,
  defineHooks,
  type HandlerContext,
  type LogEntry,
  type Snapshot,
  type Store,
  TaskError,
  type,
  workflow,
} from '@stepfold/engine';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as z from 'zod/mini';
// The worker's side of a runner is internal: tests reach it as the worker does, in the built package.
import { runnerPort } from '../dist/runner/port.js';

const greet = workflow('greet', 1)
  .input(type<{ name: string }>())
  .task('hello', { handler: 'hello' })
  .human('approve')
  .build();

describe('runner: one handle() behind every method', () => {
  it('a start message carries reuseFinished, a signal message carries startIfMissing', async () => {
    const store = createMemoryStore();
    const runner = createRunner({
      store,
      workflows: [greet],
      handlers: { hello: ({ input }) => `hi ${input.name}` },
    });
    const first = await runner.handle({
      type: 'signal',
      id: 'g-1',
      name: 'approve',
      payload: { decision: 'approve' },
      startIfMissing: { workflow: 'greet', input: { name: 'Ada' } },
    });
    expect(first.snapshot.status).toBe('completed');
    expect(first.snapshot.output).toEqual({ decision: 'approve' });
    await expect(
      runner.handle({ type: 'start', id: 'g-1', workflow: 'greet', input: { name: 'Bo' } }),
    ).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
    const again = await runner.handle({
      type: 'start',
      id: 'g-1',
      workflow: 'greet',
      input: { name: 'Bo' },
      reuseFinished: true,
    });
    expect(again.snapshot.status).toBe('waiting');
    expect(again.snapshot.steps.hello?.output).toBe('hi Bo');
    expect(again.snapshot.version).toBeGreaterThan(first.snapshot.version);
  });

  it("wait: 'write' resolves once the event is written; the handlers go on in the runner", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let finished = false;
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [greet],
      handlers: {
        hello: async () => {
          await gate;
          finished = true;
          return 'hi';
        },
      },
    });
    const s = await runner.start('greet', 'w-1', { name: 'Ada' }, { wait: 'write' });
    expect(s).toMatchObject({ status: 'running', version: 1 });
    expect(finished).toBe(false);
    release();
    await runner.idle();
    expect((await runner.get('w-1'))?.steps.hello?.output).toBe('hi');
    const r = await runner.handle({
      type: 'signal',
      id: 'w-1',
      name: 'approve',
      payload: { decision: 'approve' },
      wait: 'write',
    });
    expect(r.snapshot.status).toBe('completed');
  });

  it('onWritten sees every write once, in order, with the transitions the hooks see', async () => {
    const written: Array<{ version: number; types: string[] }> = [];
    const hooked: LogEntry[] = [];
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [greet],
      handlers: { hello: () => 'hi' },
      onWritten: (s, transitions) =>
        written.push({ version: s.version, types: transitions.map((t) => t.type) }),
      hooks: defineHooks({ onTransition: (e) => void hooked.push(e) }),
    });
    await runner.start('greet', 'g-2', { name: 'Ada' });
    await runner.signal('g-2', 'approve', { decision: 'approve' });
    expect(written.map((w) => w.version)).toEqual([1, 2, 3]);
    expect(written.flatMap((w) => w.types)).toEqual(hooked.map((e) => e.type));
    expect(written[2]!.types).toContain('workflow.completed');
  });

  it('a conflict raised by another copy of the engine (recognised by its brand and code) is retried', async () => {
    const inner = createMemoryStore();
    let thrown = 0;
    const store: Store = {
      ...inner,
      maxSnapshotBytes: inner.maxSnapshotBytes,
      async save(s, expected) {
        if (thrown === 0) {
          thrown++;
          // What a second copy's VersionConflictError looks like to this copy: not an instance of our class.
          throw Object.assign(new Error('conflict'), {
            [Symbol.for('stepfold.error')]: true,
            code: 'VERSION_CONFLICT',
          });
        }
        return inner.save(s, expected);
      },
    };
    const runner = createRunner({ store, workflows: [greet], handlers: { hello: () => 'hi' } });
    const s = await runner.start('greet', 'g-3', { name: 'Ada' });
    expect(thrown).toBe(1);
    expect(s.steps.hello?.status).toBe('completed');
  });

  it("a message carries no worker plumbing: a tick's `loaded` is ignored, the port is not on the runner's type", async () => {
    const store = createMemoryStore();
    const runner = createRunner({ store, workflows: [greet], handlers: { hello: () => 'hi' } });
    const s = await runner.start('greet', 'p-1', { name: 'Ada' });
    // A queue or HTTP body could carry one: it must not become the snapshot the tick starts from.
    const planted = { ...s, version: 99, status: 'completed' } as Snapshot;
    // @ts-expect-error `loaded` is the port's, not a message's
    const r = await runner.handle({ type: 'tick', id: 'p-1', loaded: planted });
    expect(r).toEqual({ snapshot: await store.load('p-1'), wakeAt: null, written: false });
    expectTypeOf(runner).not.toHaveProperty('executeWith');
    expect(Object.keys(runner)).not.toContain('executeWith');
    // The worker's way in: on the runner and on a copy of it, not on anything else.
    expect(await runnerPort({ ...runner }).tick({ id: 'p-1', loaded: s })).toMatchObject({ written: false });
    expect(() => runnerPort({} as typeof runner)).toThrow(/not a runner createRunner made/);
  });
});

describe('a thrown error is recorded the same by the runner and the harness', () => {
  const charge = workflow('charge', 1)
    .task('charge', { handler: 'charge', retry: { maxAttempts: 3 } })
    .build();

  for (const [label, error] of [
    ['a TaskError with a code', new TaskError('declined', { code: 'DECLINED', retryable: false })],
    ['a TaskError without one', new TaskError('flaky')],
    ['a plain error with its own code', Object.assign(new Error('io'), { code: 'EIO' })],
  ] as const) {
    it(label, async () => {
      const runner = createRunner({
        store: createMemoryStore(),
        workflows: [charge],
        handlers: {
          charge: () => {
            throw error;
          },
        },
      });
      const viaRunner = await runner.start('charge', 'c-1');
      const h = createHarness(charge, { id: 'c-1' }).start();
      h.runHandlers({
        charge: () => {
          throw error;
        },
      });
      expect(h.snapshot.steps.charge?.error).toEqual(viaRunner.steps.charge?.error);
      expect(h.snapshot.status).toBe(viaRunner.status);
    });
  }

  it('a non-retryable TaskError stops the retries in the harness as in the runner', () => {
    const h = createHarness(charge).start();
    h.runHandlers({
      charge: () => {
        throw new TaskError('declined', { code: 'DECLINED', retryable: false });
      },
    });
    expect(h.status).toBe('failed');
    expect(h.snapshot.steps.charge).toMatchObject({
      attempt: 1,
      error: { code: 'DECLINED', retryable: false },
    });
  });
});

describe('declared schemas are enforced at runtime', () => {
  const order = workflow('order', 1)
    .input(z.object({ sku: z.string(), qty: z.number() }))
    .signal('shipped', z.object({ tracking: z.string() }))
    .task('reserve', { handler: 'reserve', output: z.object({ reservation: z.string() }) })
    .wait('ship', { signal: 'shipped' })
    .build();

  it('a start input or a signal payload that fails its schema is INVALID_INPUT, and nothing is written', async () => {
    const store = createMemoryStore();
    const runner = createRunner({
      store,
      workflows: [order],
      handlers: { reserve: ({ input }) => ({ reservation: `R-${input.sku}` }) },
    });
    await expect(runner.start('order', 'o-1', { sku: 'A' } as never)).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      retryable: false,
      issues: [expect.objectContaining({ path: 'input.qty' })],
    });
    expect(await store.load('o-1')).toBeNull();
    const client = runner.client(order);
    const waiting = await client.start('o-1', { sku: 'A', qty: 1 });
    expect(waiting.steps.reserve?.output).toEqual({ reservation: 'R-A' });
    await expect(client.signal('o-1', 'shipped', { tracking: 7 } as never)).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    expect((await store.load('o-1'))?.version).toBe(waiting.version);
    const done = await client.signal('o-1', 'shipped', { tracking: 'T-1' });
    expect(done.status).toBe('completed');
    expectTypeOf(done.steps.ship?.output).toEqualTypeOf<{ tracking: string } | undefined>();
  });

  it('a handler output that fails its schema fails the step at once (INVALID_OUTPUT, not retried)', async () => {
    let calls = 0;
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [order],
      handlers: {
        // @ts-expect-error the declared output wants { reservation: string }
        reserve: () => {
          calls++;
          return { reservation: 42 };
        },
      },
    });
    const s = await runner.start('order', 'o-2', { sku: 'A', qty: 1 });
    expect(calls).toBe(1);
    expect(s.status).toBe('failed');
    expect(s.steps.reserve?.error).toMatchObject({ code: 'INVALID_OUTPUT', retryable: false });
  });
});

describe('the handler map and the client are typed by the definitions', () => {
  const handlers = {
    reserve: async ({ input }: HandlerContext<{ sku: string }>) => ({ reservation: `R-${input.sku}` }),
  };
  const shop = workflow('shop', 1)
    .handlers<typeof handlers>()
    .input(type<{ sku: string }>())
    .signal('paid', type<{ amount: number }>())
    .task('reserve', { handler: 'reserve' })
    .wait('pay', { signal: 'paid' })
    .build();

  it('missing and mistyped handlers (and extra ones, when strict) do not compile; the client checks names and payloads', async () => {
    const store = createMemoryStore();
    // Type-checked, never run: each is a compile error.
    const misuses = () => {
      // @ts-expect-error missing handler 'reserve'
      createRunner({ store, workflows: [shop], handlers: {} });
      createRunner({
        store,
        workflows: [shop],
        strictHandlers: true,
        // @ts-expect-error with strictHandlers, an extra handler no workflow of this runner names
        handlers: { ...handlers, refund: () => null },
      });
      const wrongInput = { reserve: (_: HandlerContext<{ id: number }>) => null };
      // @ts-expect-error a handler that wants another input than its step maps
      createRunner({ store, workflows: [shop], handlers: wrongInput });
      const wrongOutput = { reserve: async () => ({ reservation: 7 }) };
      // @ts-expect-error a handler that returns another output than the definition was built with
      createRunner({ store, workflows: [shop], handlers: wrongOutput });
    };
    void misuses;
    const runner = createRunner({ store, workflows: [shop], handlers });
    const client = runner.client(shop);
    // @ts-expect-error the start input is { sku: string }
    await client.start('s-0', { id: 1 }).catch(() => {});
    const s = await client.start('s-1', { sku: 'A' });
    expectTypeOf(s.input).toEqualTypeOf<{ sku: string }>();
    expectTypeOf(s.steps.reserve?.output).toEqualTypeOf<{ reservation: string } | undefined>();
    // @ts-expect-error 'payed' is not a signal of shop
    await client.signal('s-1', 'payed', { amount: 1 }).catch(() => {});
    // @ts-expect-error the payload of 'paid' is { amount: number }
    await client.signal('s-1', 'paid', { amount: '1' }).catch(() => {});
    const done: Snapshot = await client.signal('s-1', 'paid', { amount: 1 });
    expect(done.status).toBe('completed');
  });
});

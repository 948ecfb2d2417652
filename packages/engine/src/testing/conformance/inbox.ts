import { afterEach, expect, it } from 'vitest';
import { workflow } from '../../definition/builder.js';
import { defineWorkflow } from '../../definition/compile.js';
import type { WorkflowDefinition } from '../../definition/schema.js';
import type { StandardSchema } from '../../definition/typing.js';
import { isStepfoldError } from '../../errors.js';
import { createRunner } from '../../runner/runner.js';
import type { Runner } from '../../runner/types.js';
import type { Snapshot } from '../../snapshot.js';
import type { SaveOptions, SentSignal, Store } from '../../store/store.js';
import type { Worker, WorkerOptions } from '../../worker/types.js';
import { createWorker } from '../../worker/worker.js';
import { type SuiteContext, until } from './context.js';

// runner.send on a store with an inbox (`store.inbox`): one write appends the
// signal and announces the snapshot with every signal waiting; a worker applies them and takes the
// task they dispatch in one write that also consumes them. Refusals take signal's path and its
// errors; what no notice delivers, the polls' inbox lane does after a second.

/** Signals waiting for the instances named, counted through the inbox's claim by id (which takes no lease). */
export const waitingIn = async (store: Store, ...ids: string[]) =>
  (await store.inbox!.claim(0, ids.length, ids)).reduce((n, d) => n + d.sent.length, 0);

const waits = defineWorkflow({
  name: 'send-waits',
  version: 1,
  start: 'go',
  steps: {
    go: { kind: 'wait', signal: 'go', next: 'hit' },
    hit: { kind: 'task', handler: 'hit', input: { said: 'outputs.go.said' } },
  },
});
// Batches two `item` signals: its output keeps their order.
const batches = defineWorkflow({
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
const typed = workflow('send-typed', 1).signal('go', numbered).wait('go', { signal: 'go' }).build();
// Beside JSON definitions in one runner, as a JSON definition (its typed client is tested alone).
const typedJson = typed as unknown as WorkflowDefinition;

/** The inbox behind `runner.send`: one write, applied by workers in order, consumed with the write that applies it. */
export function describeInbox(ctx: SuiteContext): void {
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

  it('writes the signal in one statement; a worker applies it and runs what it dispatched, once', async () => {
    const { store, sender, ran, runners } = await setup(2);
    await sender.start('send-waits', 'a');
    await sender.send('a', 'go', { said: 'hi' });
    // Written, not applied: the instance still waits, the signal is in the inbox (or just taken).
    await until('the handler', () => ran.length === 1);
    expect(ran).toEqual([{ id: 'a', input: { said: 'hi' } }]);
    await until('the result', async () => (await store.load('a'))?.status === 'completed');
    expect(await waitingIn(store, 'a')).toBe(0);
    // Both workers heard the notice: one write took it, the other lost the race and found nothing.
    await new Promise((r) => setTimeout(r, 200));
    expect(ran).toHaveLength(1);
    expect(runners.reduce((n, r) => n + r.stats.writes, 0)).toBe(2); // the take and the result
  });

  it('applies signals in the order sent, also those that waited for a worker', async () => {
    const store = await ctx.fresh();
    const sender = senderOn(store, [batches]);
    await sender.start('send-batches', 'b');
    await sender.send('b', 'item', 1);
    await sender.send('b', 'item', 2);
    expect(await waitingIn(store, 'b')).toBe(2);
    expect((await store.load('b'))?.status).toBe('waiting');
    // A worker that hears no notice: its inbox lane finds them once their second has passed.
    const ran: unknown[] = [];
    await recordingWorker(store, [batches], ran, {
      wakes: false,
      poll: { minMs: 50, maxMs: 200 },
    });
    await until('the batch', () => ran.length === 1);
    expect(ran[0]).toEqual({ said: [1, 2] });
    expect(await waitingIn(store, 'b')).toBe(0);
  });

  it('refuses what signal refuses, before writing: unknown name, bad payload, missing instance', async () => {
    const { store, sender } = await setup(0);
    await sender.start('send-waits', 'c');
    await sender.start('send-typed', 't');
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e: unknown) => (isStepfoldError(e) ? e.code : String(e)),
      );
    expect(await code(sender.send('c', 'nope'))).toBe('UNKNOWN_SIGNAL');
    expect(await code(sender.send('t', 'go', { n: 'one' }))).toBe('INVALID_INPUT');
    expect(await code(sender.send('missing', 'go'))).toBe('NOT_FOUND');
    // A name only another workflow listens for: refused by the statement, then by signal's path.
    expect(await code(sender.send('t', 'item', 1))).toBe('UNKNOWN_SIGNAL');
    expect(await waitingIn(store, 'c', 't', 'missing')).toBe(0);
    // The typed client checks the payload's type too.
    const typedSender = createRunner({ store, workflows: [typed], handlers: {}, execute: false });
    await typedSender.client(typed).send('t', 'go', { n: 1 });
    expect(await waitingIn(store, 't')).toBe(1);
  });

  it('a finished instance takes nothing into its inbox; signals left for one that finished are dropped', async () => {
    const { store, sender } = await setup(0);
    await sender.start('send-waits', 'd');
    await sender.cancel('d');
    await sender.send('d', 'go', { said: 'late' }); // signal's path: a finished instance ignores it
    expect(await waitingIn(store, 'd')).toBe(0);

    await sender.start('send-waits', 'e');
    await sender.send('e', 'go', { said: 'x' });
    await sender.cancel('e'); // before any worker applied the signal
    const runner = createRunner({
      store,
      workflows: [waits, batches, typedJson],
      handlers: { hit: () => null },
    });
    const worker = createWorker({ runner, wakes: false, poll: { minMs: 50, maxMs: 200 } });
    workers.push(worker);
    await worker.start();
    await until('the inbox emptied', async () => (await waitingIn(store, 'e')) === 0, 5_000);
    expect((await store.load('e'))?.status).toBe('cancelled');
  });

  it('a save consumes the sent signals only if its own condition holds', async () => {
    const { store, sender } = await setup(0);
    await sender.start('send-waits', 'f');
    await sender.send('f', 'go', { said: 'x' });
    const [due] = await store.inbox!.claim(Date.now() + 5_000, 10);
    expect(due?.sent.map((s: SentSignal) => s.event.type)).toEqual(['signal']);
    const consumed = due!.sent;
    const stale = { ...due!.snapshot, version: due!.snapshot.version + 1 };
    await expect(store.save(stale, due!.snapshot.version + 5, { consumed })).rejects.toMatchObject({
      code: 'VERSION_CONFLICT',
    });
    expect(await waitingIn(store, 'f')).toBe(1);
    // Matching a snapshot and signals not stored as given: refused, nothing consumed.
    const forged = [{ ...consumed[0]!, event: { ...consumed[0]!.event, at: 1 } }];
    await expect(
      store.save(stale, due!.snapshot.version, { consumed: forged, matches: due!.snapshot }),
    ).rejects.toMatchObject({ code: 'NOTICE_MISMATCH' });
    expect(await waitingIn(store, 'f')).toBe(1);
    await store.save(stale, due!.snapshot.version, { consumed, matches: due!.snapshot });
    expect(await waitingIn(store, 'f')).toBe(0);
    // Deleting an instance deletes what was sent to it.
    await sender.start('send-waits', 'g');
    await sender.send('g', 'go', { said: 'x' });
    expect(await store.delete('g')).toBe(true);
    expect(await waitingIn(store, 'g')).toBe(0);
  });

  // Driven by notices only (polls ten minutes apart): a store without wakes has none to send.
  wakesOnly('a snapshot too large for the notice: the worker claims the signals by id at once', async () => {
    const { store, sender, ran } = await setup(1, {
      poll: { minMs: 600_000, maxMs: 600_000, maxWithWakesMs: 600_000 },
    });
    await sender.start('send-waits', 'h');
    const big = 'x'.repeat(9_000);
    await new Promise((r) => setTimeout(r, 100)); // the worker's first round is over
    await sender.send('h', 'go', { said: big });
    // The polls are ten minutes apart after the first round: only the notice can have done it.
    await until('the handler', () => ran.length === 1);
    expect((ran[0]!.input as { said: string }).said).toHaveLength(9_000);
    expect(await waitingIn(store, 'h')).toBe(0);
  });

  // Driven by notices only (polls ten minutes apart): a store without wakes has none to send.
  wakesOnly(
    'a write applying sent signals that loses its race claims them again by id, with the winner’s write',
    async () => {
      const store = await ctx.fresh();
      const sender = senderOn(store, [batches]);
      await sender.start('send-batches', 'r');
      // The worker's first write that consumes sent signals finds the instance moved on: a signal
      // lands just before it (as another process's would).
      let raced = false;
      const racing = Object.create(store) as Store;
      Object.defineProperty(racing, 'save', {
        value: async (s: Snapshot, expected: number, o?: SaveOptions) => {
          if (o?.consumed?.length && !raced) {
            raced = true;
            await sender.signal('r', 'item', 'direct');
          }
          return store.save(s, expected, o);
        },
      });
      const ran: unknown[] = [];
      const worker = await recordingWorker(racing, [batches], ran, {
        poll: { minMs: 600_000, maxMs: 600_000, maxWithWakesMs: 600_000 },
      });
      await new Promise((r) => setTimeout(r, 100)); // the first round is over: only notices drive it
      await sender.send('r', 'item', 'sent');
      await until('the batch', () => ran.length === 1);
      expect(raced).toBe(true);
      expect(ran[0]).toEqual({ said: ['direct', 'sent'] });
      expect(await waitingIn(store, 'r')).toBe(0);
      expect(worker.stats.lostTakes).toBe(0);
    },
  );

  it('one sent signal refused when applied (a full inbox) is skipped and reported; the others apply', async () => {
    // Buffers `late` while it waits for `open`, one at most.
    const gated = defineWorkflow({
      name: 'send-gated',
      version: 1,
      start: 'open',
      limits: { inbox: 1 },
      steps: {
        open: { kind: 'wait', signal: 'open', next: 'late' },
        late: { kind: 'wait', signal: 'late', next: 'hit' },
        hit: { kind: 'task', handler: 'hit', input: { said: 'outputs.late.said' } },
      },
    });
    const store = await ctx.fresh();
    const sender = senderOn(store, [gated]);
    await sender.start('send-gated', 'v');
    await sender.send('v', 'late', { said: 1 });
    await sender.send('v', 'late', { said: 2 });
    const ran: unknown[] = [];
    const errors: string[] = [];
    await recordingWorker(store, [gated], ran, {
      wakes: false,
      poll: { minMs: 50, maxMs: 200 },
      on: { error: (e) => errors.push(isStepfoldError(e) ? e.code : String(e)) },
    });
    await until('the inbox emptied', async () => (await waitingIn(store, 'v')) === 0, 5_000);
    // The refusal is reported once the write consuming the signals has returned: a moment after
    // the inbox shows empty.
    await until('the refusal reported', () => errors.length > 0, 5_000);
    expect(errors).toEqual(['INBOX_OVERFLOW']);
    await sender.send('v', 'open');
    await until('the handler', () => ran.length === 1);
    expect(ran).toEqual([{ said: 1 }]);
  });

  it('two workers, a thousand signals sent to a hundred instances: each applied once, in order, the inbox empty', async () => {
    const tens = defineWorkflow({
      name: 'send-tens',
      version: 1,
      start: 'gather',
      limits: { inbox: 20 },
      steps: {
        gather: { kind: 'collect', signal: 'item', maxItems: 10, next: 'hit' },
        hit: { kind: 'task', handler: 'hit', input: { said: 'outputs.gather' } },
      },
    });
    const store = await ctx.fresh();
    const sender = senderOn(store, [tens]);
    const ran = new Map<string, unknown[]>();
    for (let w = 0; w < 2; w++) {
      const runner = createRunner({
        store,
        workflows: [tens],
        handlers: {
          hit: ({ instanceId, input }) => {
            ran.set(instanceId, [...(ran.get(instanceId) ?? []), input]);
            return null;
          },
        },
      });
      const worker = createWorker({ runner, concurrency: 20, poll: { minMs: 50, maxMs: 500 } });
      workers.push(worker);
      await worker.start();
    }
    const ids = Array.from({ length: 100 }, (_, i) => `s27-${String(i).padStart(3, '0')}`);
    for (const id of ids) await sender.start('send-tens', id);
    // Each instance's ten in order from one sender; twenty instances' sends interleave at a time.
    for (let i = 0; i < ids.length; i += 20)
      await Promise.all(
        ids.slice(i, i + 20).map(async (id) => {
          for (let n = 0; n < 10; n++) await sender.send(id, 'item', n);
        }),
      );
    await until(
      'every instance completed',
      async () => {
        const page = await store.list({ workflow: 'send-tens', status: 'completed', limit: 200 });
        return page.items.length === ids.length;
      },
      60_000,
    );
    const inOrder = Array.from({ length: 10 }, (_, n) => n);
    for (const id of ids) expect(ran.get(id), id).toEqual([{ said: inOrder }]);
    expect(await waitingIn(store, ...ids)).toBe(0);
  }, 120_000);
}

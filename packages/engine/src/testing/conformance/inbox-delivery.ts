import { expect, it } from 'vitest';
import { defineWorkflow } from '../../definition/compile.js';
import { isStepfoldError } from '../../errors.js';
import { createRunner } from '../../runner/runner.js';
import type { Snapshot } from '../../snapshot.js';
import type { SaveOptions, Store } from '../../store/store.js';
import { createWorker } from '../../worker/worker.js';
import { until } from './context.js';
import { batches, type InboxHarness, waitingIn } from './inbox-harness.js';

// How sent signals reach a worker: by its polls' inbox lane, or by the notice a send announces.

/** Workers apply sent signals once and in order, skip and report one refused, and keep up under load. */
export function describeWorkerDelivery(h: InboxHarness): void {
  const { ctx, workers, senderOn, recordingWorker, setup } = h;
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

/** What only notices drive (polls ten minutes apart): registered only for a store with wakes. */
export function describeNoticeDelivery(h: InboxHarness): void {
  const { ctx, senderOn, recordingWorker, setup, wakesOnly } = h;
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
}

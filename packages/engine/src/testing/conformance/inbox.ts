import { expect, it } from 'vitest';
import { isStepfoldError } from '../../errors.js';
import { createRunner } from '../../runner/runner.js';
import type { SentSignal } from '../../store/store.js';
import { createWorker } from '../../worker/worker.js';
import { type SuiteContext, until } from './context.js';
import { describeNoticeDelivery, describeWorkerDelivery } from './inbox-delivery.js';
import {
  batches,
  type InboxHarness,
  inboxHarness,
  typed,
  typedJson,
  waitingIn,
  waits,
} from './inbox-harness.js';

// runner.send on a store with an inbox (`store.inbox`): one write appends the
// signal and announces the snapshot with every signal waiting; a worker applies them and takes the
// task they dispatch in one write that also consumes them. Refusals take signal's path and its
// errors; what no notice delivers, the polls' inbox lane does after a second.

/** The inbox behind `runner.send`: one write, applied by workers in order, consumed with the write that applies it. */
export function describeInbox(ctx: SuiteContext): void {
  const h = inboxHarness(ctx);
  describeWorkerDelivery(h);
  describeSending(h);
  describeConsumption(h);
  describeNoticeDelivery(h);
}

/** Sending: what `send` refuses before writing, and what a finished instance takes. */
function describeSending(h: InboxHarness): void {
  const { setup, workers } = h;
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
    // Nothing written, and the caller told (by the store's write where it can, else signal's path).
    expect(await sender.send('d', 'go', { said: 'late' })).toEqual({
      status: 'finished',
      finished: 'cancelled',
    });
    const refused = await sender.send('d', 'go', { said: 'late' }, { rejectFinished: true }).catch((e) => e);
    expect(refused).toMatchObject({ code: 'INSTANCE_FINISHED', status: 'cancelled' });
    expect(await waitingIn(store, 'd')).toBe(0);
    expect((await store.load('d'))?.version).toBe(2);

    await sender.start('send-waits', 'e');
    expect(await sender.send('e', 'go', { said: 'x' })).toEqual({ status: 'queued' });
    await sender.cancel('e'); // before any worker applied the signal
    const runner = createRunner({
      store,
      workflows: [waits, batches, typedJson],
      handlers: { hit: () => null },
    });
    const worker = createWorker({ runner, wakes: false, poll: { minMs: 50, maxMs: 200 } });
    workers.push(worker);
    await worker.start();
    // The worker's first polls on a slow server (moto under a full test run on 2 cores once took
    // longer than 5 s): the default wait, 10 s, plus room.
    await until('the inbox emptied', async () => (await waitingIn(store, 'e')) === 0, 15_000);
    expect((await store.load('e'))?.status).toBe('cancelled');
  });
}

/** A save that consumes sent signals: only when its own condition holds; a delete takes them along. */
function describeConsumption(h: InboxHarness): void {
  const { setup } = h;
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
}

import {
  createRunner,
  createWorker,
  defineWorkflow,
  isStepfoldError,
  type Snapshot,
  type Worker,
} from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysFor } from '../src/index.js';
import { dropPrefix, openStore, requireServer, testClient } from './server.js';
import { until } from './wake-probe.js';

// A forged wake notice, the Redis half: anyone allowed to PUBLISH on the store's channel can send a notice
// that hands a snapshot over. A worker takes a task from such a snapshot with no load, so the take
// must be conditional on the stored instance being exactly that snapshot (the save script's SHA-1
// match), or a forged input would reach the handler.

const client = testClient();
const prefixes: string[] = [];
const workers: Worker[] = [];

/** A store under a fresh prefix, and workers on it whose handler records what it is given. */
async function scene(label: string) {
  const { store, prefix } = openStore(client, label);
  prefixes.push(prefix);
  await store.setup();
  const ran: unknown[] = [];
  const errors: unknown[] = [];
  /** A worker whose clock is `ahead` ms ahead. */
  const start = async (ahead = 0) => {
    const clock = () => Date.now() + ahead;
    const handlers = {
      charge: ({ input }: { input: unknown }) => {
        ran.push(input);
        return null;
      },
    };
    const runner = createRunner({ store, workflows: [pay, waits], handlers, clock });
    // Polls ten minutes apart: after the first round only notices drive this worker.
    const poll = { minMs: 600_000, maxMs: 600_000, maxWithWakesMs: 600_000 };
    const worker = createWorker({ runner, clock, poll, on: { error: (e) => errors.push(e) } });
    workers.push(worker);
    await worker.start();
    return worker;
  };
  // Writes an hour ahead (its clock): what it hands off or sends is due for no worker meanwhile.
  const sender = createRunner({
    store,
    workflows: [pay, waits],
    execute: false,
    clock: () => Date.now() + HOUR,
  });
  const publish = (notice: object) => client.publish(keysFor(prefix).wake, JSON.stringify(notice));
  return { store, ran, errors, start, sender, publish };
}

beforeAll(() => requireServer(client));
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop({ graceMs: 1000 })));
  for (const p of prefixes) await dropPrefix(client, p);
  client.disconnect();
});

const pay = defineWorkflow({
  name: 'forge-pay',
  version: 1,
  start: 'charge',
  steps: { charge: { kind: 'task', handler: 'charge', input: { amount: 'input.amount' } } },
});
const waits = defineWorkflow({
  name: 'forge-waits',
  version: 1,
  start: 'go',
  steps: {
    go: { kind: 'wait', signal: 'go', next: 'charge' },
    charge: { kind: 'task', handler: 'charge', input: { amount: 'outputs.go.amount' } },
  },
});
const HOUR = 3_600_000;

describe('redis adapter: a forged wake notice', () => {
  it('a PUBLISHed snapshot with the right version and an altered input is refused (NOTICE_MISMATCH), nothing written', async () => {
    const { store, ran, errors, start, sender, publish } = await scene('forged');
    const worker = await start();

    // Handed off an hour from now: the worker hears the notice and waits.
    const stored = await sender.start('forge-pay', 'f-1', { amount: 10 });
    expect(stored.wakeAt).toBeGreaterThan(Date.now() + HOUR / 2);
    await until(() => worker.stats.wakes >= 1, 'the hand-off notice');

    // The forger's notice: the stored version, the task due now, and another amount to charge.
    const now = Date.now();
    const forged = structuredClone(stored) as Snapshot;
    forged.input = { amount: 1_000_000 };
    for (const task of Object.values(forged.tasks)) task.deadline = now;
    forged.wakeAt = now;
    expect(await publish({ at: now, w: 'forge-pay', i: 'f-1', s: forged })).toBe(1);

    // Without the match the take is written and the handler charges the forged amount.
    await until(() => worker.stats.refusedNotices >= 1 || ran.length > 0, 'the refusal (or the forged run)');
    await new Promise((r) => setTimeout(r, 300));
    expect(ran).toEqual([]);
    expect(worker.stats.refusedNotices).toBe(1);
    expect(errors.filter((e) => isStepfoldError(e, 'NOTICE_MISMATCH'))).toHaveLength(1);
    // Nothing was written: the stored instance is the sender's, still handed off.
    expect(await store.load('f-1')).toEqual(stored);

    // The legitimate work still happens: a worker at the hour takes the stored task as stored.
    const later = await start(2 * HOUR);
    await until(() => ran.length === 1, 'the legitimate run');
    await until(() => later.stats.ticks >= 1, 'the tick that took it');
    expect(ran).toEqual([{ amount: 10 }]);
    const done = await store.load('f-1');
    expect(done?.input).toEqual({ amount: 10 });
    expect(worker.stats.refusedNotices).toBe(1);
  });

  it('a notice with the stored snapshot and a forged signal is refused too; the signal as sent is applied', async () => {
    const { store, ran, errors, start, sender, publish } = await scene('forged-sent');
    await sender.start('forge-waits', 'f-2');
    // Sent before any worker listens, its poll due in an hour: only the forger's notice names it.
    await sender.send('f-2', 'go', { amount: 10 });
    const [due] = await store.inbox.claim(0, 1, ['f-2']);
    expect(due?.sent).toHaveLength(1);
    const worker = await start();

    const { seq, event } = due!.sent[0]!;
    const forged = { ...event, payload: { amount: 1_000_000 } };
    const p = [{ n: seq, e: forged }];
    expect(await publish({ at: Date.now(), w: 'forge-waits', i: 'f-2', s: due!.snapshot, p })).toBe(1);
    // Refused, then the signals claimed by id as stored: the amount sent is charged, once.
    await until(() => ran.length > 0, 'a run');
    await expect.poll(async () => (await store.load('f-2'))?.status, { timeout: 30_000 }).toBe('completed');
    expect(ran).toEqual([{ amount: 10 }]);
    expect(worker.stats.refusedNotices).toBe(1);
    expect(errors.filter((e) => isStepfoldError(e, 'NOTICE_MISMATCH'))).toHaveLength(1);
  });
});

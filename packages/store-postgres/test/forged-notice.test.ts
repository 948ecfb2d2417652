import {
  createRunner,
  createWorker,
  defineWorkflow,
  isStepfoldError,
  type Worker,
  type WorkflowEvent,
} from '@stepfold/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { wakePayload } from '../src/wakes.js';
import { useTestTables } from './test-tables.js';

// A forged wake notice, PostgreSQL's half: anyone who can connect may NOTIFY the store's channel. A forged
// notice in the store's own format, with the right version and an altered snapshot or signal,
// changes nothing: the write that would take from it must find exactly that snapshot (and those
// signals) stored, fails with NOTICE_MISMATCH, and the worker reports it.

const { pool, store: freshStore } = useTestTables('f26');

const HOUR = 3_600_000;

const pays = defineWorkflow({
  name: 'forged-pays',
  version: 1,
  start: 'pay',
  steps: { pay: { kind: 'task', handler: 'pay', input: { amount: 'input.amount' } } },
});
const waits = defineWorkflow({
  name: 'forged-waits',
  version: 1,
  start: 'go',
  steps: {
    go: { kind: 'wait', signal: 'go', next: 'pay' },
    pay: { kind: 'task', handler: 'pay', input: { amount: 'outputs.go.amount' } },
  },
});

const until = async (what: string, ok: () => boolean | Promise<boolean>, ms = 20_000) => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20)))
    if (await ok()) return;
  throw new Error(`timed out waiting for ${what}`);
};

describe('postgres: a forged pg_notify is refused', () => {
  const workers: Worker[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 1000 })));
  });

  it('is never applied: the take fails with NOTICE_MISMATCH, the worker reports it, only legitimate work happens', async () => {
    const store = await freshStore();
    // Written before any worker listens, and due in an hour: only a notice can move them now.
    const later = createRunner({
      store,
      workflows: [pays, waits],
      handlers: { pay: () => null },
      execute: false,
      clock: () => Date.now() + HOUR,
    });
    const handed = await later.start('forged-pays', 'handed', { amount: 10 });
    expect(handed.tasks['pay']).toMatchObject({ queued: true });
    const { workflow: w } = await later.start('forged-waits', 'waiting');
    const real: WorkflowEvent = {
      type: 'signal',
      at: Date.now() + HOUR,
      name: 'go',
      payload: { amount: 20 },
    };
    expect(await store.inbox.send('waiting', real, [`${w.name}@${w.version}@${w.hash}`])).toBe(true);
    const [inbox] = await store.inbox.claim(0, 1, ['waiting']);
    const waiting = inbox!.snapshot;

    const paid: unknown[] = [];
    const errors: string[] = [];
    const runner = createRunner({
      store,
      workflows: [pays, waits],
      handlers: {
        pay: ({ instanceId, input }) => {
          paid.push({ instanceId, input });
          return null;
        },
      },
    });
    const worker = createWorker({
      runner,
      poll: { minMs: 600_000, maxMs: 600_000, maxWithWakesMs: 600_000 },
      on: { error: (e) => errors.push(isStepfoldError(e) ? e.code : String(e)) },
    });
    workers.push(worker);
    await worker.start();
    await worker.idle(); // its first round found nothing due

    // A hand-off at the stored version, due now, paying a million.
    const now = Date.now();
    const forged = structuredClone(handed);
    forged.input = { amount: 1_000_000 };
    forged.tasks['pay']!.deadline = now;
    forged.wakeAt = now;
    const notify = (payload: string) => pool.query('SELECT pg_notify($1, $2)', [store.channel, payload]);
    await notify(wakePayload(now, 'forged-pays', 'handed', JSON.stringify(forged)));
    await until('the refusal', () => worker.stats.refusedNotices >= 1);
    expect(errors).toEqual(['NOTICE_MISMATCH']);
    expect(await store.load('handed')).toEqual(handed);

    // The true snapshot of a waiting instance with its real signal's seq, but another amount.
    const fake = { ...real, at: now, payload: { amount: 1_000_000 } };
    const sent = [{ n: inbox!.sent[0]!.seq, e: fake }];
    await notify(
      `${wakePayload(now, 'forged-waits', 'waiting', JSON.stringify(waiting)).slice(0, -1)},"p":${JSON.stringify(sent)}}`,
    );
    await until('the second refusal', () => worker.stats.refusedNotices >= 2);
    // Refused, the worker claims the instance's signals as stored: the real one is applied.
    await until('the real payment', () => paid.length > 0);
    await worker.idle();
    expect(paid).toEqual([{ instanceId: 'waiting', input: { amount: 20 } }]);
    expect(errors).toEqual(['NOTICE_MISMATCH', 'NOTICE_MISMATCH']);
    expect(await store.load('handed')).toEqual(handed);
    expect((await store.load('waiting'))?.status).toBe('completed');
  });
});

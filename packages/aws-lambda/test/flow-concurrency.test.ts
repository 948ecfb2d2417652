/**
 * A concurrency key holds for per-event drivers that share no process: each SQS invocation of
 * `createLambdaApp`'s queue function asks the store's `flow` (DynamoDB) for the slot, so a second
 * invocation for the same customer waits, visibly, instead of running, and runs once the holder's
 * invocation ended. Two invocations in one process (two apps, two runners) and in two processes.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { flowControl, type HandlerContext, workflow } from '@stepfold/engine';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaApp, type SQSRecord } from '../src/index.js';
import { clients, provision, until } from './support.js';

const charge = workflow('flow-lambda-charge', 1)
  .input<{ customerId: string; hold?: boolean }>()
  .task('charge', { handler: 'charge', concurrency: { key: 'input.customerId', limit: 1 } })
  .build();

interface Entry {
  ledger: 'start' | 'end';
  id: string;
  key: string;
  at: number;
  pid: number | string;
}

const c = clients();
let res: Awaited<ReturnType<typeof provision>>;
beforeAll(async () => {
  res = await provision(c, 'flow');
});
afterAll(async () => {
  await res?.drop();
});

let records = 0;
const record = (body: unknown): SQSRecord => ({ messageId: `m-${++records}`, body: JSON.stringify(body) });
const start = (id: string, input: object) => record({ type: 'start', id, workflow: charge.name, input });
const wake = (id: string) => record({ type: 'wake', id, at: Date.now() });
const noTimers = {
  send: async () => {},
  arm: async () => ({ how: 'delay' as const, delaySeconds: 0 }),
  clear: async () => false,
};

/** The most runs of one key at once in `ledger` (ends before starts at the same millisecond). */
function mostAtOnce(ledger: readonly Entry[], key: string): number {
  const edges = ledger
    .filter((e) => e.key === key)
    .map((e) => ({ at: e.at, d: e.ledger === 'start' ? 1 : -1 }))
    .sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let most = 0;
  for (const e of edges) {
    now += e.d;
    most = Math.max(most, now);
  }
  return most;
}

const at = (ledger: readonly Entry[], id: string, what: 'start' | 'end') =>
  ledger.find((e) => e.id === id && e.ledger === what)?.at;

describe('a Lambda-shaped driver (one SQS invocation at a time, no shared process) honours a concurrency key', () => {
  it('two invocations in one process: the second waits throttled, then runs after the holder ended', async () => {
    const ledger: Entry[] = [];
    const gates = new Map<string, () => void>();
    const app = (who: string) =>
      createLambdaApp({
        workflows: [charge],
        dynamodb: c.dynamodb,
        table: res.table,
        kinds: [flowControl],
        timers: noTimers,
        log: () => {},
        handlers: {
          charge: async ({ input, instanceId }: HandlerContext<{ customerId: string; hold?: boolean }>) => {
            ledger.push({ ledger: 'start', id: instanceId, key: input.customerId, at: Date.now(), pid: who });
            if (input.hold) await new Promise<void>((r) => gates.set(instanceId, r));
            ledger.push({ ledger: 'end', id: instanceId, key: input.customerId, at: Date.now(), pid: who });
            return null;
          },
        },
      });
    const [a, b] = [app('a'), app('b')];
    const store = createDynamoStore({ client: c.dynamodb, table: res.table });

    const holding = a.queue({ Records: [start('one-1', { customerId: 'c-1', hold: true })] });
    await until('the holder to run', () => gates.has('one-1'));
    expect((await b.queue({ Records: [start('one-2', { customerId: 'c-1' })] })).batchItemFailures).toEqual(
      [],
    );
    const waiting = await store.load('one-2');
    expect(waiting?.steps['charge']?.throttled?.need).toEqual({
      scope: 'flow-lambda-charge/charge',
      key: 'c-1',
      limit: 1,
    });
    expect(at(ledger, 'one-2', 'start')).toBeUndefined();

    gates.get('one-1')!();
    await holding;
    // The next event for the waiter (the stream's or the sweep's) is another invocation.
    await b.queue({ Records: [wake('one-2')] });
    await until(
      'the waiter to complete',
      async () => (await store.load('one-2'))?.status === 'completed',
      15_000,
    );
    expect(at(ledger, 'one-2', 'start')).toBeGreaterThanOrEqual(at(ledger, 'one-1', 'end')!);
    expect(mostAtOnce(ledger, 'c-1')).toBe(1);
    // Nothing held or waiting once both ended (the release follows the write that ended the run,
    // a few moto calls: 5 s was once too short in a full suite run on 2 loaded cores).
    await until(
      'every hold released',
      async () => (await store.flow!.list({ limit: 10, now: Date.now() })).items.length === 0,
      15_000,
    );
  });

  it('two processes: the second waits throttled, then runs after the holder ended', async () => {
    const ledger: Entry[] = [];
    const spawn = async (): Promise<ChildProcess> => {
      const child = fork(new URL('./fixtures/flow-invocation.mjs', import.meta.url), [], {
        env: { ...process.env, FLOWL_TABLE: res.table },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      child.on('message', (m: Record<string, unknown>) => {
        if ('ledger' in m) ledger.push(m as unknown as Entry);
      });
      const ready = once(child, 'message');
      child.send({ definition: charge });
      await ready;
      return child;
    };
    const invoke = (child: ChildProcess, r: SQSRecord) =>
      new Promise<number>((resolve, reject) => {
        const on = (m: Record<string, unknown>) => {
          if (m['invoked'] !== r.messageId) return;
          child.off('message', on);
          resolve(m['failures'] as number);
        };
        child.on('message', on);
        child.once('exit', (code) => reject(new Error(`invocation process exited (${code})`)));
        child.send({ invoke: r });
      });
    const [p, q] = await Promise.all([spawn(), spawn()]);
    const store = createDynamoStore({ client: c.dynamodb, table: res.table });
    try {
      const holding = invoke(p, start('two-1', { customerId: 'c-2', hold: true }));
      await until('the holder to run', () => at(ledger, 'two-1', 'start'));
      expect(await invoke(q, start('two-2', { customerId: 'c-2' }))).toBe(0);
      const waiting = await store.load('two-2');
      expect(waiting?.steps['charge']?.throttled?.need.key).toBe('c-2');
      expect(at(ledger, 'two-2', 'start')).toBeUndefined();

      p.send({ release: 'two-1' });
      expect(await holding).toBe(0);
      await invoke(q, wake('two-2'));
      await until(
        'the waiter to complete',
        async () => (await store.load('two-2'))?.status === 'completed',
        15_000,
      );
      expect(at(ledger, 'two-2', 'start')).toBeGreaterThanOrEqual(at(ledger, 'two-1', 'end')!);
      expect(mostAtOnce(ledger, 'c-2')).toBe(1);
      expect(ledger.filter((e) => e.id === 'two-2' && e.ledger === 'start')).toHaveLength(1);
      await until(
        'every hold released',
        async () => (await store.flow!.list({ limit: 10, now: Date.now() })).items.length === 0,
        15_000,
      );
    } finally {
      for (const child of [p, q]) {
        child.send('stop');
        await once(child, 'exit');
      }
    }
  });
});

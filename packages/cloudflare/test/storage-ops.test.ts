/**
 * The Durable Object class and its store in Node, over an in-memory storage that counts calls:
 * what a refused write leaves behind, when the alarm is set and deleted, and how many storage
 * operations each request and alarm of a workflow costs (the README's cost table).
 */
import { createMemoryStore, type Handler, isStepfoldError, type Snapshot, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { alarmFor, createDurableObjectStore, SNAPSHOT_KEY } from '../src/do-store.js';
import { parseRoute } from '../src/http-api.js';
import { createWorkflowObject } from '../src/workflow-object.js';
import { fakeStorage } from './fake-storage.js';

const order = workflow('order', 1)
  .task('reserve', { handler: 'reserve' })
  .human('approval', { timeoutMs: 3_600_000 })
  .sleep('cool-off', { ms: 1_000 })
  .task('charge', { handler: 'charge' })
  .build();
const handlers = {
  reserve: async () => ({ reservation: 'R-1' }),
  charge: async () => ({ charged: true }),
} satisfies Record<string, Handler>;

/** One object over a fake storage, with a clock the test moves. */
function object() {
  const storage = fakeStorage();
  let now = 1_000_000;
  const Instance = createWorkflowObject({ workflows: [order], handlers, clock: () => now });
  const o = new Instance({ storage }, {});
  const request = async (method: string, path: string, body?: unknown) => {
    const res = await o.fetch(
      new Request(`http://object${path}`, {
        method,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    return { status: res.status, body: (await res.json()) as Snapshot };
  };
  return { storage, o, request, advance: (ms: number) => (now += ms), now: () => now };
}

describe('the store over Durable Object storage', () => {
  it('moves the alarm with every write, and deletes it once the instance is final', async () => {
    const { storage, o, request, advance } = object();
    const started = await request('POST', '/workflows/order/instances/o-1', {});
    expect(started.body.status).toBe('waiting');
    expect(storage.alarm).toBe(started.body.wakeAt);

    const approved = await request('POST', '/instances/o-1/signals/approval', { decision: 'approve' });
    expect(storage.alarm).toBe(approved.body.wakeAt);

    advance(1_000);
    await o.alarm();
    const done = (await request('GET', '/instances/o-1')).body;
    expect(done.status).toBe('completed');
    expect(storage.alarm).toBeNull();
  });

  it('a final snapshot deletes the alarm even if it still names a wake time', async () => {
    const storage = fakeStorage();
    const store = createDurableObjectStore(storage);
    const { o } = object();
    const s = await o.runner.start('order', 'o-2', {});
    await store.create(s);
    expect(storage.alarm).toBe(s.wakeAt);
    const ended = { ...s, status: 'completed', version: s.version + 1 } as Snapshot;
    expect(alarmFor(ended)).toBeNull();
    await store.save(ended, s.version);
    expect(storage.alarm).toBeNull();
  });

  it('a refused write changes neither the snapshot nor the alarm', async () => {
    const storage = fakeStorage();
    const store = createDurableObjectStore(storage, { maxSnapshotBytes: 2_000 });
    const { o } = object();
    const s = await o.runner.start('order', 'o-3', {});
    await store.create(s);
    const stored = storage.data.get(SNAPSHOT_KEY);
    const alarm = storage.alarm;

    const codes: string[] = [];
    for (const write of [
      () => store.save({ ...s, version: s.version + 1, wakeAt: 5 }, s.version - 1),
      () => store.save({ ...s, version: s.version + 1, input: 'x'.repeat(3_000) }, s.version),
      () => store.create({ ...s, wakeAt: 5 }),
    ]) {
      await write().then(
        () => codes.push('written'),
        (e) => codes.push(isStepfoldError(e) ? e.code : String(e)),
      );
    }
    expect(codes).toEqual(['VERSION_CONFLICT', 'SNAPSHOT_TOO_LARGE', 'ALREADY_EXISTS']);
    expect(storage.data.get(SNAPSHOT_KEY)).toEqual(stored);
    expect(storage.alarm).toBe(alarm);
  });

  it('a start takes its priority from the query; one that is no priority is refused, nothing written', async () => {
    expect(
      parseRoute('POST', '/workflows/order/instances/o-5', new URLSearchParams('priority=7'), () => true),
    ).toEqual({
      kind: 'start',
      workflow: 'order',
      id: 'o-5',
      priority: 7,
    });
    const { request } = object();
    const refused = await request('POST', '/workflows/order/instances/o-5?priority=soon', {});
    expect(refused.status).toBe(400);
    expect((refused.body as unknown as { error: { code: string } }).error.code).toBe('INVALID_OPTIONS');
    expect((await request('GET', '/instances/o-5')).status).toBe(404);
  });

  it('a deleted instance releases the flow slots it held at once', async () => {
    const flow = createMemoryStore().flow!;
    const store = createDurableObjectStore(fakeStorage(), { flow });
    const need = { scope: 'tenants', key: 't-1', limit: 1 };
    const s = { ...(await object().o.runner.start('order', 'o-4', {})), holds: [need] } as Snapshot;
    await flow.acquire(s.id, s.id, [need], 1_000, Number.MAX_SAFE_INTEGER);
    await store.create(s);
    expect((await flow.acquire('next', 'next', [need], 2_000, 9_000)).granted).toBe(false);
    expect(await store.delete('o-4')).toBe(true);
    expect((await flow.acquire('next', 'next', [need], 3_000, 9_000)).granted).toBe(true);
  });
});

describe('the alarm handler', () => {
  it('an alarm that rings before wakeAt sets itself again for wakeAt', async () => {
    const { storage, o, request, advance } = object();
    const started = await request('POST', '/workflows/order/instances/o-5', {});
    // The platform drops an alarm once its handler returns: start from none.
    storage.alarm = null;
    advance(1_000);
    await o.alarm();
    expect(storage.alarm).toBe(started.body.wakeAt);
    expect((await request('GET', '/instances/o-5')).body.version).toBe(started.body.version);
  });

  it('a tick that keeps throwing is tried again after 1 s, doubling to 5 min, and reported each time', async () => {
    const storage = fakeStorage();
    let now = 0;
    const reports: Array<{ failures: number; retryAt: number }> = [];
    const Instance = createWorkflowObject({
      workflows: [order],
      handlers,
      clock: () => now,
      onAlarmError: (_e, f) => reports.push(f),
    });
    const o = new Instance({ storage }, {});
    await o.runner.start('order', 'o-6', {});
    const runner = o.runner as { processDue: typeof o.runner.processDue };
    runner.processDue = () => Promise.reject(new Error('storage unavailable'));
    const waits: number[] = [];
    for (let i = 0; i < 11; i++) {
      await o.alarm();
      waits.push(storage.alarm! - now);
      now = storage.alarm!;
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300].map((s) => s * 1_000));
    expect(reports.map((r) => r.failures)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });
});

describe('storage operations per request and alarm (the cost table)', () => {
  it('counts what each step of an approval workflow costs', async () => {
    const { storage, o, request, advance } = object();
    const rows: Record<string, unknown> = {};
    storage.take();
    await request('POST', '/workflows/order/instances/o-4', {});
    rows['start (reserve runs, then waits)'] = storage.take();
    await request('GET', '/instances/o-4');
    rows.get = storage.take();
    await request('POST', '/instances/o-4/signals/approval', { decision: 'approve' });
    rows['signal: approve (the sleep starts)'] = storage.take();
    advance(1_000);
    await o.alarm();
    rows['alarm: sleep ends, charge runs, completed'] = storage.take();
    // Each write is one transaction: a read of the stored version, one put and one alarm change.
    const op = (reads: number, writes: number) => ({
      reads,
      writes,
      alarmWrites: writes,
      transactions: writes,
    });
    expect(rows).toEqual({
      'start (reserve runs, then waits)': op(3, 2),
      get: op(1, 0),
      'signal: approve (the sleep starts)': op(3, 1),
      'alarm: sleep ends, charge runs, completed': op(6, 2),
    });
  });
});

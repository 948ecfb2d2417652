import {
  createStoreKit,
  isStepfoldError,
  makeTestSnapshot,
  StoreUnavailableError,
  snapshotOfSize,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

const kit = (max = 1000) =>
  createStoreKit('testdb', (e) => (e as { code?: string }).code === 'ECONNREFUSED', {
    asked: max,
    fallback: 1000,
    most: 5000,
  });

describe('store kit', () => {
  it('refuses a size limit the database cannot hold', () => {
    expect(() => kit(0)).toThrow(RangeError);
    expect(() => kit(5001)).toThrow(RangeError);
    expect(() => kit(1.5)).toThrow(RangeError);
    expect(kit(5000).maxSnapshotBytes).toBe(5000);
  });

  it('encodes ids, version, wake time and JSON, and refuses an oversize snapshot before any call', () => {
    const k = kit();
    const e = k.encode(makeTestSnapshot('a-1', { wakeAt: 5, status: 'waiting' }));
    expect(e).toMatchObject({ id: 'a-1', version: 1, status: 'waiting', workflow: 'conformance', wakeAt: 5 });
    expect(JSON.parse(e.json).id).toBe('a-1');
    expect(k.encode(makeTestSnapshot('a-2', { wakeAt: Number.POSITIVE_INFINITY })).wakeAt).toBeNull();
    expect(k.encode(snapshotOfSize('ok', 1000)).json.length).toBe(1000);
    expect(() => k.encode(snapshotOfSize('big', 1001))).toThrow(
      expect.objectContaining({ code: 'SNAPSHOT_TOO_LARGE' }),
    );
    for (const bad of [
      makeTestSnapshot('bad id'),
      makeTestSnapshot('x', { workflow: { name: 'a b', version: 1, hash: 'h' } }),
    ]) {
      expect(() => k.encode(bad)).toThrow(expect.objectContaining({ code: 'INVALID_ID' }));
    }
    expect(() => k.encode(makeTestSnapshot('v', { version: 1.5 }))).toThrow(
      expect.objectContaining({ code: 'INVALID_SNAPSHOT' }),
    );
  });

  it('maps an unavailable server to STORE_UNAVAILABLE (retryable, cause kept) and lets other errors through', async () => {
    const k = kit();
    const down = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const e = await k.guard('save', () => Promise.reject(down)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(StoreUnavailableError);
    expect(isStepfoldError(e, 'STORE_UNAVAILABLE') && e.retryable).toBe(true);
    expect((e as Error).cause).toBe(down);
    expect((e as Error).message).toBe('testdb save failed: connect ECONNREFUSED');
    const other = new Error('syntax');
    await expect(k.guard('save', () => Promise.reject(other))).rejects.toBe(other);
  });

  it('checks listDue and list arguments and pages rows', () => {
    const k = kit();
    expect(() => k.dueLimit(Number.NaN, 5)).toThrow(RangeError);
    expect(k.dueLimit(10, 0)).toBeNull();
    expect(k.dueLimit(10, 2.7)).toBe(2);
    expect(k.dueLimit(10, Number.POSITIVE_INFINITY)).toBe(1_000_000_000);
    expect(() => k.listArgs({ limit: 5, status: { $ne: 1 } as never })).toThrow(TypeError);
    expect(() => k.listArgs({ limit: 5, cursor: 'bad id' })).toThrow(
      expect.objectContaining({ code: 'INVALID_ID' }),
    );
    expect(k.listArgs({ limit: 5, workflow: 'not an id' })).toBeNull();
    expect(k.listArgs({ limit: 0 })).toBeNull();
    expect(k.listArgs({ limit: 2, status: 'running', cursor: 'a' })).toEqual({
      status: 'running',
      cursor: 'a',
      limit: 2,
    });
    const rows = ['a', 'b', 'c'].map((id) => ({ id, json: JSON.stringify(makeTestSnapshot(id)) }));
    expect(k.page(rows, 2)).toMatchObject({ cursor: 'b', items: [{ id: 'a' }, { id: 'b' }] });
    expect(k.page(rows.slice(0, 2), 2).cursor).toBeNull();
  });

  it('turns insert and update outcomes into ALREADY_EXISTS, NOT_FOUND and VERSION_CONFLICT', () => {
    const k = kit();
    expect(() => k.created(false, 'a')).toThrow(expect.objectContaining({ code: 'ALREADY_EXISTS' }));
    expect(() => k.updated('missing', 'a', 1)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    expect(() => k.updated({ stored: 3 }, 'a', 2)).toThrow(
      expect.objectContaining({
        code: 'VERSION_CONFLICT',
        expectedVersion: 2,
        actualVersion: 3,
        retryable: true,
      }),
    );
    expect(() => k.updated('written', 'a', 1)).not.toThrow();
  });

  it('indexes a running task deadline rounded up to the second; timers and handed-off tasks exactly; notices only for those', () => {
    const k = kit();
    const task = (deadline: number, queued?: boolean) => ({
      a: {
        step: 'a',
        phase: 'run' as const,
        attempt: 1,
        idempotencyKey: 'k',
        handler: 'h',
        dispatchedAt: 0,
        deadline,
        dispatchVersion: 1,
        ...(queued ? { queued } : {}),
      },
    });
    const running = k.encode(makeTestSnapshot('r', { wakeAt: 30_005, tasks: task(30_005) }));
    expect(running).toMatchObject({ wakeAt: 31_000, notice: null });
    const timer = k.encode(
      makeTestSnapshot('t', {
        wakeAt: 1_234,
        tasks: task(30_005),
        timers: [{ kind: 'retry', step: 'a', at: 1_234 }],
      }),
    );
    expect(timer).toMatchObject({ wakeAt: 1_234, notice: 1_234 });
    const queued = k.encode(makeTestSnapshot('q', { wakeAt: 777, tasks: task(777, true) }));
    expect(queued).toMatchObject({ wakeAt: 777, notice: 777 });
    expect(k.encode(makeTestSnapshot('n', { wakeAt: 5 }))).toMatchObject({ wakeAt: 5, notice: null });
  });
});

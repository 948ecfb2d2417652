import { expect, it } from 'vitest';
import { AlreadyExistsError, NotFoundError, VersionConflictError } from '../../errors.js';
import type { Snapshot } from '../../snapshot.js';
import { makeTestSnapshot } from '../test-snapshot.js';
import { canonicalJson, type SuiteContext } from './context.js';

/** Strings and numbers a careless adapter mangles: unicode, NUL, lone surrogates, JSON's edges. */
export function fidelityPayload(): unknown {
  let deep: unknown = { leaf: true };
  for (let i = 0; i < 30; i++) deep = { level: i, next: [deep] };
  return {
    text: 'héllo wörld ✓ 日本語 😀 \u0000 nul \ud800 lone \udfff low \u2028\u2029 \n\t"q" \\ \'; DROP TABLE x; --',
    numbers: [
      0, -1, 1.5, 0.1, 1e21, 1e-7, 123456789.12345679, 1.7976931348623157e308, -1.7976931348623157e308,
      5e-324, -5e-324, 9007199254740991, -9007199254740991,
    ],
    deep,
    empty: { obj: {}, arr: [], str: '' },
    mixed: [null, true, false, 'x', 1, { a: [{}] }],
    keys: JSON.parse(
      '{"__proto__":{"polluted":1},"$set":{"version":99},"a.b":{"c.d":1},"":0,"constructor":"x","$where":"1","toString":2}',
    ),
  };
}

/** create/load/save round trips, duplicates, stale versions, missing ids and delete. */
export function describeCrud({ fresh }: SuiteContext): void {
  it('setup runs again, and concurrently, without harm', async () => {
    const store = await fresh();
    await store.setup();
    await Promise.all([store.setup(), store.setup()]);
    expect(await store.load('nothing-here')).toBeNull();
  });

  it('create/load/save round-trip the snapshot with JSON fidelity', async () => {
    const store = await fresh();
    const payload = fidelityPayload();
    const first = makeTestSnapshot('fidelity-1', { input: payload, wakeAt: 12_345, status: 'waiting' });
    await store.create(first);
    const loaded = (await store.load('fidelity-1')) as Snapshot;
    expect(canonicalJson(loaded)).toBe(canonicalJson(first));
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    // The caller owns what it loaded: changing it changes nothing stored.
    (loaded.input as { text: string }).text = 'changed';
    expect(canonicalJson(await store.load('fidelity-1'))).toBe(canonicalJson(first));

    const second = {
      ...first,
      version: 2,
      output: payload,
      input: { replaced: 'ü' },
      status: 'completed' as const,
    };
    await store.save(second, 1);
    expect(canonicalJson(await store.load('fidelity-1'))).toBe(canonicalJson(second));
  });

  it('create of an existing id is ALREADY_EXISTS and keeps the stored snapshot', async () => {
    const store = await fresh();
    const original = makeTestSnapshot('dup-1', { input: { who: 'first' } });
    await store.create(original);
    const err = await store.create(makeTestSnapshot('dup-1', { input: { who: 'second' } })).catch((e) => e);
    expect(err).toBeInstanceOf(AlreadyExistsError);
    expect(err).toMatchObject({ code: 'ALREADY_EXISTS', retryable: false });
    expect(await store.load('dup-1')).toEqual(original);
  });

  it('save with a stale or future version is VERSION_CONFLICT and writes nothing', async () => {
    const store = await fresh();
    await store.create(makeTestSnapshot('cas-1'));
    const v2 = makeTestSnapshot('cas-1', { version: 2, input: 'v2' });
    await store.save(v2, 1);
    for (const expected of [1, 0, 3, 7]) {
      const err = await store
        .save(makeTestSnapshot('cas-1', { version: expected + 1, input: 'lost' }), expected)
        .catch((e) => e);
      expect(err).toBeInstanceOf(VersionConflictError);
      expect(err).toMatchObject({ code: 'VERSION_CONFLICT', retryable: true, expectedVersion: expected });
      expect([2, null]).toContain((err as VersionConflictError).actualVersion);
    }
    expect(await store.load('cas-1')).toEqual(v2);
  });

  it('save of a missing id is NOT_FOUND and creates nothing', async () => {
    const store = await fresh();
    const err = await store.save(makeTestSnapshot('ghost', { version: 2 }), 1).catch((e) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ code: 'NOT_FOUND' });
    expect(await store.load('ghost')).toBeNull();
  });

  it('delete removes the instance from load, list and listDue; a second delete is false', async () => {
    const store = await fresh();
    await store.create(makeTestSnapshot('del-1', { wakeAt: 10 }));
    await store.create(makeTestSnapshot('del-2', { wakeAt: 20 }));
    expect(await store.delete('del-1')).toBe(true);
    expect(await store.delete('del-1')).toBe(false);
    expect(await store.delete('never-was')).toBe(false);
    expect(await store.load('del-1')).toBeNull();
    expect((await store.list({ limit: 10 })).items.map((s) => s.id)).toEqual(['del-2']);
    expect(await store.listDue(100, 10)).toEqual(['del-2']);
    await expect(store.save(makeTestSnapshot('del-1', { version: 2 }), 1)).rejects.toBeInstanceOf(
      NotFoundError,
    );
    // The id is free again.
    await store.create(makeTestSnapshot('del-1', { input: 'again' }));
    expect((await store.load('del-1'))?.input).toBe('again');
  });

  it('a save matching a snapshot writes only if exactly that snapshot is stored (a forged notice changes nothing)', async () => {
    const store = await fresh();
    const stored = makeTestSnapshot('match-1', { input: { amount: 10 }, wakeAt: 5 });
    await store.create(stored);
    const forged = { ...stored, input: { amount: 1_000_000 } };
    const next = makeTestSnapshot('match-1', { version: 2, input: { amount: 1_000_000 } });
    const e = await store.save(next, 1, { matches: forged }).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'NOTICE_MISMATCH', retryable: false });
    expect(await store.load('match-1')).toEqual(stored);
    // A stale one (another write came first) is a lost race, as without `matches`.
    await expect(store.save(next, 2, { matches: { ...stored, version: 2 } })).rejects.toMatchObject({
      code: 'VERSION_CONFLICT',
    });
    await store.save(makeTestSnapshot('match-1', { version: 2 }), 1, {
      matches: (await store.load('match-1'))!,
    });
    expect((await store.load('match-1'))?.version).toBe(2);
  });
}

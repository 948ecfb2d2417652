import {
  createMemoryStore,
  defineStore,
  FLOW_HELD_UNTIL_RELEASED,
  type FlowDriver,
  type FlowNeed,
  isFlowText,
  StoreUnavailableError,
} from '@stepfold/engine';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

// What `defineStore` does around a driver's flow calls, beyond the conformance part: what reaches
// the driver, how its failures come out, and the answers the contract normalises.

/** A store whose flow driver records its calls and answers with `answer` (or throws it). */
function recordingStore(answer: () => unknown) {
  const calls: Array<[string, ...unknown[]]> = [];
  const call =
    (name: string) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      const a = answer();
      if (a instanceof Error) throw a;
      return a;
    };
  const flow = {
    acquire: call('acquire'),
    release: call('release'),
    renew: call('renew'),
    list: call('list'),
  } as unknown as FlowDriver;
  const store = defineStore(
    {
      name: 'rec',
      isUnavailable: (e) => (e as { code?: string }).code === 'ECONNREFUSED',
      sizes: { asked: undefined, fallback: 1 << 20 },
    },
    {
      setup: async () => {},
      insert: async () => true,
      select: async () => null,
      update: async () => 'written',
      version: async () => null,
      due: async () => [],
      page: async () => [],
      remove: async () => false,
      flow,
    },
  );
  return { store, calls };
}

describe('flow calls of a defined store', () => {
  it('hands the driver checked copies: needs without extra fields, each counter once at its lowest limit', async () => {
    const { store, calls } = recordingStore(() => ({ granted: true }));
    const needs = [
      { scope: 's', key: 'k', limit: 3, extra: 'dropped' },
      { scope: 's', key: 'k', limit: 2, periodMs: 1000 },
      { scope: 's', key: 'k', limit: 1 },
    ] as FlowNeed[];
    expect(await store.flow!.acquire('h#run#1', 'i-1', needs, 10, 20)).toEqual({ granted: true });
    expect(calls).toEqual([
      [
        'acquire',
        'h#run#1',
        'i-1',
        [
          { scope: 's', key: 'k', limit: 1 },
          { scope: 's', key: 'k', limit: 2, periodMs: 1000 },
        ],
        10,
        20,
      ],
    ]);
    // Empty lists never reach the driver; duplicates are sent once.
    expect(await store.flow!.release([], 10)).toEqual([]);
    await store.flow!.renew([], 10);
    await store.flow!.release(['a', 'a', 'b'], 10);
    expect(calls.at(-1)).toEqual(['release', ['a', 'b'], 10]);
    // Counters each once, where they stand first, copied without extra fields; past eight as well.
    const c = (key: string, period = 0) => ({ scope: 's', key, period });
    await store.flow!.release(['a'], 10, [c('k'), { ...c('k'), extra: 1 } as never, c('k', 1000), c('k')]);
    expect(calls.at(-1)).toEqual(['release', ['a'], 10, [c('k'), c('k', 1000)]]);
    const many = Array.from({ length: 12 }, (_, i) => c(`k${i % 10}`));
    await store.flow!.renew(['a'], 20, many);
    expect(calls.at(-1)).toEqual(['renew', ['a'], 20, many.slice(0, 10)]);
  });

  it('refuses holders that are not 1-1000 printable ASCII characters without spaces (INVALID_ID)', async () => {
    const { store, calls } = recordingStore(() => ({ granted: true }));
    const need = [{ scope: 's', key: '', limit: 1 }];
    for (const bad of ['', 'a b', 'a\u007f', 'ä', 'a\tb', 'x'.repeat(1001)]) {
      await expect(store.flow!.acquire(bad, 'i', need, 1, 2)).rejects.toMatchObject({ code: 'INVALID_ID' });
      await expect(store.flow!.release([bad], 1)).rejects.toMatchObject({ code: 'INVALID_ID' });
      await expect(store.flow!.release(['ok', bad], 1)).rejects.toMatchObject({ code: 'INVALID_ID' });
    }
    expect(calls).toEqual([]);
    expect(await store.flow!.acquire('!~#x'.repeat(250), 'i', need, 1, 2)).toEqual({ granted: true });
  });

  it('turns an unreachable server into STORE_UNAVAILABLE, and lets other driver errors through', async () => {
    let error: Error = Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    const { store } = recordingStore(() => error);
    const need = [{ scope: 's', key: '', limit: 1 }];
    for (const p of [
      store.flow!.acquire('h', 'i', need, 1, 2),
      store.flow!.release(['h'], 1),
      store.flow!.renew(['h'], 2),
      store.flow!.list({ limit: 1, now: 1 }),
    ])
      await expect(p).rejects.toBeInstanceOf(StoreUnavailableError);
    error = new TypeError('a bug');
    await expect(store.flow!.acquire('h', 'i', need, 1, 2)).rejects.toBe(error);
  });

  it('a denial behind a hold that lasts until released gives no time to wait for', async () => {
    const store = createMemoryStore();
    const need = [{ scope: 'instances', key: 'tenant-1', limit: 1 }];
    await store.flow!.acquire('i-1', 'i-1', need, 100, FLOW_HELD_UNTIL_RELEASED);
    expect(await store.flow!.acquire('i-2', 'i-2', need, 200, FLOW_HELD_UNTIL_RELEASED)).toEqual({
      granted: false,
      need: need[0],
      until: null,
      count: 1,
    });
    expect(await store.flow!.release(['i-1'], 300)).toEqual(['i-2']);
    expect((await store.flow!.acquire('i-2', 'i-2', need, 400, FLOW_HELD_UNTIL_RELEASED)).granted).toBe(true);
  });

  it('isFlowText says which scopes and keys a store can hold', () => {
    expect(['', 'k', 'ünï 😀', 'x'.repeat(512)].every((k) => isFlowText(k))).toBe(true);
    expect(['a\u0000b', '\ud800', 'x'.repeat(513), 7, null].some((k) => isFlowText(k))).toBe(false);
    expect(isFlowText('', 'scope')).toBe(false);
    for (const lone of ['\udc00', 'a\udc00b', 'a\ud800', '\ud800a', '\udc00\ud800', '\ud83d\ude00\ude00'])
      expect(isFlowText(lone)).toBe(false);
    expect(isFlowText('\ud83d\ude00\ud83d\ude00')).toBe(true);
  });

  it('isFlowText refuses exactly the strings with NUL or a lone surrogate (any UTF-16 units)', () => {
    const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
    const unit = fc.oneof(
      fc.integer({ min: 0, max: 0x7f }),
      fc.integer({ min: 0xd7ff, max: 0xe000 }),
      fc.integer({ min: 0, max: 0xffff }),
    );
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 12 }), (units) => {
        const text = String.fromCharCode(...units);
        expect(isFlowText(text)).toBe(!text.includes('\0') && !lone.test(text));
      }),
      { numRuns: 2000 },
    );
  });
});

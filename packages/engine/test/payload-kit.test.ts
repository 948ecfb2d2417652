import {
  createMemoryPayloadStore,
  DEFAULT_MAX_PAYLOAD_BYTES,
  definePayloadStore,
  MAX_PAYLOAD_PAGE,
  type PayloadDriver,
  sha256Hex,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

/** A driver that records its calls; `fail` makes every call throw it. */
function recording(fail?: unknown) {
  const calls: string[] = [];
  const hashes = Array.from({ length: 1500 }, (_, i) => sha256Hex(String(i))).sort();
  const call = async <T>(name: string, value: T): Promise<T> => {
    calls.push(name);
    if (fail !== undefined) throw fail;
    return value;
  };
  const driver: PayloadDriver = {
    setup: () => call('setup', undefined),
    put: (p) => call(`put ${p.owner} ${p.bytes}`, undefined),
    get: () => call('get', null),
    list: (_o, after, limit) =>
      call(`list ${limit}`, hashes.filter((h) => after === null || h > after).slice(0, limit)),
    delete: (_o, shas) => call(`delete ${shas.length}`, shas.length),
    deleteOwner: () => call('deleteOwner', 0),
  };
  return { calls, driver, hashes };
}

const sizes = { asked: 100, fallback: 100, most: 1000 };
const refused = { code: 'ECONNREFUSED' };
const isUnavailable = (e: unknown) => e === refused;

describe('payload kit', () => {
  it('refuses a size limit the database cannot hold', () => {
    const { driver } = recording();
    for (const asked of [0, -1, 1.5, 1001])
      expect(() =>
        definePayloadStore({ name: 't', isUnavailable, sizes: { ...sizes, asked } }, driver),
      ).toThrow(RangeError);
    expect(
      definePayloadStore({ name: 't', isUnavailable, sizes: { ...sizes, asked: 1000 } }, driver)
        .maxPayloadBytes,
    ).toBe(1000);
  });

  it('defaults the limit to 16 MiB when the adapter names no default, capped by what the database holds', () => {
    const { driver } = recording();
    const limit = (s: { asked: number | undefined; fallback?: number; most?: number }) =>
      definePayloadStore({ name: 't', isUnavailable, sizes: s }, driver).maxPayloadBytes;
    expect(DEFAULT_MAX_PAYLOAD_BYTES).toBe(16 * 1024 * 1024);
    expect(limit({ asked: undefined })).toBe(DEFAULT_MAX_PAYLOAD_BYTES);
    expect(limit({ asked: undefined, most: 1 << 30 })).toBe(DEFAULT_MAX_PAYLOAD_BYTES);
    expect(limit({ asked: 1 << 30, most: 1 << 30 })).toBe(1 << 30);
    // Without `most`, the default is also the most: asking for more is refused.
    expect(() => limit({ asked: DEFAULT_MAX_PAYLOAD_BYTES + 1 })).toThrow(RangeError);
  });

  it("sets the adapter's own fields on the store, getters kept live, beside the contract's methods", async () => {
    const { calls, driver } = recording();
    let count = 0;
    const store = definePayloadStore({ name: 't', isUnavailable, sizes }, driver, {
      table: 'payloads',
      get count() {
        return count;
      },
    });
    expect(store.table).toBe('payloads');
    count = 2;
    expect(store.count).toBe(2);
    await store.setup();
    expect(calls).toEqual(['setup']);
    // A store is a plain object: spreading it keeps every method (callers wrap stores so).
    const wrapped = { ...store };
    expect(await wrapped.deleteOwner('o')).toBe(0);
    expect(wrapped.table).toBe('payloads');
  });

  it('hands the driver checked bodies with their UTF-8 size, and nothing it would refuse', async () => {
    const { calls, driver } = recording();
    const store = definePayloadStore({ name: 't', isUnavailable, sizes }, driver);
    await store.put('o-1', sha256Hex('"ü😀"'), '"ü😀"');
    expect(calls).toEqual(['put o-1 8']);
    await expect(store.put('o-1', sha256Hex('"x"'), '"y"')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    const big = `"${'x'.repeat(99)}"`;
    await expect(store.put('o-1', sha256Hex(big), big)).rejects.toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      bytes: 101,
      limit: 100,
    });
    await expect(store.get('o 1', sha256Hex('1'))).rejects.toMatchObject({ code: 'INVALID_ID' });
    await expect(store.delete('o', 'ab' as unknown as string[])).rejects.toBeInstanceOf(TypeError);
    expect(calls).toEqual(['put o-1 8']);
  });

  it('cuts list pages at MAX_PAYLOAD_PAGE and asks the driver for one more', async () => {
    const { calls, driver, hashes } = recording();
    const store = definePayloadStore({ name: 't', isUnavailable, sizes }, driver);
    const page = await store.list('o', { limit: 5000 });
    expect(page.items).toEqual(hashes.slice(0, MAX_PAYLOAD_PAGE));
    expect(page.cursor).toBe(hashes[MAX_PAYLOAD_PAGE - 1]);
    const last = await store.list('o', { limit: 5000, cursor: page.cursor });
    expect(last).toEqual({ items: hashes.slice(MAX_PAYLOAD_PAGE), cursor: null });
    expect(calls).toEqual([`list ${MAX_PAYLOAD_PAGE + 1}`, `list ${MAX_PAYLOAD_PAGE + 1}`]);
  });

  it('passes distinct hashes to delete, and skips the call for none', async () => {
    const { calls, driver } = recording();
    const store = definePayloadStore({ name: 't', isUnavailable, sizes }, driver);
    const h = sha256Hex('1');
    expect(await store.delete('o', [h, h, h])).toBe(1);
    expect(await store.delete('o', [])).toBe(0);
    expect(calls).toEqual(['delete 1']);
  });

  it('turns an unreachable server into STORE_UNAVAILABLE (cause kept) and lets other errors through', async () => {
    const down = definePayloadStore({ name: 'tdb', isUnavailable, sizes }, recording(refused).driver);
    const err = await down.get('o', sha256Hex('1')).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'STORE_UNAVAILABLE', retryable: true, cause: refused });
    const broken = new Error('syntax error');
    const other = definePayloadStore({ name: 'tdb', isUnavailable, sizes }, recording(broken).driver);
    await expect(other.deleteOwner('o')).rejects.toBe(broken);
  });

  it('the memory payload store counts what it holds, across owners, as puts and deletes go', async () => {
    const store = createMemoryPayloadStore();
    expect(store.size).toBe(0);
    await store.put('a', sha256Hex('1'), '1');
    await store.put('a', sha256Hex('1'), '1');
    await store.put('a/b', sha256Hex('1'), '1');
    await store.put('a', sha256Hex('2'), '2');
    expect(store.size).toBe(3);
    await store.deleteOwner('a');
    expect(store.size).toBe(1);
    expect(() => createMemoryPayloadStore({ maxPayloadBytes: 0 })).toThrow(RangeError);
  });
});

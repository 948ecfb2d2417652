import { expect, it } from 'vitest';
import { sha256Hex } from '../../content-hash.js';
import { ValidationError } from '../../errors.js';
import { MAX_ID_LENGTH } from '../../ids.js';
import { PayloadTooLargeError } from '../../payloads/payload-errors.js';
import type { PayloadStore } from '../../payloads/payload-store.js';
import { fidelityPayload } from './crud.js';
import { jsonOfBytes, type PayloadSuiteContext } from './payload-context.js';

// Bodies at the limit are written for real only up to this size, to keep the suite quick.
const AT_LIMIT_CHECK_MAX = 16 * 1024 * 1024;

/** JSON texts a careless adapter mangles: astral characters, escaped NUL and separators, quotes, SQL. */
const TRICKY_BODIES = [
  JSON.stringify('hello'),
  '{}',
  '[]',
  'null',
  JSON.stringify('\u0000'),
  JSON.stringify({ s: 'ü 日本語 😀𝄞 \u2028\u2029 \t\n "q" \\ \'; DROP TABLE x; --', n: [1.5, -0, 1e21] }),
  JSON.stringify(fidelityPayload()),
  ` { "spaced" : [ 1 , 2 ] }\n`,
];

// Refused before any I/O: quotes, operators, whitespace, control characters, 10 KB, not strings.
const INVALID_OWNERS: unknown[] = [
  "it's",
  '$where',
  '{"$gt":""}',
  'a b',
  '',
  'a\u0000b',
  'line\nbreak',
  'é',
  '*',
  'a{b}',
  'x'.repeat(MAX_ID_LENGTH + 1),
  'k'.repeat(10 * 1024),
  42,
  null,
  undefined,
];

const HEX = 'ab'.repeat(32);
const INVALID_HASHES: unknown[] = [
  HEX.toUpperCase(),
  HEX.slice(1),
  `${HEX}0`,
  `${HEX.slice(1)}g`,
  `${HEX.slice(2)}\n`,
  '../../etc/passwd',
  '',
  '*',
  null,
  42,
];

/** The body's reject reason, or an Error saying it resolved. */
const refusal = (call: Promise<unknown>): Promise<unknown> =>
  call.then(
    () => new Error('resolved'),
    (e: unknown) => e,
  );

/** Puts `body` under its own hash; resolves with the hash. */
export async function putBody(store: PayloadStore, owner: string, body: string): Promise<string> {
  const sha = sha256Hex(body);
  await store.put(owner, sha, body);
  return sha;
}

/** Every hash of `owner`, page by page with `limit`, and how many pages it took. */
export async function listAll(store: PayloadStore, owner: string, limit: number) {
  const items: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await store.list(owner, { limit, cursor });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    items.push(...page.items);
    cursor = page.cursor;
    pages++;
  } while (cursor !== null && pages < 10_000);
  return { items, pages };
}

/** Round trips, sizes, idempotence and hostile input. */
export function describePayloadBasics({ fresh }: PayloadSuiteContext): void {
  it('setup runs again, and concurrently, without harm', async () => {
    const store = await fresh();
    await store.setup();
    await Promise.all([store.setup(), store.setup()]);
    expect(await store.get('nobody', HEX)).toBeNull();
  });

  it('bodies round-trip exactly (Unicode, astral characters, escaped NUL, whitespace)', async () => {
    const store = await fresh();
    for (const body of TRICKY_BODIES) {
      const sha = await putBody(store, 'fidelity', body);
      expect(await store.get('fidelity', sha)).toBe(body);
    }
    expect((await store.list('fidelity', { limit: 100 })).items).toEqual(
      [...new Set(TRICKY_BODIES.map(sha256Hex))].sort(),
    );
    // Owners are apart: the same body under another owner is another payload.
    expect(await store.get('other', sha256Hex(TRICKY_BODIES[0]!))).toBeNull();
  });

  it('a body of exactly maxPayloadBytes is stored; one byte more is PAYLOAD_TOO_LARGE, storing nothing', async () => {
    const store = await fresh();
    const max = store.maxPayloadBytes;
    expect(max).toBeGreaterThan(1024);
    const exact = jsonOfBytes(Math.min(max, AT_LIMIT_CHECK_MAX));
    const sha = await putBody(store, 'sizes', exact);
    expect(await store.get('sizes', sha)).toBe(exact);

    // The size is checked before the hash (a cheap refusal first), so any well-formed name will do.
    const over = jsonOfBytes(max + 1);
    const err = await refusal(store.put('sizes', HEX, over));
    expect(err).toBeInstanceOf(PayloadTooLargeError);
    expect(err).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', owner: 'sizes', bytes: max + 1, limit: max });
    expect(await store.get('sizes', HEX)).toBeNull();
    expect((await store.list('sizes', { limit: 10 })).items).toEqual([sha]);
  });

  it('put is idempotent: twice, and 16 concurrent puts of one pair, leave one copy and no error', async () => {
    const store = await fresh();
    const body = JSON.stringify({ order: 'o-1', lines: Array.from({ length: 50 }, (_, i) => ({ i })) });
    const sha = await putBody(store, 'idem', body);
    await store.put('idem', sha, body);
    const racing = JSON.stringify({ racing: 'ü😀'.repeat(1000) });
    const results = await Promise.allSettled(
      Array.from({ length: 16 }, () => store.put('idem', sha256Hex(racing), racing)),
    );
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(await store.get('idem', sha)).toBe(body);
    expect(await store.get('idem', sha256Hex(racing))).toBe(racing);
    expect((await store.list('idem', { limit: 10 })).items).toEqual([sha, sha256Hex(racing)].sort());
    expect(await store.deleteOwner('idem')).toBe(2);
  });

  it('get of a missing pair is null (unknown owner, unknown hash)', async () => {
    const store = await fresh();
    expect(await store.get('missing', HEX)).toBeNull();
    await putBody(store, 'missing', '1');
    expect(await store.get('missing', HEX)).toBeNull();
    expect(await store.list('nobody', { limit: 5 })).toEqual({ items: [], cursor: null });
  });

  it('hostile owners are INVALID_ID on every call, nothing written', async () => {
    const store = await fresh();
    const body = '"x"';
    const sha = sha256Hex(body);
    for (const owner of INVALID_OWNERS) {
      const o = owner as string;
      const label = typeof owner === 'string' ? owner.slice(0, 20) : String(owner);
      for (const call of [
        store.put(o, sha, body),
        store.get(o, sha),
        store.list(o, { limit: 10 }),
        store.delete(o, [sha]),
        store.deleteOwner(o),
      ]) {
        const err = await refusal(call);
        expect(err, label).toBeInstanceOf(ValidationError);
        expect(err, label).toMatchObject({ code: 'INVALID_ID' });
      }
    }
  });

  it('hostile hashes, a body that does not hash to its name, NUL and lone surrogates are INVALID_INPUT', async () => {
    const store = await fresh();
    const body = '"x"';
    await putBody(store, 'h', '"kept"');
    const calls = (h: string) => [
      store.put('h', h, body),
      store.get('h', h),
      store.delete('h', [h]),
      // A null cursor is the first page, not a bad one.
      ...(h === null ? [] : [store.list('h', { limit: 1, cursor: h })]),
    ];
    for (const hash of INVALID_HASHES) {
      for (const call of calls(hash as string)) {
        const err = await refusal(call);
        expect(err, String(hash)).toBeInstanceOf(ValidationError);
        expect(err, String(hash)).toMatchObject({ code: 'INVALID_INPUT' });
      }
    }
    const bad = [
      [sha256Hex('"y"'), body],
      [sha256Hex('"a\u0000b"'), '"a\u0000b"'],
      [sha256Hex('"\ud800"'), '"\ud800"'],
      [sha256Hex('"\udfff x"'), '"\udfff x"'],
      [sha256Hex(body), 42],
    ] as const;
    for (const [h, b] of bad) {
      const err = await refusal(store.put('h', h, b as string));
      expect(err).toMatchObject({ code: 'INVALID_INPUT' });
    }
    expect((await store.list('h', { limit: 10 })).items).toEqual([sha256Hex('"kept"')]);
    for (const limit of [0, -1, 1.5, Number.NaN, '10'])
      await expect(store.list('h', { limit: limit as number })).rejects.toBeInstanceOf(RangeError);
  });
}

import { expect, it } from 'vitest';
import { SnapshotTooLargeError, ValidationError } from '../../errors.js';
import { MAX_ID_LENGTH } from '../../ids.js';
import type { Snapshot } from '../../snapshot.js';
import { makeTestSnapshot, snapshotOfSize } from '../test-snapshot.js';
import type { SuiteContext } from './context.js';

// Valid ids that name things in JavaScript, paths or query languages: stored as plain data.
const TRICKY_VALID_IDS = [
  '__proto__',
  'constructor',
  'hasOwnProperty',
  'prototype',
  '../etc/passwd',
  'a:b/c@d+e=f-g.h_i',
  '0',
  '-',
  'x'.repeat(MAX_ID_LENGTH),
];

// Refused before any write: quotes, operators, whitespace, control characters, a 10 KB id.
const INVALID_IDS: unknown[] = [
  "it's",
  'a"b',
  '$where',
  '$',
  '{"$gt":""}',
  'a b',
  '',
  'a\u0000b',
  'line\nbreak',
  'é',
  '*',
  'x'.repeat(MAX_ID_LENGTH + 1),
  'k'.repeat(10 * 1024),
  42,
  null,
];

// Snapshots at the limit are written for real only up to this size, to keep the suite quick.
const AT_LIMIT_CHECK_MAX = 16 * 1024 * 1024;

/** Size limit and hostile ids: refused with typed errors, nothing half-written. */
export function describeLimits({ fresh }: SuiteContext): void {
  it('a snapshot over maxSnapshotBytes is SNAPSHOT_TOO_LARGE on create and save, writing nothing', async () => {
    const store = await fresh();
    const max = store.maxSnapshotBytes;
    expect(max).toBeGreaterThan(1024);
    const over = await store.create(snapshotOfSize('too-big', max + 1)).catch((e) => e);
    expect(over).toBeInstanceOf(SnapshotTooLargeError);
    expect(over).toMatchObject({ code: 'SNAPSHOT_TOO_LARGE', bytes: max + 1, limit: max });
    expect(await store.load('too-big')).toBeNull();
    expect((await store.list({ limit: 10 })).items).toEqual([]);

    const small = makeTestSnapshot('grows', { input: 'small', wakeAt: 5 });
    await store.create(small);
    const grown = snapshotOfSize('grows', max + 1, { version: 2, wakeAt: null, status: 'completed' });
    await expect(store.save(grown, 1)).rejects.toBeInstanceOf(SnapshotTooLargeError);
    expect(await store.load('grows')).toEqual(small);
    expect(await store.listDue(10, 10)).toEqual(['grows']);
  });

  it('a snapshot of exactly maxSnapshotBytes (multi-byte text included) is stored', async () => {
    const store = await fresh();
    const max = store.maxSnapshotBytes;
    const size = Math.min(max, AT_LIMIT_CHECK_MAX);
    const exact = snapshotOfSize('at-limit', size, { output: 'ü😀 ✓' });
    expect(new TextEncoder().encode(JSON.stringify(exact)).length).toBe(size);
    await store.create(exact);
    expect(await store.load('at-limit')).toEqual(exact);
  });

  it('ids that are valid but tricky round-trip as plain data', async () => {
    const store = await fresh();
    for (const id of TRICKY_VALID_IDS) {
      await store.create(makeTestSnapshot(id, { input: { id } }));
      await store.save(makeTestSnapshot(id, { version: 2, input: { id, saved: true }, wakeAt: 1 }), 1);
      expect(await store.load(id), id.slice(0, 40)).toEqual(
        makeTestSnapshot(id, { version: 2, input: { id, saved: true }, wakeAt: 1 }),
      );
    }
    const listed = (await store.list({ limit: 100 })).items.map((s) => s.id);
    expect(listed).toEqual([...TRICKY_VALID_IDS].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect((await store.listDue(1, 100)).sort()).toEqual([...TRICKY_VALID_IDS].sort());
    expect(Object.hasOwn(Object.prototype, 'saved')).toBe(false);
    for (const id of TRICKY_VALID_IDS) expect(await store.delete(id)).toBe(true);
  });

  it('invalid ids (quotes, $, whitespace, NUL, 10 KB) are INVALID_ID on every call, nothing written', async () => {
    const store = await fresh();
    for (const id of INVALID_IDS) {
      const label = typeof id === 'string' ? id.slice(0, 20) : String(id);
      const s = makeTestSnapshot(id as string);
      const calls: Array<Promise<unknown>> = [
        store.create(s),
        store.save({ ...s, version: 2 } as Snapshot, 1),
        store.load(id as string),
        store.delete(id as string),
      ];
      for (const call of calls) {
        const err = await call.then(
          () => new Error('resolved'),
          (e: unknown) => e,
        );
        expect(err, label).toBeInstanceOf(ValidationError);
        expect(err, label).toMatchObject({ code: 'INVALID_ID' });
      }
    }
    expect(await store.list({ limit: 100 })).toEqual({ items: [], cursor: null });
  });
}

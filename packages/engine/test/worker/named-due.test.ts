import { describe, expect, it } from 'vitest';
import { makeTestSnapshot } from '../../src/testing/test-snapshot.js';
import { GIVEN_FRESH_MS, NamedDue } from '../../src/worker/named-due.js';

const snap = (id: string) => makeTestSnapshot(id);

describe('NamedDue: one queue of named instances', () => {
  it('takes held and handed-over instances first, then sent, then hinted, within one budget', () => {
    const q = new NamedDue();
    q.put({ id: 'h', via: 'hint', at: 10 });
    q.put({ id: 's', via: 'sent', at: 10 });
    q.put({ id: 'g', via: 'given', at: 10, snapshot: snap('g') });
    q.put({ id: 'k', via: 'held', at: 10, snapshot: snap('k') });
    const first = q.take(10, 3);
    expect(first.ready.map((e) => e.id)).toEqual(['k', 'g']);
    expect(first.sent.map((e) => e.id)).toEqual(['s']);
    expect(first.hinted).toEqual([]);
    expect(q.take(10, 3).hinted.map((e) => e.id)).toEqual(['h']);
    expect(q.size).toBe(0);
  });

  it('a snapshot that went stale waiting for a slot is claimed by id: a handed-over one as a stand-by, its signals from the inbox', () => {
    const q = new NamedDue();
    const sent = [{ seq: 1, event: { type: 'signal' as const, at: 10, name: 'go' } }];
    q.put({ id: 'fresh', via: 'given', at: 10, snapshot: snap('fresh') });
    q.put({ id: 'old', via: 'given', at: 9, snapshot: snap('old') });
    q.put({ id: 'old-sent', via: 'given', at: 9, snapshot: snap('old-sent'), sent });
    q.put({ id: 'lapsed', via: 'held', at: 9, snapshot: snap('lapsed') });
    q.put({ id: 'kept', via: 'held', at: 10, snapshot: snap('kept') });
    const now = 10 + GIVEN_FRESH_MS;
    const got = q.take(now, 10, GIVEN_FRESH_MS + 1);
    expect(got.ready.map((e) => e.id)).toEqual(['kept', 'fresh']);
    expect(got.hinted).toEqual([
      { id: 'lapsed', via: 'hint', at: 9 },
      { id: 'old', via: 'hint', at: 9, standby: true },
    ]);
    expect(got.sent).toEqual([{ id: 'old-sent', via: 'sent', at: 9, standby: true }]);
  });

  it('leaves what is not due yet, and says whether anything is', () => {
    const q = new NamedDue();
    q.put({ id: 'later', via: 'hint', at: 100 });
    expect(q.anyDue(99)).toBe(false);
    expect(q.take(99, 10).hinted).toEqual([]);
    expect(q.anyDue(100)).toBe(true);
  });

  it('held and given replace the same instance hint; a newer entry of one way replaces the older', () => {
    const q = new NamedDue();
    q.put({ id: 'a', via: 'hint', at: 5 });
    q.put({ id: 'a', via: 'held', at: 5, snapshot: snap('a') });
    expect(q.get('hint', 'a')).toBeUndefined();
    q.put({ id: 'b', via: 'given', at: 5, snapshot: snap('b') });
    const newer = { ...snap('b'), version: 7 };
    q.put({ id: 'b', via: 'given', at: 6, snapshot: newer });
    expect(q.get('given', 'b')?.snapshot?.version).toBe(7);
    expect(q.size).toBe(2);
  });

  it('a stand-by mark stays until the claim it was for is taken', () => {
    const q = new NamedDue();
    q.put({ id: 'a', via: 'hint', at: 5, standby: true });
    q.put({ id: 'a', via: 'hint', at: 6 });
    expect(q.take(6, 1).hinted[0]).toMatchObject({ id: 'a', at: 6, standby: true });
  });

  it('one cap for all ways, and its own for held; clear returns the held ids to give back', () => {
    const q = new NamedDue(3, 1);
    expect(q.put({ id: 'a', via: 'held', at: 1, snapshot: snap('a') })).toBe(true);
    expect(q.canHold).toBe(false);
    expect(q.put({ id: 'b', via: 'held', at: 1, snapshot: snap('b') })).toBe(false);
    expect(q.put({ id: 'c', via: 'hint', at: 1 })).toBe(true);
    expect(q.put({ id: 'd', via: 'sent', at: 1 })).toBe(true);
    expect(q.put({ id: 'e', via: 'hint', at: 1 })).toBe(false);
    expect(q.put({ id: 'c', via: 'hint', at: 2 })).toBe(true); // a known one is updated, full or not
    expect(q.clear()).toEqual(['a']);
    expect(q.canHold).toBe(true);
    q.put({ id: 'f', via: 'held', at: 1, snapshot: snap('f') });
    q.drop('held', 'f');
    expect(q.canHold).toBe(true);
  });
});

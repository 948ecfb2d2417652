import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dueBound, dueKey, shardOf, sortableNumber } from '../src/encode.js';

const finite = fc.double({ noNaN: true, noDefaultInfinity: true });
const id = fc.stringMatching(/^[A-Za-z0-9_.:@/+=-]{1,20}$/);

describe('due-index sort key', () => {
  it('orders numbers as strings exactly as numerically', () => {
    fc.assert(
      fc.property(finite, finite, (a, b) => {
        const sa = sortableNumber(a);
        const sb = sortableNumber(b);
        expect(sa).toHaveLength(16);
        expect(sa < sb).toBe(a < b);
      }),
    );
  });

  it('treats -0 as 0', () => {
    expect(sortableNumber(-0)).toBe(sortableNumber(0));
  });

  it('a key is below the bound exactly when its wake time is due', () => {
    fc.assert(
      fc.property(finite, finite, id, (wakeAt, now, i) => {
        expect(dueKey(wakeAt, i) < dueBound(now)).toBe(wakeAt <= now);
      }),
    );
  });

  it('equal wake times order by id', () => {
    fc.assert(
      fc.property(finite, id, id, (at, a, b) => {
        expect(dueKey(at, a) < dueKey(at, b)).toBe(a < b);
      }),
    );
  });
});

describe('due shard of an id', () => {
  it('is a fixed FNV-1a hash: the same shard in every process and version', () => {
    // Changing the hash would strand every stored due entry on a shard no query reads.
    expect(shardOf('order-42', 2 ** 32)).toBe(1461995252);
    fc.assert(
      fc.property(id, fc.integer({ min: 1, max: 64 }), (i, n) => {
        const s = shardOf(i, n);
        expect(Number.isInteger(s) && s >= 0 && s < n).toBe(true);
        expect(shardOf(i, n)).toBe(s);
      }),
    );
  });
});

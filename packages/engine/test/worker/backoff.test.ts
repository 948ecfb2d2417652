import { describe, expect, it } from 'vitest';
import { backoffDelay, checkBackoff, OUTAGE_BACKOFF } from '../../src/backoff.js';

const mid = () => 0.5; // no jitter: the middle of the range
describe('backoffDelay', () => {
  it('grows by the factor from firstMs and stops at maxMs', () => {
    const p = { firstMs: 100, maxMs: 1_000, factor: 2, jitter: 0.2 };
    expect([0, 1, 2, 3, 4, 10, 1e6].map((a) => backoffDelay(p, a, mid))).toEqual([
      100, 200, 400, 800, 1_000, 1_000, 1_000,
    ]);
  });

  it('moves each delay by at most ± jitter of itself, and never above maxMs', () => {
    const p = { firstMs: 100, maxMs: 1_000, jitter: 0.2 };
    expect(backoffDelay(p, 0, () => 0)).toBeCloseTo(80);
    expect(backoffDelay(p, 0, () => 0.999999)).toBeCloseTo(120, 3);
    expect(backoffDelay(p, 20, () => 0.999999)).toBe(1_000);
    expect(backoffDelay(p, 20, () => 0)).toBeCloseTo(800);
  });

  it('a negative attempt counts as the first; jitter 0 is exact', () => {
    expect(backoffDelay({ firstMs: 50, maxMs: 500, jitter: 0 }, -3, Math.random)).toBe(50);
  });

  it('the outage schedule: 100 ms to 5 s', () => {
    expect(backoffDelay(OUTAGE_BACKOFF, 0, mid)).toBe(100);
    expect(backoffDelay(OUTAGE_BACKOFF, 99, mid)).toBe(5_000);
  });

  it('checkBackoff refuses schedules that cannot work', () => {
    expect(() => checkBackoff('x', { firstMs: 10, maxMs: 5 })).toThrow(RangeError);
    expect(() => checkBackoff('x', { firstMs: -1, maxMs: 5 })).toThrow(/0 <= firstMs/);
    expect(() => checkBackoff('x', { firstMs: 1, maxMs: 5, factor: 0.5 })).toThrow(/factor/);
    expect(() => checkBackoff('x', { firstMs: 1, maxMs: 5, jitter: 1 })).toThrow(/jitter/);
    expect(checkBackoff('x', OUTAGE_BACKOFF)).toBe(OUTAGE_BACKOFF);
  });
});

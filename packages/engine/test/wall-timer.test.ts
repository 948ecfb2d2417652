import { afterEach, describe, expect, it, vi } from 'vitest';
import { WallTimer } from '../src/worker/clock.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('WallTimer', () => {
  it('measures time to a wall-clock ms to a fraction of a ms, never ahead of Date.now()', () => {
    const t = new WallTimer();
    const at = Date.now() + 50;
    for (let i = 0; i < 200; i++) {
      const before = at - Date.now();
      const ms = t.until(at);
      const after = at - Date.now();
      // Date.now() floors the wall clock: the exact time left is within its last whole ms.
      expect(ms).toBeLessThanOrEqual(before);
      expect(ms).toBeGreaterThan(after - 1);
    }
    // Fractions appear once the offset is learned: not every answer is a whole number.
    const fractions = Array.from({ length: 50 }, () => t.until(at) % 1);
    expect(fractions.some((f) => f !== 0)).toBe(true);
  });

  it('follows a wall clock stepped back or forward', () => {
    const t = new WallTimer();
    const real = Date.now.bind(Date);
    const at = real() + 10_000;
    // Bounds from the real clock read before or after each answer, so a descheduled test (a busy
    // machine) cannot fail them: what is left only shrinks between the two reads.
    const left = () => at - real();
    expect(t.until(at)).toBeGreaterThan(left() - 1);
    let shift = -5_000;
    vi.spyOn(Date, 'now').mockImplementation(() => real() + shift);
    // Stepped back 5 s: 5 s more to wait.
    expect(t.until(at)).toBeGreaterThan(left() + 5_000 - 1);
    shift = 3_000;
    // Stepped forward: less to wait at once (the largest offset seen wins).
    const before = left();
    expect(t.until(at)).toBeLessThanOrEqual(before - 3_000 + 1);
  });
});

import { describe, expect, it } from 'vitest';
import { WakeTimes } from '../../src/worker/wake-times.js';

describe('WakeTimes', () => {
  it('keeps distinct times ascending, says when one is the new earliest, and drops the latest past max', () => {
    const w = new WakeTimes(3);
    expect(w.add(30, true)).toBe(true);
    expect(w.add(20, true)).toBe(true);
    expect(w.add(40, true)).toBe(false);
    expect(w.add(20, true)).toBe(false);
    expect(w.add(10, true)).toBe(true);
    expect(w.earliest).toBe(10);
    expect(w.pass(35)).toBe(false);
    expect(w.earliest).toBeUndefined(); // 40 was dropped past max
  });

  it('pass says whether an unnamed time passed (the round must poll every lane)', () => {
    const w = new WakeTimes(10);
    w.add(10, true);
    w.add(20, false);
    expect(w.pass(15)).toBe(false);
    expect(w.pass(25)).toBe(true);
    expect(w.pass(30)).toBe(false);
  });
});

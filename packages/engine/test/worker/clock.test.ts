import { describe, expect, it, vi } from 'vitest';
import { jittered, randomToken, Sleeper, WallTimer, within } from '../../src/worker/clock.js';

describe('the worker clock', () => {
  it('a Sleeper woken before it sleeps returns at once, once', async () => {
    const s = new Sleeper();
    s.wake();
    const t0 = Date.now();
    await s.sleep(10_000);
    expect(Date.now() - t0).toBeLessThan(1_000);
    let ended = false;
    const p = s.sleep(10_000).then(() => (ended = true));
    await new Promise((r) => setTimeout(r, 5));
    expect(ended).toBe(false);
    s.wake();
    await p;
    expect(ended).toBe(true);
  });

  it('within waits at most its bound and clears its timer whichever comes first', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      await within(Promise.resolve(), 5_000);
      expect(vi.getTimerCount()).toBe(0);
      const never = within(new Promise(() => {}), 5_000);
      expect(vi.getTimerCount()).toBe(1);
      await vi.advanceTimersByTimeAsync(5_000);
      await never;
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('jitter stays within its share; tokens differ', () => {
    for (let i = 0; i < 100; i++) {
      const v = jittered(100, 0.1);
      expect(v).toBeGreaterThanOrEqual(90);
      expect(v).toBeLessThanOrEqual(110);
    }
    expect(randomToken()).not.toBe(randomToken());
  });

  it('WallTimer never runs ahead of Date.now', () => {
    const w = new WallTimer();
    for (let i = 0; i < 50; i++) {
      const at = Date.now();
      expect(w.until(at)).toBeLessThanOrEqual(0.001);
      // Against the wall clock read after the call, so a stall of this process (a loaded machine)
      // cannot fail it: the time left is never less than what is really left (1 ms granularity).
      const left = w.until(at + 100);
      const after = Date.now();
      expect(left).toBeGreaterThanOrEqual(at + 100 - after - 1);
      expect(left).toBeLessThanOrEqual(100);
    }
  });
});

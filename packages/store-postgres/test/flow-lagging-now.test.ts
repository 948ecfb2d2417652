import { describe, expect, it } from 'vitest';
import { useTestTables } from './test-tables.js';

// A rate limit with callers whose `now` lags: each process reads its clock, then its statement
// runs; a caller whose statement lands after a later caller's carries the earlier time. The later
// caller must not prune (or a release delete) starts the lagging caller's window still holds:
// with the starts of one period only, a lagging acquire counted 5 of 10 and let an 11th start in.

const { store: freshStore } = useTestTables('fl');
const need = { scope: 'api', key: 'tenant-a', limit: 10, periodMs: 1000 };

describe('postgres flow: a rate limit with a lagging caller', () => {
  it('a caller whose now lags a later one still counts every start of its window', async () => {
    const store = await freshStore();
    const flow = store.flow!;
    for (let i = 0; i < 10; i++) {
      const g = await flow.acquire(`h-${i}`, `i-${i}`, [need], 1_000 + i, 0);
      expect(g.granted).toBe(true);
    }
    // A later caller: its window (1005, 2005] holds five starts, so it starts.
    expect((await flow.acquire('h-late', 'i-late', [need], 2_005, 0)).granted).toBe(true);
    // A caller that read its clock at 1500 but lands now: its window (500, 1500] holds ten starts
    // already (1000..1009), so an eleventh is refused.
    const lagging = await flow.acquire('h-lag', 'i-lag', [need], 1_500, 0);
    expect(lagging.granted).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { TakeOrder } from '../../src/worker/take-order.js';
import type { WorkerStats } from '../../src/worker/types.js';

describe('TakeOrder', () => {
  it('in a fleet exactly one worker takes each id at once, the others follow standbyMs apart', () => {
    const size = 3;
    const orders = [0, 1, 2].map(
      (index) => new TakeOrder({ index, size }, 50, `t${index}`, {} as WorkerStats),
    );
    for (const id of ['a', 'b', 'order-17', 'x'.repeat(40)]) {
      const delays = orders.map((o) => o.delay(id, 0)).sort((x, y) => x - y);
      expect(delays).toEqual([0, 50, 100]);
    }
  });

  it('alone it takes at once; after a lost take it stands by a share of standbyMs for 10 s', () => {
    const stats = { lostTakes: 0 } as WorkerStats;
    const order = new TakeOrder(undefined, 50, 'me', stats);
    expect(order.delay('a', 0)).toBe(0);
    stats.lostTakes = 1;
    const wait = order.delay('a', 1_000);
    expect(wait).toBeGreaterThanOrEqual(0);
    expect(wait).toBeLessThan(50);
    expect(order.delay('a', 1_500)).toBe(wait); // the same share for the same id
    expect(order.delay('a', 11_000)).toBe(0); // quiet for 10 s: alone again
  });
});

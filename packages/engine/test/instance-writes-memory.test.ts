import { describe, expect, it } from 'vitest';
import { InstanceWrites } from '../src/runner/instance-writes.js';
import type { WriteBase, WriteRequest } from '../src/runner/write-request.js';
import type { Snapshot } from '../src/snapshot.js';

// What a runner remembers per instance across its writes: the newest snapshot of the 256 most
// recently written unfinished instances (a few more until the next batch is forgotten), nothing
// of a finished one once its write settles, and nothing of a write that failed.

const snap = (id: string, version: number, status = 'running') =>
  ({ id, version, status }) as unknown as Snapshot;
const request = (id: string, base?: Snapshot): WriteRequest =>
  ({ id, onWrite: () => {}, base: base && { snapshot: base, origin: 'reducer' } }) as unknown as WriteRequest;
const records = (q: InstanceWrites) => (q as unknown as { known: Map<string, unknown> }).known.size;

/** Runs one write of `id` that saves `next`, and returns the base it started from. */
async function write(q: InstanceWrites, id: string, base: Snapshot | undefined, next: Snapshot) {
  let used: WriteBase | undefined;
  await q.run(request(id, base), async (_r, b) => {
    used = b;
    q.wrote(next);
    return next;
  });
  return used;
}

describe("a runner's memory of the instances it writes", () => {
  it('a write starts from the newest snapshot this runner wrote, not an older base', async () => {
    const q = new InstanceWrites();
    await write(q, 'a', snap('a', 1), snap('a', 2));
    const used = await write(q, 'a', snap('a', 1), snap('a', 3));
    expect(used?.snapshot.version).toBe(2);
  });

  it('keeps the most recently written instances, forgets the least recent first, in batches', async () => {
    const q = new InstanceWrites();
    for (let i = 0; i < 1000; i++) await write(q, `i-${i}`, undefined, snap(`i-${i}`, 1));
    expect(records(q)).toBeLessThanOrEqual(256 + 32);
    expect(records(q)).toBeGreaterThanOrEqual(256);
    // Rewritten, an early instance is remembered again and outlives the ones written since.
    await write(q, 'i-0', undefined, snap('i-0', 2));
    for (let i = 1000; i < 1100; i++) await write(q, `i-${i}`, undefined, snap(`i-${i}`, 1));
    expect((await write(q, 'i-0', snap('i-0', 1), snap('i-0', 3)))?.snapshot.version).toBe(2);
    // The least recently written are gone: a write of one starts from its own base.
    expect((await write(q, 'i-700', snap('i-700', 1), snap('i-700', 2)))?.snapshot.version).toBe(1);
  });

  it('forgets a finished instance, and a write that failed', async () => {
    const q = new InstanceWrites();
    await write(q, 'done', undefined, snap('done', 1));
    await write(q, 'done', snap('done', 1), snap('done', 2, 'completed'));
    expect(records(q)).toBe(0);
    await q.run(request('bad'), () => Promise.reject(new Error('store down'))).catch(() => {});
    await new Promise((r) => setTimeout(r, 0));
    expect(records(q)).toBe(0);
  });

  it('a second write of an instance waits for the first and starts from what it wrote', async () => {
    const q = new InstanceWrites();
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const first = q.run(request('p', snap('p', 1)), async () => {
      await gate;
      q.wrote(snap('p', 2));
      return snap('p', 2);
    });
    expect(q.busy('p')).toBe(true);
    let used: WriteBase | undefined;
    const second = q.run(request('p', snap('p', 1)), async (_r, b) => {
      used = b;
      q.wrote(snap('p', 3, 'completed'));
      return snap('p', 3, 'completed');
    });
    release();
    await Promise.all([first, second]);
    expect(used?.snapshot.version).toBe(2);
    await new Promise((r) => setTimeout(r, 0));
    expect(q.busy('p')).toBe(false);
    expect(records(q)).toBe(0);
  });
});

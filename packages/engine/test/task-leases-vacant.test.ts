import { describe, expect, it } from 'vitest';
import { TaskLeases } from '../src/runner/task-leases.js';
import type { Snapshot, TaskState } from '../src/snapshot.js';

// An instance's list of held attempts stays, empty, when its last attempt ends (its next task takes
// it again); the keys of instances holding nothing are dropped in batches, and a runner holding
// nothing plans no sweep.

const task = (id: string, n: number): TaskState => ({
  step: 's1',
  phase: 'run',
  attempt: 1,
  idempotencyKey: `${id}/1/s1/${n}`,
  handler: 'noop',
  dispatchedAt: 0,
  deadline: 60_000,
  dispatchVersion: n,
  leaseUntil: 30_000,
});
const snapshot = (id: string, version: number) => ({ id, version, tasks: {} }) as unknown as Snapshot;
const keys = (l: TaskLeases) => (l as unknown as { held: Map<string, unknown[]> }).held.size;
const timer = (l: TaskLeases) => (l as unknown as { timer: unknown }).timer;

describe('task leases of instances that hold nothing', () => {
  it('an instance whose attempt ended takes its list again for its next task', () => {
    const leases = new TaskLeases(
      30_000,
      () => 0,
      async (s) => s,
    );
    for (let n = 1; n <= 5; n++) {
      const t = task('a', n);
      leases.hold(snapshot('a', n), t);
      expect(leases.size).toBe(1);
      leases.end('a', t);
      expect(leases.size).toBe(0);
    }
    expect(keys(leases)).toBe(1);
    leases.quiet();
    expect(keys(leases)).toBe(0);
    expect(timer(leases)).toBeUndefined();
  });

  it('the keys of many finished instances are dropped in batches, and held ones kept', () => {
    const leases = new TaskLeases(
      30_000,
      () => 0,
      async (s) => s,
    );
    const kept = task('kept', 1);
    leases.hold(snapshot('kept', 1), kept);
    for (let i = 0; i < 500; i++) {
      const t = task(`i-${i}`, 1);
      leases.hold(snapshot(`i-${i}`, 1), t);
      leases.end(`i-${i}`, t);
    }
    expect(keys(leases)).toBeLessThanOrEqual(40);
    expect(leases.size).toBe(1);
    // Something is held: the sweep stays planned.
    leases.quiet();
    expect(timer(leases)).toBeDefined();
    leases.end('kept', kept);
    leases.quiet();
    expect(timer(leases)).toBeUndefined();
    expect(keys(leases)).toBe(0);
  });

  it('a write that no longer hands out the attempt empties the list and counts it', () => {
    const leases = new TaskLeases(
      30_000,
      () => 0,
      async (s) => s,
    );
    const t = task('w', 1);
    leases.hold(snapshot('w', 1), t);
    leases.written(snapshot('w', 2));
    expect(leases.size).toBe(0);
    leases.quiet();
    expect(timer(leases)).toBeUndefined();
    // Held again from the same (vacant) list.
    leases.hold(snapshot('w', 3), task('w', 3));
    expect(leases.size).toBe(1);
    leases.quiet();
    expect(timer(leases)).toBeDefined();
    leases.written(snapshot('w', 4));
    leases.quiet();
    expect(timer(leases)).toBeUndefined();
  });
});

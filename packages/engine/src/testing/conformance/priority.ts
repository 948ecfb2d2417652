import { expect, it } from 'vitest';
import type { Snapshot } from '../../snapshot.js';
import type { Store } from '../../store/store.js';
import { makeTestSnapshot } from '../test-snapshot.js';
import type { SuiteContext } from './context.js';

// Far from 0: an index moved earlier by a priority stays a positive time, as it is in real use.
const T = 1_700_000_000_000;
const NOW = T + 1_000_000;
const wf = { name: 'prio', version: 1, hash: 'h' };

/**
 * An instance written at `writtenAt` and due at `dueAt` (at once when the same: ready work, else a
 * timer), with a priority and a fairness key when given.
 */
function due(id: string, writtenAt: number, o: { priority?: number; fairKey?: string; dueAt?: number } = {}) {
  return makeTestSnapshot(id, {
    workflow: wf,
    createdAt: writtenAt,
    updatedAt: writtenAt,
    wakeAt: o.dueAt ?? writtenAt,
    ...(o.priority === undefined ? {} : { priority: o.priority }),
    ...(o.fairKey === undefined ? {} : { fairKey: o.fairKey }),
  });
}

/**
 * The whole due order in one look, as a worker's poll takes it: by `claimDue` where the store has
 * claims, else `listDue` (one look per store: a claim taken is not given back here).
 */
async function order(store: Store, snapshots: readonly Snapshot[]): Promise<string[]> {
  for (const s of snapshots) await store.create(s);
  if (store.claims) return (await store.claims.claimDue(NOW, 50)).map((s) => s.id);
  return store.listDue(NOW, 50);
}

/**
 * The due order with priorities (`Snapshot.priority`): work due at once when written counts
 * `priority` seconds earlier, so later urgent work overtakes a backlog only by its head start, and
 * timers keep their times.
 */
export function describePriority({ options, fresh }: SuiteContext): void {
  it('later priority-10 work overtakes a priority-0 backlog, but not work older than its head start', async () => {
    const backlog = Array.from({ length: 10 }, (_, i) => due(`p0-${i}`, T + 1000 + i));
    const got = await order(await fresh(), [
      ...backlog,
      due('p0-late', T + 12_000),
      due('hi-early', T + 5_000, { priority: 10 }), // counts as T - 5 s: ahead of the whole backlog
      due('hi-late', T + 20_000, { priority: 10 }), // counts as T + 10 s: behind it, ahead of p0-late
      due('hi-timer', T + 1_000, { priority: 10, dueAt: T + 8_000 }), // a timer: its own time
      due('top', T + 900_000, { priority: 1000 }), // counts as T - 100 s
    ]);
    expect(got).toEqual(['top', 'hi-early', ...backlog.map((s) => s.id), 'hi-timer', 'hi-late', 'p0-late']);
  });

  it('a priority does not make a timer due before its time', async () => {
    const store = await fresh();
    await store.create(due('sleeping', T, { priority: 1000, dueAt: NOW + 60_000 }));
    await store.create(due('ready', T + 500_000));
    expect(await store.listDue(NOW, 10)).toEqual(['ready']);
  });

  if (options.fairness !== false)
    it('within a fairness key priority orders the work; the keys still take turns', async () => {
      const got = await order(await fresh(), [
        due('a0', T + 1000, { fairKey: 'a' }),
        due('a1', T + 1001, { fairKey: 'a' }),
        due('a-hi', T + 3000, { fairKey: 'a', priority: 10 }),
        due('b0', T + 2000, { fairKey: 'b' }),
      ]);
      expect(got).toEqual(['a-hi', 'b0', 'a0', 'a1']);
    });
}

import { describe, expect, it } from 'vitest';
import { createRunner, workflow } from '../../src/index.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import type { WakeListener, WakeNotice, WakeSource } from '../../src/store/store.js';
import { makeTestSnapshot } from '../../src/testing/test-snapshot.js';
import { Alarm } from '../../src/worker/alarm.js';
import type { DuePoller } from '../../src/worker/due-poller.js';
import { resolveWorkerOptions } from '../../src/worker/options.js';
import { TakeOrder } from '../../src/worker/take-order.js';
import type { WorkerStats } from '../../src/worker/types.js';
import { WakeFollower } from '../../src/worker/wake-follower.js';
import { recorder } from './recorder.js';

const wf = workflow('w', 1).task('t', { handler: 't' }).build();

/** A wake source the test drives; `fail` subscriptions fail first. */
function source(fail = 0) {
  let listener: WakeListener | undefined;
  let subscribes = 0;
  let closed = 0;
  const src: WakeSource = {
    async subscribe(l) {
      subscribes++;
      if (fail-- > 0) throw new Error('server down');
      listener = l;
      return {
        close: async () => {
          closed++;
        },
      };
    },
  };
  return {
    src,
    send: (h: WakeNotice) => listener!.wake(h),
    listener: () => listener!,
    counts: () => ({ subscribes, closed }),
  };
}

function setup(
  src: WakeSource,
  extra: { fleet?: { index: number; size: number }; handoffSnapshots?: boolean } = {},
) {
  const runner = createRunner({ store: createMemoryStore(), workflows: [wf], handlers: { t: () => null } });
  const o = resolveWorkerOptions({ runner, wakes: src, standbyMs: 20, ...extra });
  const alarm = new Alarm(Date.now);
  const calls: string[] = [];
  const saw = (what: string) => {
    calls.push(what);
    return true;
  };
  // What this worker named itself (its runner's writes), and the times the notices were claimed at.
  const mine = new Set<string>();
  const hintedAt: number[] = [];
  const poller = {
    prefer: (w: string) => saw(`prefer ${w}`),
    give: (s: { id: string }) => saw(`give ${s.id}`),
    hint: (id: string, at: number, standby = false) => {
      hintedAt.push(at);
      return saw(`hint ${id}${standby ? ' standby' : ''}`);
    },
    namedAt: (id: string, at: number) => mine.has(`${id}@${at}`),
    claimSentTo: (id: string, standby = false) => saw(`sent ${id}${standby ? ' standby' : ''}`),
  } as unknown as DuePoller;
  const stats = { wakes: 0, errors: 0, lostTakes: 0 } as WorkerStats;
  const rec = recorder();
  const live: boolean[] = [];
  const order = new TakeOrder(o.fleet, o.standbyMs, 'me', stats);
  const follower = new WakeFollower(o, alarm, poller, order, stats, rec.emit, (up) => live.push(up));
  return { follower, calls, stats, events: rec.names, live, alarm, mine, hintedAt };
}

describe('WakeFollower', () => {
  it('turns notices into what the poller takes: a snapshot handed over, signals to claim, an id to claim', async () => {
    const s = source();
    const t = setup(s.src);
    await t.follower.start();
    expect(t.live).toEqual([true]);
    const now = Date.now();
    s.send({ at: now, id: 'a', workflow: 'w', snapshot: makeTestSnapshot('a') });
    s.send({ at: now, id: 'b', sent: [] });
    s.send({ at: now + 60_000, id: 'c' });
    expect(t.calls).toEqual(['prefer w', 'give a', 'sent b', 'hint c']);
    expect(t.stats.wakes).toBe(3);
    expect(t.alarm.urgent).toBe(true);
    await t.follower.close();
    expect(s.counts().closed).toBe(1);
  });

  it('a busy notice (a task runs in the worker that wrote it) is claimed a stand-by after its time, unless this worker wrote it', async () => {
    const s = source();
    const t = setup(s.src);
    await t.follower.start();
    const at = Date.now() + 60_000;
    t.mine.add(`mine@${at}`);
    s.send({ at, id: 'other', busy: true });
    s.send({ at, id: 'mine', busy: true });
    s.send({ at, id: 'plain' });
    expect(t.calls).toEqual(['hint other', 'hint mine', 'hint plain']);
    expect(t.hintedAt).toEqual([at + 20, at, at]);
    await t.follower.close();
  });

  it('with handoffSnapshots: false a handed-over task is claimed by id instead', async () => {
    const s = source();
    const t = setup(s.src, { handoffSnapshots: false });
    await t.follower.start();
    s.send({ at: Date.now(), id: 'a', snapshot: makeTestSnapshot('a') });
    expect(t.calls).toEqual(['hint a']);
    await t.follower.close();
  });

  it("stands by when a handed-over task is another worker's turn, then claims it by id", async () => {
    const s = source();
    // The fleet member whose turn is second for this id.
    const id = 'order-1';
    const first = new TakeOrder({ index: 0, size: 2 }, 20, 'x', {} as WorkerStats).delay(id, 0) === 0 ? 1 : 0;
    const t = setup(s.src, { fleet: { index: first, size: 2 } });
    await t.follower.start();
    s.send({ at: Date.now(), id, snapshot: makeTestSnapshot(id) });
    expect(t.calls).toEqual([]);
    await new Promise((r) => setTimeout(r, 60));
    expect(t.calls).toEqual([`hint ${id} standby`]);
    await t.follower.close();
  });

  it('a failed subscription is reported and tried again on the outage schedule; lost and restored ring the loop', async () => {
    const s = source(1);
    const t = setup(s.src);
    await t.follower.start();
    expect(t.events()).toEqual(['error']);
    expect(t.stats.errors).toBe(1);
    await new Promise((r) => setTimeout(r, 250)); // first retry after ~100 ms
    expect(s.counts().subscribes).toBe(2);
    expect(t.live).toEqual([true]);
    s.listener().lost?.(new Error('gone'));
    s.listener().restored?.();
    expect(t.events()).toEqual(['error', 'wakeLost', 'wakeRestored']);
    expect(t.live).toEqual([true, false, true]);
    await t.follower.close();
  });

  it('closed before a retry fires: no subscription is made', async () => {
    const s = source(1);
    const t = setup(s.src);
    await t.follower.start();
    await t.follower.close();
    await new Promise((r) => setTimeout(r, 250));
    expect(s.counts().subscribes).toBe(1);
  });
});

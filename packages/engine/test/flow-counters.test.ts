import {
  createMemoryStore,
  createRunner,
  type FlowCounterRef,
  type FlowStore,
  flowControl,
  flowCounters,
  makeTestSnapshot,
  type Snapshot,
  type Store,
  workflow,
} from '@stepfold/engine';
import { defineMigration, migrate } from '@stepfold/engine/migrations';
import { describe, expect, it, vi } from 'vitest';

// The runner names the counters each release and renewal touches (`flow.release(holders, now,
// counters)`), and the memory store, as the reference, looks only there: a release that named the
// wrong counters would leave the slot held, and an instance's hold never lapses.

/** The memory store, every flow call it gets recorded (the holders and the counters named). */
function recordedStore(): {
  store: Store;
  flow: FlowStore;
  calls: Array<{ verb: string; counters: unknown }>;
} {
  const inner = createMemoryStore();
  const flow = inner.flow!;
  const calls: Array<{ verb: string; counters: unknown }> = [];
  const recorded: FlowStore = {
    ...flow,
    acquire: (...a) => flow.acquire(...a),
    release: (holders, now, counters) => {
      calls.push({ verb: 'release', counters });
      return flow.release(holders, now, counters);
    },
    renew: (holders, until, counters) => {
      calls.push({ verb: 'renew', counters });
      return flow.renew(holders, until, counters);
    },
    list: (q) => flow.list(q),
  };
  return { store: { ...inner, flow: recorded }, flow: recorded, calls };
}

const held = async (flow: FlowStore) => (await flow.list({ limit: 100, now: Date.now() })).items;

const oneAtATime = workflow('one-at-a-time', 1, { concurrency: { key: 'input.tenant', limit: 1 } })
  .input<{ tenant: string }>()
  .wait('hold', { signal: 'go' })
  .build();

describe('flow counters named by the runner', () => {
  it('flowCounters: attempts, the instance and throttled attempts name their counters; unknown is undefined', () => {
    const need = { scope: 'wf/s', key: 'k', limit: 2 };
    const rate = { scope: 'wf/s', key: 'k', limit: 5, periodMs: 1000 };
    const s: Snapshot = makeTestSnapshot('i', {
      holds: [{ scope: 'wf', key: 't', limit: 1 }],
      tasks: {
        s: {
          step: 's',
          phase: 'run',
          attempt: 1,
          idempotencyKey: 'i/1/s/1',
          deadline: 10,
          dispatchVersion: 3,
          needs: [need, rate],
        } as Snapshot['tasks'][string],
      },
      steps: { m: { status: 'active', attempt: 1, iteration: 1 } as Snapshot['steps'][string] },
      timers: [
        { kind: 'throttle', step: 'm', at: 5, phase: 'run', attempt: 1, item: 2, dispatchVersion: 2, need },
        { kind: 'throttle', step: 'm', at: 5, phase: 'run', attempt: 1, item: 3, dispatchVersion: 2 },
      ],
    });
    const ref = (n: { scope: string; key: string; periodMs?: number }): FlowCounterRef => ({
      scope: n.scope,
      key: n.key,
      period: n.periodMs ?? 0,
    });
    expect(flowCounters(['i/1/s/1#run#1@3'], s)).toEqual([ref(need), ref(rate)]);
    expect(flowCounters(['i'], s)).toEqual([{ scope: 'wf', key: 't', period: 0 }]);
    expect(flowCounters(['i/1/m/1/2#run#1@2'], s)).toEqual([ref(need)]);
    // A throttled item whose timer names no need (an older snapshot), and not the step's latest: unknown.
    expect(flowCounters(['i/1/m/1/3#run#1@2'], s)).toBeUndefined();
    expect(flowCounters(['nobody'], s)).toBeUndefined();
    expect(flowCounters([], s)).toEqual([]);
    // Holders found across snapshots (the write's before and after).
    expect(flowCounters(['i', 'i/1/s/1#run#1@3'], null, s)).toHaveLength(3);
  });

  it("an instance's hold is released on the counter it holds when it completes, is cancelled or deleted: the next is admitted", async () => {
    const { store, flow, calls } = recordedStore();
    const runner = createRunner({ kinds: [flowControl], store, workflows: [oneAtATime], handlers: {} });
    await runner.start('one-at-a-time', 'a', { tenant: 't' });
    const b = await runner.start('one-at-a-time', 'b', { tenant: 't' });
    expect(b.admission?.throttled).toBeDefined();
    // a completes: b is admitted, every release named its counter.
    await runner.signal('a', 'go', 1);
    await vi.waitFor(async () => expect((await runner.get('b'))?.active).toEqual(['hold']), {
      timeout: 2000,
      interval: 10,
    });
    // b is cancelled, c is admitted; c is deleted: nothing is left held.
    const c = await runner.start('one-at-a-time', 'c', { tenant: 't' });
    expect(c.admission?.throttled).toBeDefined();
    await runner.cancel('b');
    await vi.waitFor(async () => expect((await runner.get('c'))?.active).toEqual(['hold']), {
      timeout: 2000,
      interval: 10,
    });
    expect(await store.delete('c')).toBe(true);
    expect(await held(flow)).toEqual([]);
    expect(calls.filter((x) => x.verb === 'release').every((x) => Array.isArray(x.counters))).toBe(true);
    expect((await runner.start('one-at-a-time', 'd', { tenant: 't' })).active).toEqual(['hold']);
  });

  it('limited attempts release their slots on the counters they hold: nothing is left once all finish', async () => {
    const { store, flow, calls } = recordedStore();
    const twoSteps = workflow('two-steps', 1)
      .input<{ customer: string }>()
      .task('a', { handler: 'work', concurrency: { key: 'input.customer', limit: 1 } })
      .task('b', { handler: 'work', concurrency: { key: 'input.customer', limit: 1 } })
      .build();
    const runner = createRunner({
      kinds: [flowControl],
      store,
      workflows: [twoSteps],
      handlers: { work: async () => 1 },
    });
    const ids = ['x', 'y', 'z'];
    await Promise.all(ids.map((id) => runner.start('two-steps', id, { customer: 'acme' })));
    await vi.waitFor(
      async () => {
        for (const id of ids) expect((await runner.get(id))?.status).toBe('completed');
      },
      { timeout: 5000, interval: 10 },
    );
    expect(await held(flow)).toEqual([]);
    const released = calls.filter((x) => x.verb === 'release');
    expect(released.every((x) => Array.isArray(x.counters))).toBe(true);
  });

  it('an instance moved to a version with other limits releases the counter it holds, not the new one', async () => {
    // What it holds was recorded when it was granted (`holds`), and a migration keeps it: the
    // release names that counter, whatever the new version's limits resolve to.
    const { store, flow } = recordedStore();
    const v2 = workflow('one-at-a-time', 2, { concurrency: { key: 'input.region', limit: 5 } })
      .input<{ tenant: string; region?: string }>()
      .wait('hold', { signal: 'go' })
      .build();
    const runner = createRunner({ kinds: [flowControl], store, workflows: [oneAtATime, v2], handlers: {} });
    await runner.start('one-at-a-time', 'm', { tenant: 't' }, { version: 1 });
    const moved = await migrate(runner, defineMigration({ from: oneAtATime, to: v2 }), 'm');
    expect(moved.workflow.version).toBe(2);
    expect(moved.holds).toEqual([{ scope: 'one-at-a-time', key: 't', limit: 1 }]);
    expect((await held(flow)).map((c) => c.key)).toEqual(['t']);
    await runner.signal('m', 'go', 1);
    await vi.waitFor(async () => expect((await runner.get('m'))?.status).toBe('completed'));
    expect(await held(flow)).toEqual([]);
  });
});

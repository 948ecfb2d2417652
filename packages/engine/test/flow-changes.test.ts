import {
  flowChanges as changesOf,
  defineWorkflow,
  type FlowChanges,
  type FlowCounterRef,
  flowControl,
  flowCounters,
  type Snapshot,
  step as stepWith,
} from '@stepfold/engine';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anyChanges } from '../src/runner/flow-changes.js';

// What a write asks of the store's flow, from the snapshots before and after it.

const step: typeof stepWith = (d, s, e, o) => stepWith(d, s, e, { ...o, kinds: [flowControl] });

const sorted = (c: FlowCounterRef[] | undefined) =>
  c &&
  [...c].sort((a, b) =>
    `${a.scope}\0${a.key}\0${a.period}`.localeCompare(`${b.scope}\0${b.key}\0${b.period}`),
  );

/**
 * `flowChanges`, checked against `flowCounters` (the walk it saves the runner): the counters of
 * what it releases, renews and dispatches again are those the snapshots name for them.
 */
function flowChanges(prev: Snapshot | null, next: Snapshot): FlowChanges {
  const c = changesOf(prev, next);
  expect(c).toEqual(anyChanges(prev, next));
  expect(sorted(c.releaseCounters)).toEqual(sorted(flowCounters(c.release, prev, next)));
  expect(sorted(c.redispatchedCounters)).toEqual(sorted(flowCounters(c.redispatched, prev)));
  for (const r of c.renew) expect(sorted(r.counters)).toEqual(sorted(flowCounters([r.holder], next)));
  return c;
}

const ref = { scope: 'w/a', key: 'x', period: 0 };

const def = defineWorkflow({
  name: 'w',
  version: 1,
  start: 'a',
  steps: {
    a: { kind: 'task', handler: 'a', concurrency: { key: 'input.k', limit: 1 }, timeoutMs: 1000, next: 'b' },
    b: { kind: 'task', handler: 'b' },
  },
});
const need = { scope: 'w/a', key: 'x', limit: 1 };
const started = step(def, null, { type: 'start', at: 0, id: 'i', input: { k: 'x' } });

describe('flowChanges', () => {
  it('a new instance dispatching a limited attempt acquires it, leased until its deadline', () => {
    const c = flowChanges(null, started);
    expect(c.acquire).toEqual([
      { holder: 'i/1/a/1#run#1@1', needs: [need], until: 1000, task: started.tasks['a'] },
    ]);
    expect(c.release).toEqual([]);
    expect(c.renew).toEqual([]);
  });

  it('a write that leaves the attempt running asks nothing; its end releases it', () => {
    const signalled = { ...started, version: 2 };
    expect(flowChanges(started, signalled)).toEqual({
      acquire: [],
      release: [],
      releaseCounters: [],
      renew: [],
      redispatched: [],
      redispatchedCounters: [],
    });
    const done = step(def, started, { type: 'task.completed', at: 5, step: 'a', attempt: 1 });
    expect(flowChanges(started, done)).toEqual({
      acquire: [],
      release: ['i/1/a/1#run#1@1'],
      releaseCounters: [ref],
      renew: [],
      redispatched: [],
      redispatchedCounters: [],
    });
  });

  it('a retry is a new holder: the failed attempt is released, the next acquired when dispatched', () => {
    const failed = step(def, started, {
      type: 'task.failed',
      at: 5,
      step: 'a',
      attempt: 1,
      error: { message: 'x' },
    });
    expect(flowChanges(started, failed).release).toEqual(['i/1/a/1#run#1@1']);
    const retried = step(def, failed, { type: 'tick', at: 10_000 });
    expect(flowChanges(failed, retried).acquire.map((a) => a.holder)).toEqual(['i/1/a/1#run#2@3']);
  });

  it('a throttled attempt is kept as a waiter until it is gone or dispatched again (by a later version: a new holder)', () => {
    const throttled = step(def, started, {
      type: 'task.throttled',
      at: 1,
      step: 'a',
      attempt: 1,
      need,
      until: 500,
    });
    expect(flowChanges(started, throttled)).toEqual({
      acquire: [],
      release: [],
      releaseCounters: [],
      renew: [],
      redispatched: [],
      redispatchedCounters: [],
    });
    const again = step(def, throttled, { type: 'tick', at: 2 });
    expect(flowChanges(throttled, again).acquire.map((a) => a.holder)).toEqual(['i/1/a/1#run#1@3']);
    // Its waiter entry goes before the new holder is acquired (not after the save: a lost release
    // would leave a waiter that takes wakes from live ones).
    expect(flowChanges(throttled, again).release).toEqual([]);
    expect(flowChanges(throttled, again).redispatched).toEqual(['i/1/a/1#run#1@1']);
    expect(flowChanges(throttled, again).redispatchedCounters).toEqual([ref]);
    const cancelled = step(def, throttled, { type: 'abort', at: 3 });
    expect(flowChanges(throttled, cancelled).release).toEqual(['i/1/a/1#run#1@1']);
    expect(flowChanges(throttled, cancelled).releaseCounters).toEqual([ref]);
    // A timer of an older release names no need (and the step shows another attempt): unknown, so
    // the store looks everywhere.
    const older: Snapshot = {
      ...throttled,
      timers: throttled.timers.map(({ need: _, ...t }) => t),
      steps: { ...throttled.steps, a: { ...throttled.steps['a']!, throttled: undefined } },
    };
    expect(flowChanges(older, { ...cancelled, timers: [] }).releaseCounters).toBeUndefined();
  });

  it('a queued attempt acquires when a worker takes it, and releases when given back', () => {
    const queued = step(def, null, { type: 'start', at: 0, id: 'i', input: { k: 'x' }, handoff: true });
    expect(flowChanges(null, queued).acquire).toEqual([]);
    const taken = step(def, queued, { type: 'tick', at: 1 });
    expect(flowChanges(queued, taken).acquire).toMatchObject([{ holder: 'i/1/a/1#run#1@2', until: 1001 }]);
    const back = step(def, taken, { type: 'task.released', at: 2, step: 'a', attempt: 1 });
    expect(flowChanges(taken, back).release).toEqual(['i/1/a/1#run#1@2']);
  });

  it('a moved lease is renewed', () => {
    const t = started.tasks['a']!;
    const moved: Snapshot = { ...started, tasks: { a: { ...t, deadline: 4000 } } };
    expect(flowChanges(started, moved).renew).toEqual([
      { holder: 'i/1/a/1#run#1@1', until: 4000, counters: [ref] },
    ]);
  });

  it('an admission asked for is acquired for the instance; its hold is released once the instance ends', () => {
    const adm = defineWorkflow({
      name: 'adm',
      version: 1,
      start: 't',
      concurrency: { limit: 3 },
      steps: { t: { kind: 'task', handler: 't' } },
    });
    const s = step(adm, null, { type: 'start', at: 0, id: 'j' });
    expect(flowChanges(null, s).acquire).toEqual([
      { holder: 'j', needs: [{ scope: 'adm', key: '', limit: 3 }], until: 8.64e15 },
    ]);
    const throttled = step(adm, s, {
      type: 'instance.throttled',
      at: 1,
      need: { scope: 'adm', key: '', limit: 3 },
      until: 90,
    });
    expect(flowChanges(s, throttled).acquire).toEqual([]);
    const ran = step(adm, s, { type: 'instance.admitted', at: 1 });
    const done = step(adm, ran, { type: 'task.completed', at: 2, step: 't', attempt: 1 });
    expect(flowChanges(ran, done).release).toEqual(['j']);
    expect(flowChanges(ran, done).releaseCounters).toEqual([{ scope: 'adm', key: '', period: 0 }]);
    // Cancelled while waiting: its waiter entry goes too.
    expect(flowChanges(throttled, step(adm, throttled, { type: 'cancel', at: 3 })).release).toEqual(['j']);
  });
});

// The commonest writes (one limited attempt ending, the next one starting) take a short path
// without the general walk's maps: over random writes of a chain it answers what the walk does.
describe('flowChanges, short path = general walk', () => {
  const chain = defineWorkflow({
    name: 'c',
    version: 1,
    start: 't0',
    steps: {
      t0: { kind: 'task', handler: 'h', concurrency: { key: 'input.k', limit: 1 }, next: 't1' },
      t1: { kind: 'task', handler: 'h', retry: { maxAttempts: 3, initialMs: 5, jitter: 0 }, next: 't2' },
      t2: { kind: 'task', handler: 'h', rateLimit: { key: 'input.k', limit: 2, periodMs: 100 }, next: 't3' },
      t3: { kind: 'task', handler: 'h', concurrency: { key: 'input.k', limit: 1 } },
    },
  });
  const intent = fc.record({
    kind: fc.constantFrom('complete', 'complete', 'fail', 'throttle', 'tick', 'release'),
    advance: fc.nat(300),
    handoff: fc.boolean(),
  });
  it('the same changes for every write', () => {
    fc.assert(
      fc.property(fc.array(intent, { maxLength: 30 }), (intents) => {
        let now = 0;
        let s = step(chain, null, { type: 'start', at: now, id: 'p', input: { k: 'x' } });
        expect(changesOf(null, s)).toEqual(anyChanges(null, s));
        for (const i of intents) {
          now += i.advance;
          const t = Object.values(s.tasks)[0];
          const at = { at: now, ...(i.handoff ? { handoff: true } : {}) };
          const ev =
            i.kind === 'tick' || !t
              ? { type: 'tick' as const, ...at }
              : i.kind === 'throttle'
                ? {
                    type: 'task.throttled' as const,
                    ...at,
                    step: t.step,
                    attempt: t.attempt,
                    need: { scope: `c/${t.step}`, key: 'x', limit: 1 },
                    until: now + 50,
                  }
                : i.kind === 'fail'
                  ? {
                      type: 'task.failed' as const,
                      ...at,
                      step: t.step,
                      attempt: t.attempt,
                      error: { message: 'x', retryable: true },
                    }
                  : i.kind === 'release'
                    ? { type: 'task.released' as const, ...at, step: t.step, attempt: t.attempt }
                    : { type: 'task.completed' as const, ...at, step: t.step, attempt: t.attempt };
          let next: Snapshot;
          try {
            next = step(chain, s, ev);
          } catch {
            continue;
          }
          expect(changesOf(s, next)).toEqual(anyChanges(s, next));
          s = next;
        }
      }),
      { numRuns: 200 },
    );
  });
});

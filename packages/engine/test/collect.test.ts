import { createHarness, defineWorkflow, step, type ValidationError, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { approvalWorkflow } from './fixtures.js';

/** At least one bound, as the builder asks (`maxItems`, `idleMs` or `maxWaitMs`). */
type Bounds = ({ maxItems: number } | { idleMs: number; maxWaitMs?: number } | { maxWaitMs: number }) & {
  dedupeBy?: string;
};

/** collect → process the batch → loop back. */
function batcher(fields: Bounds) {
  return workflow('batcher', 1, { limits: { inbox: 5 } })
    .collect('gather', { signal: 'event', ...fields })
    .task('process', { handler: 'process', input: 'outputs.gather', next: 'gather' })
    .build();
}

describe('signal inbox', () => {
  it('buffers up to limits.inbox signals, then refuses with INBOX_OVERFLOW and writes nothing', () => {
    const wf = batcher({ maxItems: 2 });
    const h = createHarness(wf).start();
    h.signal('event', 1);
    h.signal('event', 2); // batch [1, 2] closes: process is in flight
    expect(h.dispatched('process')[0]?.input).toEqual([1, 2]);
    for (let i = 3; i <= 7; i++) expect(h.signal('event', i)).toBe(true);
    expect(h.snapshot.inbox.map((s) => s.payload)).toEqual([3, 4, 5, 6, 7]);
    const before = h.snapshot;
    let err: unknown;
    try {
      h.signal('event', 8);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'INBOX_OVERFLOW', name: 'InboxOverflowError', limit: 5 });
    expect(h.snapshot).toBe(before);
    // Draining makes room again; order is kept.
    h.complete('process');
    expect(h.dispatched('process')[0]?.input).toEqual([3, 4]);
    expect(h.snapshot.inbox.map((s) => s.payload)).toEqual([5, 6, 7]);
    expect(h.signal('event', 8)).toBe(true);
  });

  it('a signal id seen before is a no-op (same object), buffered or delivered', () => {
    const wf = batcher({ maxItems: 3 });
    const h = createHarness(wf).start();
    expect(h.signal('event', 'a', 'id-a')).toBe(true);
    const s = h.snapshot;
    expect(step(wf, s, { type: 'signal', at: 5, name: 'event', payload: 'a', id: 'id-a' })).toBe(s);
    // Same id with another payload is still the same signal.
    expect(h.signal('event', 'other', 'id-a')).toBe(false);
    expect(h.signal('event', 'b', 'id-b')).toBe(true);
    expect(h.signal('event', 'c', 'id-c')).toBe(true);
    expect(h.dispatched('process')[0]?.input).toEqual(['a', 'b', 'c']);
    // While process runs, signals are buffered; a duplicate of a buffered one is dropped.
    expect(h.signal('event', 'd', 'id-d')).toBe(true);
    expect(h.signal('event', 'd', 'id-d')).toBe(false);
    expect(h.signal('event', 'b', 'id-b')).toBe(false);
    expect(h.snapshot.inbox).toHaveLength(1);
    // Signals without an id are never deduplicated.
    expect(h.signal('event', 'e')).toBe(true);
    expect(h.signal('event', 'e')).toBe(true);
    expect(h.snapshot.inbox).toHaveLength(3);
  });

  it('timers due before a signal fire first: a late approval finds the timeout taken', () => {
    const h = createHarness(approvalWorkflow).start();
    h.complete('draft');
    h.now = 60_001; // timeout was due at 60 000; no tick came in between
    expect(h.signal('approved', { by: 'ann' })).toBe(true);
    expect(h.output('approve')).toEqual({ timedOut: true });
    expect(h.dispatched()[0]?.step).toBe('expire');
    expect(h.snapshot.inbox.map((s) => s.name)).toEqual(['approved']);
    expect(h.snapshot.version).toBe(3); // one accepted event, one version
  });

  it('remembers a bounded window of signal ids (default 64, limits.signalIds)', () => {
    const h = createHarness(batcher({ maxItems: 1000 })).start();
    for (let i = 0; i < 300; i++) h.signal('event', i, `s-${i}`);
    expect(h.snapshot.seenSignals).toHaveLength(64);
    expect(h.snapshot.seenSignals[0]).toBe('s-236');
    expect(h.signal('event', 299, 's-299')).toBe(false);
    expect(h.signal('event', 236, 's-236')).toBe(false);
    // An id that fell out of the window is accepted again (the documented limit of the ring).
    expect(h.signal('event', 235, 's-235')).toBe(true);

    const wide = workflow('wide', 1, { limits: { signalIds: 1000, inbox: 1000 }, acceptUnknownSignals: true })
      .wait('w', { signal: 'never' })
      .build();
    const hw = createHarness(wide).start();
    for (let i = 0; i < 300; i++) hw.signal('event', i, `s-${i}`);
    expect(hw.snapshot.seenSignals).toHaveLength(300);
    expect(hw.signal('event', 0, 's-0')).toBe(false);

    const none = workflow('none', 1, { limits: { signalIds: 0 }, acceptUnknownSignals: true })
      .wait('w', { signal: 'never' })
      .build();
    const hn = createHarness(none).start();
    expect(hn.signal('event', 1, 'same')).toBe(true);
    expect(hn.signal('event', 1, 'same')).toBe(true);
    expect(hn.snapshot.seenSignals).toEqual([]);
  });
});

describe('collect', () => {
  it('closes a batch at maxItems; output is the list of payloads in arrival order', () => {
    const h = createHarness(batcher({ maxItems: 3 })).start();
    expect(h.status).toBe('waiting');
    expect(h.snapshot.wakeAt).toBeNull();
    h.signal('event', { n: 1 });
    h.signal('event', { n: 2 });
    expect(h.snapshot.steps.gather?.batch?.items).toEqual([{ n: 1 }, { n: 2 }]);
    expect(h.dispatched()).toEqual([]);
    h.signal('event', { n: 3 });
    expect(h.output('gather')).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(h.dispatched('process')[0]).toMatchObject({
      input: [{ n: 1 }, { n: 2 }, { n: 3 }],
      idempotencyKey: 'test-1/1/process/1',
    });
    h.complete('process');
    expect(h.snapshot.steps.gather).toMatchObject({ status: 'active', iteration: 2 });
  });

  it('signals buffered before the collect starts are drained in order, several batches deep', () => {
    const wf = workflow('late', 1, { acceptUnknownSignals: true })
      .task('setup', { handler: 'setup' })
      .collect('gather', { signal: 'event', maxItems: 2 })
      .task('process', { handler: 'process', input: 'outputs.gather', next: 'gather' })
      .build();
    const h = createHarness(wf).start();
    for (const n of [1, 2, 3, 4, 5]) h.signal('event', n);
    h.signal('unrelated', 'x');
    expect(h.snapshot.inbox).toHaveLength(6);
    h.complete('setup');
    expect(h.dispatched('process')[0]?.input).toEqual([1, 2]);
    h.complete('process');
    expect(h.dispatched('process')[0]?.input).toEqual([3, 4]);
    h.complete('process');
    expect(h.snapshot.steps.gather?.batch?.items).toEqual([5]);
    expect(h.snapshot.inbox.map((s) => s.name)).toEqual(['unrelated']);
  });

  it('idleMs debounces: each new signal pushes the idle timer', () => {
    const h = createHarness(batcher({ idleMs: 10_000 }), { now: 1_000 }).start();
    expect(h.snapshot.wakeAt).toBeNull(); // nothing to wait for before the first signal
    h.signal('event', 'a');
    expect(h.snapshot.wakeAt).toBe(11_000);
    h.now = 8_000;
    h.signal('event', 'b');
    expect(h.snapshot.wakeAt).toBe(18_000);
    expect(h.snapshot.timers.filter((t) => t.kind === 'idle')).toHaveLength(1);
    h.now = 17_999;
    expect(h.send({ type: 'tick' })).toBe(false);
    h.now = 17_000;
    h.signal('event', 'c');
    expect(h.snapshot.wakeAt).toBe(27_000);
    h.now = 26_999;
    expect(h.send({ type: 'tick' })).toBe(false);
    expect(h.advance(1)).toBe(true);
    expect(h.output('gather')).toEqual(['a', 'b', 'c']);
    expect(h.dispatched('process')[0]?.input).toEqual(['a', 'b', 'c']);
  });

  it('maxWaitMs bounds a batch that keeps receiving signals, counted from its first item', () => {
    const h = createHarness(batcher({ idleMs: 1_000, maxWaitMs: 5_000 })).start();
    h.now = 60_000; // an idle entity sleeps: no timer before the first signal, no empty batch
    expect(h.send({ type: 'tick' })).toBe(false);
    expect(h.snapshot.wakeAt).toBeNull();
    for (let t = 60_000; t <= 64_800; t += 800) {
      h.now = t;
      h.signal('event', t - 60_000);
      h.send({ type: 'tick' });
    }
    expect(h.snapshot.steps.gather?.status).toBe('active');
    expect(h.snapshot.wakeAt).toBe(65_000); // max-wait (65 000) is before idle (65 800)
    h.now = 65_000;
    expect(h.send({ type: 'tick' })).toBe(true);
    expect(h.output('gather')).toEqual([0, 800, 1600, 2400, 3200, 4000, 4800]);
    expect(h.snapshot.timers).toEqual([]); // both timers of the closed batch are gone
    expect(h.dispatched('process')).toHaveLength(1);
  });

  it('maxWaitMs alone: a window that opens with the first signal', () => {
    const h = createHarness(batcher({ maxWaitMs: 1_000 })).start();
    h.now = 500;
    h.signal('event', 'a');
    h.now = 1_400;
    h.signal('event', 'b');
    expect(h.snapshot.wakeAt).toBe(1_500);
    h.advance(100);
    expect(h.output('gather')).toEqual(['a', 'b']);
  });

  it('a signal arriving after a due idle timer (tick not yet run) starts the next batch', () => {
    const h = createHarness(batcher({ idleMs: 10_000 })).start();
    h.signal('event', 'a');
    h.now = 3_000;
    h.signal('event', 'b'); // idle due at 13 000
    h.now = 15_000; // the driver is late: no tick at 13 000
    h.signal('event', 'c');
    expect(h.output('gather')).toEqual(['a', 'b']);
    expect(h.dispatched('process')[0]?.input).toEqual(['a', 'b']);
    expect(h.snapshot.inbox.map((s) => s.payload)).toEqual(['c']);
    expect(h.snapshot.log.some((e) => e.type === 'timer.fired' && e.detail === 'idle')).toBe(true);
    h.complete('process');
    expect(h.snapshot.steps.gather?.batch?.items).toEqual(['c']);
    expect(JSON.stringify(h.replayed())).toBe(JSON.stringify(h.snapshot));
  });

  it('dedupeBy keeps the first payload per key within a batch', () => {
    const h = createHarness(batcher({ maxItems: 3, dedupeBy: 'payload.doc' })).start();
    h.signal('event', { doc: 'd1', v: 1 });
    h.signal('event', { doc: 'd1', v: 2 });
    h.signal('event', { doc: 'd2', v: 1 });
    expect(h.snapshot.steps.gather?.batch?.items).toEqual([
      { doc: 'd1', v: 1 },
      { doc: 'd2', v: 1 },
    ]);
    h.signal('event', { doc: 'd2', v: 2 });
    h.signal('event', { doc: 'd3', v: 1 });
    expect(h.output('gather')).toEqual([
      { doc: 'd1', v: 1 },
      { doc: 'd2', v: 1 },
      { doc: 'd3', v: 1 },
    ]);
    h.complete('process');
    // A new batch starts with no keys: d1 may come again.
    h.signal('event', { doc: 'd1', v: 3 });
    expect(h.snapshot.steps.gather?.batch?.items).toEqual([{ doc: 'd1', v: 3 }]);
  });

  it('dedupeBy: payloads without the key are all kept; keys compare as JSON (1 is not "1")', () => {
    const h = createHarness(batcher({ maxItems: 10, dedupeBy: 'payload.doc' })).start();
    h.signal('event', { note: 'x' });
    h.signal('event', { note: 'y' });
    h.signal('event', 'plain');
    h.signal('event', { doc: 1 });
    h.signal('event', { doc: '1' });
    h.signal('event', { doc: 1 });
    h.signal('event', { doc: { a: 1 } });
    h.signal('event', { doc: { a: 1 } });
    expect(h.snapshot.steps.gather?.batch?.items).toEqual([
      { note: 'x' },
      { note: 'y' },
      'plain',
      { doc: 1 },
      { doc: '1' },
      { doc: { a: 1 } },
    ]);
  });
});

describe('sleep until', () => {
  it('sleeps until an epoch-ms value taken from the input', () => {
    const wf = workflow('reminder', 1)
      .sleep('until', { until: 'input.remindAt' })
      .task('remind', { handler: 'remind' })
      .build();
    const remindAt = Date.UTC(2030, 0, 1);
    const h = createHarness(wf, { now: Date.UTC(2029, 11, 31) }).start({ remindAt });
    expect(h.status).toBe('waiting');
    expect(h.snapshot.wakeAt).toBe(remindAt);
    h.now = remindAt - 1;
    expect(h.send({ type: 'tick' })).toBe(false);
    h.now = remindAt;
    expect(h.send({ type: 'tick' })).toBe(true);
    expect(h.dispatched()[0]?.step).toBe('remind');
  });

  it('a target that is not a number fails the step with INVALID_SLEEP_TARGET', () => {
    const wf = workflow('reminder', 1, { onFailure: 'fail' })
      .sleep('until', { until: 'input.remindAt' })
      .succeed('done')
      .build();
    const h = createHarness(wf).start({ remindAt: 'tomorrow' });
    expect(h.status).toBe('failed');
    expect(h.snapshot.error).toMatchObject({ code: 'INVALID_SLEEP_TARGET', step: 'until' });
  });
});

describe('collect with drain: true', () => {
  const drainer = (fields: { maxItems?: number } = {}) =>
    workflow('drainer', 1)
      .task('work', { handler: 'work' })
      .collect('notes', { signal: 'note', drain: true, ...fields })
      .task('use', { handler: 'use', input: 'outputs.notes', next: 'work' })
      .build();

  it('completes on entry with the signals buffered while the instance was elsewhere', () => {
    const h = createHarness(drainer()).start();
    h.signal('note', 'a');
    h.signal('note', 'b');
    h.complete('work');
    expect(h.dispatched('use')[0]?.input).toEqual(['a', 'b']);
    expect(h.snapshot.inbox).toEqual([]);
  });

  it('completes with an empty batch when nothing is buffered: it never waits', () => {
    const h = createHarness(drainer()).start();
    h.complete('work');
    expect(h.dispatched('use')[0]?.input).toEqual([]);
    expect(h.snapshot.timers).toEqual([]);
  });

  it('takes at most maxItems and leaves the rest buffered for its next entry', () => {
    const h = createHarness(drainer({ maxItems: 1 })).start();
    h.signal('note', 'a');
    h.signal('note', 'b');
    h.complete('work');
    expect(h.dispatched('use')[0]?.input).toEqual(['a']);
    h.complete('use');
    h.complete('work');
    expect(h.dispatched('use')[0]?.input).toEqual(['b']);
  });

  it('refuses a draining collect that also waits (idleMs or maxWaitMs)', () => {
    const json = {
      name: 'bad-drain',
      version: 1,
      start: 'notes',
      steps: { notes: { kind: 'collect' as const, signal: 'note', drain: true, idleMs: 10 } },
    };
    let issues: string[] = [];
    try {
      defineWorkflow(json);
    } catch (e) {
      issues = (e as ValidationError).issues.map((i) => i.message);
    }
    expect(issues).toContain('a draining collect does not wait: no idleMs or maxWaitMs');
  });
});

import { createHarness, step, type WorkflowHarness, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { documentEntity } from './entity-fixtures.js';

/** Completes the in-flight process task the way the entity's handler would. */
function processBatch(h: WorkflowHarness) {
  const [t] = h.dispatched('process');
  if (!t) throw new Error('no process task in flight');
  return h.complete('process', {
    iteration: t.iteration,
    count: (t.input as { events: unknown[] }).events.length,
  });
}

describe('continueAsNew', () => {
  it('starts a fresh run: carry maps the new input, run counts up, per-run state is reset', () => {
    const wf = documentEntity({ batchesPerRun: 2, maxItems: 2 });
    // A key the input type does not name (a variable, so no excess-property check): not carried.
    const input = { doc: 'd1', note: 'not carried' };
    const h = createHarness(wf, { id: 'doc-1', now: 1_000 }).start(input);
    expect(h.snapshot.run).toBe(1);
    h.signal('event', 'a');
    h.signal('event', 'b');
    expect(h.dispatched('process')[0]).toMatchObject({
      idempotencyKey: 'doc-1/1/process/1',
      iteration: 1,
      input: { doc: 'd1', events: ['a', 'b'] },
    });
    processBatch(h);
    expect(h.snapshot.run).toBe(1);
    h.signal('event', 'c');
    h.signal('event', 'd');
    expect(h.dispatched('process')[0]).toMatchObject({ idempotencyKey: 'doc-1/1/process/2', iteration: 2 });
    const versionBefore = h.snapshot.version;
    processBatch(h); // second batch of the run: continue as new
    const s = h.snapshot;
    expect(s.version).toBe(versionBefore + 1);
    expect(s.run).toBe(2);
    expect(s.input).toEqual({ doc: 'd1', lastBatch: 2 });
    expect(s.status).toBe('waiting');
    expect(Object.keys(s.steps)).toEqual(['gather']);
    expect(s.steps.gather).toMatchObject({ status: 'active', iteration: 1 });
    expect(s.completed).toEqual([]);
    expect(s.tasks).toEqual({});
    expect(s.createdAt).toBe(1_000);
    expect(s.log.map((e) => e.type)).toContain('workflow.continued-as-new');
    // Idempotency keys of the new run name the run: no clash with run 1's first batch.
    h.signal('event', 'e');
    h.signal('event', 'f');
    expect(h.dispatched('process')[0]).toMatchObject({ idempotencyKey: 'doc-1/2/process/1', iteration: 1 });
    expect(JSON.stringify(h.replayed())).toBe(JSON.stringify(h.snapshot));
  });

  it('keeps buffered signals and the seen ids across the restart: nothing is lost or doubled', () => {
    const wf = documentEntity({ batchesPerRun: 1, maxItems: 2 });
    const h = createHarness(wf).start({ doc: 'd' });
    h.signal('event', 1, 'e1');
    h.signal('event', 2, 'e2');
    // process runs; five more arrive (one a redelivery of e2) and are buffered
    for (const n of [3, 4, 5, 6, 7]) h.signal('event', n, `e${n}`);
    expect(h.signal('event', 2, 'e2')).toBe(false);
    expect(h.snapshot.inbox.map((s) => s.payload)).toEqual([3, 4, 5, 6, 7]);
    processBatch(h); // → continue as new → the new run drains the inbox
    expect(h.snapshot.run).toBe(2);
    expect(h.dispatched('process')[0]?.input).toEqual({ doc: 'd', events: [3, 4] });
    expect(h.snapshot.inbox.map((s) => s.payload)).toEqual([5, 6, 7]);
    expect(h.signal('event', 1, 'e1')).toBe(false); // seen in run 1, still a duplicate in run 2
    processBatch(h);
    expect(h.snapshot.run).toBe(3);
    expect(h.dispatched('process')[0]?.input).toEqual({ doc: 'd', events: [5, 6] });
    processBatch(h);
    expect(h.snapshot.steps.gather?.batch?.items).toEqual([7]);
    expect(h.snapshot.inbox).toEqual([]);
  });

  it('carry may be a single path; a missing value becomes null; no carry keeps the input', () => {
    const keep = workflow('keep', 1)
      .collect('c', { signal: 's', maxItems: 1 })
      .continueAsNew('again')
      .build();
    const h = createHarness(keep).start({ x: 1 });
    h.signal('s', 'p');
    expect(h.snapshot).toMatchObject({ run: 2, input: { x: 1 } });
    const one = workflow('one', 1)
      .collect('c', { signal: 's', maxItems: 1 })
      .continueAsNew('again', { carry: 'outputs.c' })
      .build();
    const h1 = createHarness(one).start();
    h1.signal('s', 'p');
    expect(h1.snapshot).toMatchObject({ run: 2, input: ['p'] });
    const missing = workflow('missing', 1)
      .collect('c', { signal: 's', maxItems: 1 })
      .continueAsNew('again', { carry: 'input.nothing' })
      .build();
    const h2 = createHarness(missing).start({ a: 1 });
    h2.signal('s', 'p');
    expect(h2.snapshot.input).toBeNull();
    expect(JSON.parse(JSON.stringify(h2.snapshot))).toEqual(h2.snapshot);
  });

  it('a zombie result for an earlier execution with the same attempt number is ignored', () => {
    const wf = documentEntity({ batchesPerRun: 2, maxItems: 1 });
    const h = createHarness(wf, { id: 'z' }).start({ doc: 'd' });
    h.signal('event', 'a');
    const first = h.dispatched('process')[0]!;
    h.now = first.deadline; // attempt 1 is lost; the tick re-dispatches attempt 2
    h.send({ type: 'tick' });
    expect(h.dispatched('process')[0]).toMatchObject({ attempt: 2, idempotencyKey: 'z/1/process/1' });
    processBatch(h);
    h.signal('event', 'b');
    expect(h.dispatched('process')[0]).toMatchObject({ attempt: 1, idempotencyKey: 'z/1/process/2' });
    // The zombie of iteration 1 reports attempt 1 under its own key: stale, same object.
    const before = h.snapshot;
    const zombie = {
      type: 'task.completed',
      at: h.now,
      step: 'process',
      attempt: 1,
      key: first.idempotencyKey,
    } as const;
    expect(step(wf, before, { ...zombie, output: { iteration: 1, count: 1 } })).toBe(before);
    expect(step(wf, before, { ...zombie, type: 'task.failed', error: { message: 'late' } } as never)).toBe(
      before,
    );
    processBatch(h); // the real result of iteration 2 → continue as new
    h.signal('event', 'c');
    expect(h.dispatched('process')[0]).toMatchObject({ attempt: 1, idempotencyKey: 'z/2/process/1' });
    const s = h.snapshot;
    expect(step(wf, s, { ...zombie, key: 'z/1/process/2', output: null })).toBe(s);
    expect(h.complete('process', { iteration: 1 })).toBe(true);
  });

  it('the transition log stays bounded (limits.log, default 16) across loops and runs', () => {
    for (const [log, bound] of [
      [undefined, 16],
      [50, 50],
      [10, 10],
      [0, 0],
    ] as const) {
      const wf = documentEntity({ batchesPerRun: 3, maxItems: 2, ...(log === undefined ? {} : { log }) });
      const h = createHarness(wf).start({ doc: 'd' });
      let max = 0;
      for (let i = 0; i < 200; i++) {
        h.signal('event', i);
        if (h.dispatched('process').length) processBatch(h);
        max = Math.max(max, h.snapshot.log.length);
      }
      expect(h.snapshot.run).toBe(34);
      expect(max).toBe(bound);
      if (bound) expect(h.snapshot.log.at(-1)?.v).toBe(h.snapshot.version);
    }
  });
});

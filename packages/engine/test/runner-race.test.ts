import {
  createMemoryStore,
  createRunner,
  type Handler,
  type Runner,
  type Snapshot,
  type Store,
  VersionConflictError,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
// The worker's side of a runner is internal: tests reach it as the worker does, in the built package.
import { runnerPort } from '../dist/runner/port.js';
import { type BatchInput, documentEntity } from './entity-fixtures.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A store that pauses between handing out a snapshot and letting the caller go on, so two runners
 * that load at the same time both step the same version and race to save it. Counts conflicts.
 */
function racyStore(inner: Store, loadDelayMs = 5) {
  const stats = { conflicts: 0, saves: 0 };
  const store: Store = {
    ...inner,
    async load(id) {
      const s = await inner.load(id);
      await sleep(loadDelayMs);
      return s;
    },
    async save(s: Snapshot, expected: number) {
      try {
        await inner.save(s, expected);
        stats.saves++;
      } catch (e) {
        if (e instanceof VersionConflictError) stats.conflicts++;
        throw e;
      }
    },
  };
  return { store, stats };
}

/** Two runners over one store sharing a fake clock; both run the entity's batch handler. */
function twoRunners(store: Store, clock: () => number, processed: unknown[][]) {
  const processBatch: Handler<BatchInput> = ({ input, iteration }) => {
    processed.push(input.events);
    return { iteration, count: input.events.length };
  };
  const wf = documentEntity({ batchesPerRun: 3 });
  const make = () =>
    createRunner({ store, workflows: [wf], handlers: { processBatch }, clock, conflictRetries: 50 });
  return [make(), make()] as const;
}

describe('two runners race on one instance', () => {
  it('signal vs tick with real concurrency: one write wins, the other reloads and re-applies; each signal applied once', async () => {
    let now = 1_700_000_000_000;
    const { store, stats } = racyStore(createMemoryStore());
    const processed: unknown[][] = [];
    const [a, b] = twoRunners(store, () => now, processed);
    await a.start('document', 'doc-r', { doc: 'doc-r' });
    const sent: number[] = [];
    const send = (r: Runner, n: number) => {
      sent.push(n);
      return r.signal('doc-r', 'event', { n }, { signalId: `sig-${n}` });
    };
    let n = 0;
    for (let round = 0; round < 12; round++) {
      await send(a, n++); // opens a batch: its idle timer is due 10 s later
      now += 10_000;
      // The idle timer is due: one runner ticks while the other delivers the next signal.
      const [x, y] = round % 2 ? [a, b] : [b, a];
      await Promise.all([send(x, n++), y.tick('doc-r', now), send(y, n++)]);
      await Promise.all([a.idle(), b.idle()]);
      now += 1;
    }
    now += 10_000;
    await a.tick('doc-r', now);
    await Promise.all([a.idle(), b.idle()]);

    const s = (await a.get('doc-r'))!;
    const seen = processed.flat().map((p) => (p as { n: number }).n);
    console.log(
      `runner race: ${stats.conflicts} version conflicts, ${stats.saves} saves, ${sent.length} signals`,
    );
    expect(stats.conflicts).toBeGreaterThan(5); // the races really happened
    expect(seen.sort((p, q) => p - q)).toEqual(sent.sort((p, q) => p - q)); // each exactly once
    for (const batch of processed) expect(batch.length).toBeLessThanOrEqual(8);
    expect(s.inbox).toEqual([]);
    expect(s.steps.gather?.batch?.items).toEqual([]);
    expect(s.run).toBeGreaterThan(1);
    // Every accepted event is one version: the versions written are exactly the saves plus the create.
    expect(s.version).toBe(stats.saves + 1);
  });

  it('a redelivered signal raced through both runners is applied once', async () => {
    let now = 1_000;
    const { store, stats } = racyStore(createMemoryStore());
    const processed: unknown[][] = [];
    const [a, b] = twoRunners(store, () => now, processed);
    await a.start('document', 'doc-d', { doc: 'doc-d' });
    for (let i = 0; i < 10; i++) {
      await Promise.all([
        a.signal('doc-d', 'event', { n: i }, { signalId: `s-${i}` }),
        b.signal('doc-d', 'event', { n: i }, { signalId: `s-${i}` }),
      ]);
    }
    now += 10_000;
    await b.tick('doc-d', now);
    await Promise.all([a.idle(), b.idle()]);
    expect(stats.conflicts).toBeGreaterThan(0);
    expect(processed.flat()).toEqual(Array.from({ length: 10 }, (_, n) => ({ n })));
  });
});

describe('signalWithStart and id reuse', () => {
  it('concurrent signalWithStart from two runners creates one instance; the other signals it', async () => {
    const inner = createMemoryStore();
    const { store, stats } = racyStore(inner);
    const processed: unknown[][] = [];
    const [a, b] = twoRunners(store, () => 5_000, processed);
    const startIfMissing = { workflow: 'document' as const, input: { doc: 'doc-s' } };
    await Promise.all([
      a.signal('doc-s', 'event', 'from-a', { signalId: 'a-1', startIfMissing }),
      b.signal('doc-s', 'event', 'from-b', { signalId: 'b-1', startIfMissing }),
    ]);
    const page = await inner.list({ limit: 10 });
    expect(page.items.map((s) => s.id)).toEqual(['doc-s']);
    const s = page.items[0]!;
    expect(s.run).toBe(1);
    expect(s.version).toBe(3); // start + signal in the create, then the other signal
    expect(s.steps.gather?.batch?.items.sort()).toEqual(['from-a', 'from-b']);
    expect(s.seenSignals.sort()).toEqual(['a-1', 'b-1']);
    expect(stats.saves).toBe(1);
    // The same delivery through both runners at once: still one instance, one signal.
    await Promise.all([
      a.signal('doc-t', 'event', 'x', { signalId: 'x-1', startIfMissing }),
      b.signal('doc-t', 'event', 'x', { signalId: 'x-1', startIfMissing }),
    ]);
    const t = (await inner.load('doc-t'))!;
    expect(t.steps.gather?.batch?.items).toEqual(['x']);
    expect(t.version).toBe(2);
  });

  it('start of an existing id is ALREADY_EXISTS; reuseFinished restarts a finished one and refuses a running one', async () => {
    const once = workflow('once', 1).wait('go', { signal: 'go' }).task('work', { handler: 'work' }).build();
    const store = createMemoryStore();
    const calls: string[] = [];
    const r = createRunner({
      store,
      workflows: [once],
      handlers: {
        work: ({ idempotencyKey, workflowInput }) => {
          calls.push(idempotencyKey);
          return workflowInput;
        },
      },
      clock: () => 100,
    });
    const first = await r.start('once', 'job-1', { n: 1 });
    expect(first.status).toBe('waiting');
    await expect(r.start('once', 'job-1', { n: 2 })).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
      name: 'AlreadyExistsError',
    });
    // reuseFinished on a running instance: still ALREADY_EXISTS, nothing written
    await expect(r.start('once', 'job-1', { n: 2 }, { reuseFinished: true })).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
    });
    expect(await r.get('job-1')).toEqual(first);
    const done = await r.signal('job-1', 'go', null, { signalId: 'go-1' });
    expect(done).toMatchObject({ status: 'completed', output: { n: 1 } });
    await expect(r.start('once', 'job-1', { n: 2 })).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
    const again = await r.start('once', 'job-1', { n: 2 }, { reuseFinished: true });
    expect(again).toMatchObject({ status: 'waiting', input: { n: 2 }, run: 1, inbox: [], seenSignals: [] });
    expect(again.version).toBe(done.version + 1); // the lock counter never goes back
    // The old run's signal id does not block the new instance; its task keys are the same shape.
    const second = await r.signal('job-1', 'go', null, { signalId: 'go-1' });
    expect(second).toMatchObject({ status: 'completed', output: { n: 2 } });
    expect(calls).toEqual(['job-1/1/work/1', 'job-1/1/work/1']);
    // reuseFinished for an id that does not exist is a plain start.
    expect((await r.start('once', 'job-2', {}, { reuseFinished: true })).version).toBe(1);
  });

  it('signalWithStart with reuseFinished restarts a finished instance with the signal; without it the signal is ignored', async () => {
    const once = workflow('once', 1).wait('go', { signal: 'go' }).task('work', { handler: 'work' }).build();
    const store = createMemoryStore();
    const r = createRunner({
      store,
      workflows: [once],
      handlers: { work: ({ workflowInput }) => workflowInput },
      clock: () => 100,
    });
    const first = await r.signal('job-9', 'go', null, {
      signalId: 'g-1',
      startIfMissing: { workflow: 'once', input: { n: 1 } },
    });
    expect(first).toMatchObject({ status: 'completed', output: { n: 1 } });
    const ignored = await r.signal('job-9', 'go', null, {
      signalId: 'g-2',
      startIfMissing: { workflow: 'once', input: { n: 2 } },
    });
    expect(ignored).toEqual(first); // finished, and reuse not asked for: nothing written
    const again = await r.signal('job-9', 'go', null, {
      signalId: 'g-3',
      startIfMissing: { workflow: 'once', input: { n: 3 }, reuseFinished: true },
    });
    expect(again).toMatchObject({ status: 'completed', output: { n: 3 } });
    expect(again.version).toBeGreaterThan(first.version);
    // A running instance is never restarted: the signal goes to it.
    await r.start('once', 'job-10', { n: 4 });
    const running = await r.signal('job-10', 'go', null, {
      startIfMissing: { workflow: 'once', input: { n: 5 }, reuseFinished: true },
    });
    expect(running).toMatchObject({ status: 'completed', output: { n: 4 } });
  });

  it('two runners reusing the same finished id at once: one wins, the other gets ALREADY_EXISTS', async () => {
    const once = workflow('quick', 1).succeed('done').build();
    const { store } = racyStore(createMemoryStore());
    const mk = () => createRunner({ store, workflows: [once], handlers: {}, clock: () => 1 });
    const [a, b] = [mk(), mk()];
    expect((await a.start('quick', 'q-1')).status).toBe('completed');
    const results = await Promise.allSettled([
      a.start('quick', 'q-1', { by: 'a' }, { reuseFinished: true }),
      b.start('quick', 'q-1', { by: 'b' }, { reuseFinished: true }),
    ]);
    const ok = results.filter((r) => r.status === 'fulfilled');
    const failed = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    expect(ok).toHaveLength(1);
    expect(failed.map((f) => (f.reason as { code: string }).code)).toEqual(['ALREADY_EXISTS']);
  });

  it("a tick from a loaded snapshot that loses the race: 'fail' throws VERSION_CONFLICT with no reload; the default reloads once and writes nothing", async () => {
    const inner = createMemoryStore();
    let loads = 0;
    const store: Store = Object.assign(Object.create(inner) as Store, {
      load: (id: string) => {
        loads++;
        return inner.load(id);
      },
    });
    const one = workflow('one', 1).task('work', { handler: 'work' }).build();
    const runner = () => createRunner({ store, workflows: [one], handlers: { work: () => null } });
    const api = createRunner({ store, workflows: [one], handlers: { work: () => null }, execute: false });
    const queued = await api.start('one', 'race-1');
    expect(queued.tasks.work?.queued).toBe(true);
    const now = queued.updatedAt + 1;
    // The winner takes the task from the snapshot it was handed.
    const won = await runnerPort(runner()).tick({ id: 'race-1', now, loaded: queued });
    expect(won.written).toBe(true);
    loads = 0;
    const lost = runnerPort(runner()).tick({ id: 'race-1', now, loaded: queued, onConflict: 'fail' });
    await expect(lost).rejects.toMatchObject({ code: 'VERSION_CONFLICT' });
    expect(loads).toBe(0);
    const again = await runnerPort(runner()).tick({ id: 'race-1', now, loaded: queued });
    expect(again.written).toBe(false);
    expect(again.snapshot).toEqual(await inner.load('race-1'));
    // One reload after the conflict; the answer is that snapshot, not a second load.
    expect(loads).toBe(1);
  });
});

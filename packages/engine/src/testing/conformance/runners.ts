import { expect, it } from 'vitest';
import { workflow } from '../../definition/builder.js';
import { type } from '../../definition/declared-schemas.js';
import { isStepfoldError } from '../../errors.js';
import type { Handler } from '../../runner/handler-types.js';
import { createRunner } from '../../runner/runner.js';
import type { Snapshot } from '../../snapshot.js';
import type { SaveOptions, Store } from '../../store/store.js';
import type { SuiteContext } from './context.js';

// A long-lived entity: batches of up to 8 signals or 10 s of quiet, then continue-as-new every 3.
const entity = workflow('conformance-entity', 1, { limits: { inbox: 1000 } })
  .signal('event', type<{ n: number }>())
  .collect('gather', { signal: 'event', maxItems: 8, idleMs: 10_000 })
  .task('process', { handler: 'processBatch', input: { events: 'outputs.gather' } })
  .choice('more', {
    branches: [{ when: { '<': [{ var: 'outputs.process.iteration' }, 3] }, next: 'gather' }],
    otherwise: 'restart',
  })
  .continueAsNew('restart', {})
  .build();

/** Counts saves and conflicts, and widens the load-to-save window so two runners really overlap. */
function observed(inner: Store) {
  const stats = { saves: 0, conflicts: 0 };
  const store: Store = {
    ...inner,
    maxSnapshotBytes: inner.maxSnapshotBytes,
    async load(id) {
      const s = await inner.load(id);
      await new Promise((r) => setTimeout(r, 2));
      return s;
    },
    async save(s: Snapshot, expected: number, o?: SaveOptions) {
      try {
        await inner.save(s, expected, o);
        stats.saves++;
      } catch (e) {
        if (isStepfoldError(e, 'VERSION_CONFLICT')) stats.conflicts++;
        throw e;
      }
    },
  };
  return { store, stats };
}

/** Two runners race signals against timer ticks on one instance. */
export function describeRunners({ fresh }: SuiteContext): void {
  it('two runners race signal vs tick; conflicts re-applied, every signal processed once', async () => {
    const { store, stats } = observed(await fresh());
    let now = 1_700_000_000_000;
    const processed: number[][] = [];
    const processBatch: Handler<{ events: Array<{ n: number }> }> = ({ input, iteration }) => {
      processed.push(input.events.map((e) => e.n));
      return { iteration };
    };
    const make = () =>
      createRunner({
        store,
        workflows: [entity],
        handlers: { processBatch },
        clock: () => now,
        conflictRetries: 50,
      });
    const [a, b] = [make(), make()];
    await a.start('conformance-entity', 'entity-1', {});
    const sent: number[] = [];
    const send = (r: typeof a, n: number) => {
      sent.push(n);
      return r.signal('entity-1', 'event', { n }, { signalId: `sig-${n}` });
    };
    let n = 0;
    for (let round = 0; round < 10; round++) {
      await send(a, n++);
      now += 10_000; // the batch's idle timer is due: one runner ticks while the other signals
      const [x, y] = round % 2 ? [a, b] : [b, a];
      await Promise.all([send(x, n++), y.tick('entity-1', now), send(y, n++), send(x, n - 1)]);
      await Promise.all([a.idle(), b.idle()]);
      now += 1;
    }
    now += 10_000;
    await a.tick('entity-1', now);
    await Promise.all([a.idle(), b.idle()]);

    const final = (await store.load('entity-1')) as Snapshot;
    expect(stats.conflicts).toBeGreaterThan(0); // the race really happened
    expect(processed.flat().sort((p, q) => p - q)).toEqual([...new Set(sent)].sort((p, q) => p - q));
    for (const batch of processed) expect(batch.length).toBeLessThanOrEqual(8);
    expect(final.inbox).toEqual([]);
    expect(final.run).toBeGreaterThan(1);
    expect(final.version).toBe(stats.saves + 1); // one stored version per accepted event
  });

  it('two runners signalWithStart one new id at once: one instance, both signals applied', async () => {
    const { store } = observed(await fresh());
    const make = () =>
      createRunner({ store, workflows: [entity], handlers: { processBatch: () => ({}) }, clock: () => 5 });
    const [a, b] = [make(), make()];
    const startIfMissing = { workflow: 'conformance-entity' as const, input: {} };
    await Promise.all([
      a.signal('entity-2', 'event', { n: 1 }, { signalId: 'a-1', startIfMissing }),
      b.signal('entity-2', 'event', { n: 2 }, { signalId: 'b-1', startIfMissing }),
    ]);
    const page = await store.list({ limit: 10 });
    expect(page.items.map((s) => s.id)).toEqual(['entity-2']);
    const s = page.items[0] as Snapshot;
    const items = (s.steps['gather']?.batch?.items ?? []) as Array<{ n: number }>;
    expect(items.map((i) => i.n).sort()).toEqual([1, 2]);
    expect(s.version).toBe(3);
  });
}

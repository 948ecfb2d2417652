import { createMemoryStore, createRunner, createWorker, type HandlerContext } from '@stepfold/engine';
import { compareAsync, measureAsync } from '../measure.js';
import { type Group, rateRow } from '../row.js';
import { LINEAR_STEPS, linear10, noop } from '../workflows.js';

/**
 * Whole 10-step workflows through `createRunner` + `createMemoryStore` (start → ten handler runs,
 * each result a load-free step + conditional save), one at a time, against a loop that calls the
 * same no-op handler ten times with a context of the same shape. Informational: it prices what
 * the engine adds around a handler (reducer, JSON round trips in the store, dispatch bookkeeping).
 */
export const runnerMemory: Group = {
  name: 'runner-memory',
  async run() {
    const store = createMemoryStore();
    const runner = createRunner({ store, workflows: [linear10], handlers: { noop } });
    const ours = await measureAsync(
      async (i) => {
        const id = `wf-${i}`;
        const s = await runner.start('bench-linear', id, { orderId: i });
        if (s.status !== 'completed') throw new Error(`expected completed, got ${s.status}`);
        await store.delete(id); // keep the store small; a Map delete
      },
      { warmupMs: 1500, sampleMs: 500, samples: 9 },
    );

    const controller = new AbortController();
    const direct = await measureAsync(
      async (i) => {
        const input = { orderId: i };
        const outputs: Record<string, unknown> = {};
        for (const step of LINEAR_STEPS) {
          const ctx = {
            input,
            workflowInput: input,
            outputs,
            instanceId: `wf-${i}`,
            step,
            phase: 'run',
            attempt: 1,
            iteration: 1,
            idempotencyKey: `wf-${i}/1/${step}/1`,
            signal: controller.signal,
          } as HandlerContext;
          outputs[step] = await noop(ctx as HandlerContext<never>);
        }
      },
      { warmupMs: 500, sampleMs: 300, samples: 7 },
    );
    // Wide: 64 workflows in flight through a worker's pool, so every handler result comes back
    // long after the reducer's ring of recent snapshots has moved on; the runner vouches for the
    // snapshots it wrote, so none is checked again. Against the same runner one at a time.
    const WIDE = 64;
    const wideStore = createMemoryStore();
    const wideRunner = createRunner({ store: wideStore, workflows: [linear10], handlers: { noop } });
    const worker = createWorker({ runner: wideRunner, concurrency: WIDE, wakes: false });
    await worker.start();
    const one = async (i: number, tag: string) => {
      const id = `${tag}-${i}`;
      const s = await wideRunner.start('bench-linear', id, { orderId: i });
      if (s.status !== 'completed') throw new Error(`expected completed, got ${s.status}`);
      await wideStore.delete(id);
    };
    const [wide, narrow] = await compareAsync(
      (i) => one(i, 'wide'),
      (i) => one(i, 'narrow'),
      { warmupMs: 1000, sampleMs: 500, samples: 7, concurrency: 1 },
    ).then(async ([, n]) => {
      // compareAsync runs contenders with one call in flight; the wide side needs its own loop.
      const w = await measureAsync(
        async (i) => {
          await Promise.all(Array.from({ length: WIDE }, (_, k) => one(i * WIDE + k, 'wide')));
        },
        { warmupMs: 1000, sampleMs: 500, samples: 7 },
      );
      return [{ ...w, hz: w.hz * WIDE }, n] as const;
    });
    await worker.stop();
    return [
      rateRow('runner-memory-wide', wide.hz, narrow.hz, 'workflows/s', 0.8, {
        note: `${WIDE} workflows in flight through createWorker (concurrency ${WIDE}) vs the same runner one workflow at a time: snapshots stay trusted however many instances are in flight`,
        details: {
          wideSamples: wide.samples.map((x) => Math.round(x * WIDE)),
          narrowSamples: narrow.samples.map(Math.round),
        },
      }),
      rateRow('runner-memory', ours.hz, direct.hz, 'workflows/s', null, {
        note: 'informational (no goal): createRunner + createMemoryStore, one workflow at a time, vs calling the 10 no-op handlers in a plain loop',
        details: {
          oursSamples: ours.samples.map(Math.round),
          baselineSamples: direct.samples.map(Math.round),
          oursPerWorkflowUs: 1e6 / ours.hz,
          baselinePerWorkflowUs: 1e6 / direct.hz,
        },
      }),
    ];
  },
};

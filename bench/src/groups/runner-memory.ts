import { createMemoryStore, createRunner, type HandlerContext } from '@stepfold/engine';
import { measureAsync } from '../measure.js';
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
    return [
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

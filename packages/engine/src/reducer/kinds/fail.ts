import type { StepOf } from '../../definition/schema.js';
import { failStep, pivotPassed } from '../compensation.js';
import type { StepRules } from './step-rules.js';

/** fail: fails the step with its error; rolled back unless a pivot passed or the workflow fails at once. */
export const fail: StepRules<StepOf<'fail'> & { id: string }> = {
  enter(cx, def) {
    failStep(
      cx,
      def.id,
      {
        message: def.error?.message ?? `workflow failed at step ${def.id}`,
        code: def.error?.code ?? 'FAILED',
        retryable: false,
      },
      // An explicit failure is final: after a pivot it ends the workflow without rollback.
      pivotPassed(cx) || cx.wf.definition.onFailure === 'fail' ? 'fail' : 'compensate',
    );
  },
};

import { evaluateCondition } from '../../definition/condition.js';
import type { StepOf } from '../../definition/schema.js';
import { failStep } from '../compensation.js';
import { dataView, finish } from '../transition-context.js';
import type { StepRules } from './step-rules.js';

/** choice: completes at once and enters the first branch whose condition holds, else `otherwise`. */
export const choice: StepRules<StepOf<'choice'> & { id: string }> = {
  enter(cx, def, flow) {
    const data = dataView(cx.s);
    const target = def.branches.find((b) => evaluateCondition(b.when, data))?.next ?? def.otherwise;
    if (target === undefined) {
      failStep(cx, def.id, {
        message: 'no choice branch matched',
        code: 'NO_BRANCH_MATCHED',
        retryable: false,
      });
      return;
    }
    finish(cx, def.id, 'completed');
    flow.enter(cx, target);
  },
};

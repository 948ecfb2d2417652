import type { StepOf } from '../../definition/schema.js';
import { SAVEPOINT } from '../compensation.js';
import { pushCompleted } from '../transition-context.js';
import type { StepRules } from './step-rules.js';

/** savepoint: passes at once, leaving a marker in the completion order where a failure's rollback stops. */
export const savepoint: StepRules<StepOf<'savepoint'> & { id: string }> = {
  enter(cx, def, flow) {
    pushCompleted(cx, `${SAVEPOINT}${def.id}`);
    flow.complete(cx, def.id);
  },
};

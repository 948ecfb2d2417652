import { readPath } from '../../definition/data-path.js';
import type { StepOf } from '../../definition/schema.js';
import { failStep } from '../compensation.js';
import { addTimer, dataView } from '../transition-context.js';
import type { StepRules } from './step-rules.js';

/** sleep: sets a durable timer (`ms` from now, or `until` a time in the data); completes when it fires. */
export const sleep: StepRules<StepOf<'sleep'> & { id: string }> = {
  enter(cx, def) {
    const until = def.ms !== undefined ? cx.at + def.ms : readPath(dataView(cx.s), def.until!);
    if (typeof until !== 'number' || !Number.isFinite(until)) {
      failStep(cx, def.id, {
        message: `sleep target ${def.until} is not a number`,
        code: 'INVALID_SLEEP_TARGET',
        retryable: false,
      });
      return;
    }
    addTimer(cx, { kind: 'sleep', step: def.id, at: Math.max(0, Math.trunc(until)) });
  },
  timer: (cx, def, _timer, flow) => flow.complete(cx, def.id),
};

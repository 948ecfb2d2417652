import { mapData } from '../../definition/data-path.js';
import type { StepOf } from '../../definition/schema.js';
import { dataView, finish } from '../transition-context.js';
import type { StepRules } from './step-rules.js';

/** succeed: ends its path with the mapped output (the workflow's output at top level). */
export const succeed: StepRules<StepOf<'succeed'> & { id: string }> = {
  enter(cx, def, flow) {
    const output = def.output === undefined ? undefined : mapData(dataView(cx.s), def.output);
    finish(cx, def.id, 'completed', output);
    flow.endPath(cx, def.id, output);
  },
};

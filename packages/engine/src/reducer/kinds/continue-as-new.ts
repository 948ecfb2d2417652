import { mapData } from '../../definition/data-path.js';
import type { StepOf } from '../../definition/schema.js';
import { dataView, log } from '../transition-context.js';
import type { StepRules } from './step-rules.js';

/** continueAsNew: ends this run and starts the next on the same instance, keeping buffered signals. */
export const continueAsNew: StepRules<StepOf<'continueAsNew'> & { id: string }> = {
  enter(cx, def, flow) {
    const carried = def.carry === undefined ? cx.s.input : mapData(dataView(cx.s), def.carry);
    const s = cx.s;
    s.run += 1;
    s.input = carried === undefined ? null : carried; // as a start without input
    s.steps = {};
    s.active = [];
    s.completed = [];
    s.tasks = {};
    s.timers = [];
    log(cx, 'workflow.continued-as-new', undefined, { detail: `run ${s.run}` });
    flow.enter(cx, cx.wf.definition.start);
  },
};

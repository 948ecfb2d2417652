import type { StepKind } from '../../definition/schema.js';
import type { CompositionKind, KindRules } from '../kind-table.js';
import { choice } from './choice.js';
import { collect } from './collect.js';
import { continueAsNew } from './continue-as-new.js';
import { fail } from './fail.js';
import { human } from './human.js';
import { parallel } from './parallel.js';
import { savepoint } from './savepoint.js';
import { sleep } from './sleep.js';
import { succeed } from './succeed.js';
import { task } from './task.js';
import { wait } from './wait.js';

/**
 * The reducer's rules for every core step kind, keyed by kind: one row per kind. Keyed by the
 * definition's {@link StepKind} less the composition kinds (whose rows the composition entry
 * registers, typed the same way), so a kind added to the definition's list fails to compile until
 * it has its row here or there.
 */
export const REDUCER_KINDS: KindRules<Exclude<StepKind, CompositionKind>> = {
  task,
  choice,
  parallel,
  wait,
  human,
  sleep,
  collect,
  savepoint,
  continueAsNew,
  succeed,
  fail,
};

import type { StepDefinition, StepKind, StepOf } from '../../definition/schema.js';
import { child } from './child.js';
import { choice } from './choice.js';
import { collect } from './collect.js';
import { continueAsNew } from './continue-as-new.js';
import { fail } from './fail.js';
import { human } from './human.js';
import { map } from './map.js';
import { parallel } from './parallel.js';
import { savepoint } from './savepoint.js';
import { sleep } from './sleep.js';
import type { StepRules } from './step-rules.js';
import { succeed } from './succeed.js';
import { task } from './task.js';
import { wait } from './wait.js';

/**
 * The reducer's rules for every step kind, keyed by kind: one row per kind. Keyed by the
 * definition's {@link StepKind}, so a kind added to the definition's list fails to compile until it
 * has its row here.
 */
export const REDUCER_KINDS: { readonly [K in StepKind]: StepRules<StepOf<K> & { id: string }> } = {
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
  child,
  map,
};

/** The rules of a step's kind. */
export function rulesOf(def: StepDefinition & { id: string }): StepRules<StepDefinition & { id: string }> {
  return REDUCER_KINDS[def.kind] as StepRules<StepDefinition & { id: string }>;
}

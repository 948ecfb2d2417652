import type { DefinitionKind } from '../kind.js';
import type { StepDefinition, StepKind, StepOf } from '../schema.js';
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

/** Every step kind's definition module, keyed by kind: one row per kind. */
export const DEFINITION_KINDS: { readonly [K in StepKind]: DefinitionKind<K, StepOf<K>> } = {
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

/** The definition module of a step's kind. */
export function kindOf(step: StepDefinition): DefinitionKind<string, StepDefinition> {
  return DEFINITION_KINDS[step.kind] as unknown as DefinitionKind<string, StepDefinition>;
}

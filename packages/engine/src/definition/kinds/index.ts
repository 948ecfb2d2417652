import type * as z from '../../mini-schema.js';
import { type DefinitionKind, kindTable, stepUnion } from '../kind.js';
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
import { succeed } from './succeed.js';
import { task } from './task.js';
import { wait } from './wait.js';

/**
 * Every step kind: the one list. The step schema, the kind names and the table below come from it,
 * and the reducer's and the diagram's tables are keyed by the {@link StepKind} it yields, so the
 * compiler makes them handle each kind listed here.
 */
export const KINDS = [
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
] as const;

/** One step of a definition, discriminated by `kind` (each kind's schema lives in `kinds/<kind>.ts`). */
export const stepSchema = stepUnion(KINDS);

/** Every step kind's definition module, keyed by kind, in the order of {@link KINDS}. */
export const DEFINITION_KINDS = kindTable(KINDS);

/** A step as written in a definition. */
export type StepDefinition = z.infer<typeof stepSchema>;
/** Step kinds. */
export type StepKind = StepDefinition['kind'];
/** A step of the given kind. */
export type StepOf<K extends StepKind> = Extract<StepDefinition, { kind: K }>;

/** The definition module of a step's kind. */
export function kindOf(step: StepDefinition): DefinitionKind<string, StepDefinition> {
  return DEFINITION_KINDS[step.kind] as unknown as DefinitionKind<string, StepDefinition>;
}

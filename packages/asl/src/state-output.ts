import type { Tolerance } from './map-tolerance.js';
import type { AslScope } from './plan.js';

// The output every generated step writes, and how a state finds its input among them: the
// highest-numbered output in its scope, or the scope's entry (the execution's input, a Parallel's
// own step for a branch, the iteration's input for a Map iteration).

/** An ASL error carried in an output (a branch or iteration that ended failed). */
export interface CarriedError {
  error: string | null;
  cause: string | null;
  /** `States.Runtime` and the like: no Retry or Catch applies, the execution fails. */
  fatal?: boolean | undefined;
}

/** What a generated step writes as its output. */
export interface StateOutput {
  /** One past the highest `seq` the step saw: the latest output in a scope is the current one. */
  seq: number;
  /** The state's name. */
  state: string;
  /** The state's type (`Task`, `Map`, ...), for histories read from the snapshot. */
  type?: string | undefined;
  /** A Task state's resource as written (which Lambda events its history shows). */
  resource?: string | undefined;
  /** The state's output (for a Map's or Parallel's first step: the input its items or branches get). */
  value?: unknown;
  /** The variables after the state. */
  vars: Record<string, unknown>;
  /** Where the choice step after it goes: `next`, `retry`, `catch:<i>`, `rule:<i>`, `default`, `error`. */
  route?: string | undefined;
  /** Epoch ms a Wait or a retry waits until. */
  until?: number | undefined;
  error?: CarriedError | undefined;
  /** The error a Catch took (route `catch:<i>`), for the history. */
  caught?: CarriedError | undefined;
  /** Set with `route: 'retry'`: the raw input the next attempt takes, and each retrier's count. */
  retry?: { input: unknown; counts: number[]; attempts: number } | undefined;
  /** A Map's or Parallel's first step: the raw input its second step applies ResultPath to. */
  input?: unknown;
  /** A Map's first step: each iteration's input. */
  items?: unknown[] | undefined;
  /** A Map's first step: the failed iterations it tolerates, when it declares a tolerance. */
  tolerated?: Tolerance | undefined;
  /** Variables the state assigned (for the history). */
  assigned?: Record<string, unknown> | undefined;
}

/** A Map iteration's workflow input: the item's input, the variables and the context it inherits. */
export interface IterationInput {
  $aslIteration: {
    value: unknown;
    vars: Record<string, unknown>;
    context: Record<string, unknown>;
    index: number;
    /** The Map state's name. */
    map: string;
  };
}

/** Whether an output was written by a generated step. */
export function isStateOutput(v: unknown): v is StateOutput {
  return v !== null && typeof v === 'object' && typeof (v as { seq?: unknown }).seq === 'number';
}

/** The iteration input, when the instance is a Map iteration. */
export function iterationOf(workflowInput: unknown): IterationInput['$aslIteration'] | undefined {
  if (workflowInput === null || typeof workflowInput !== 'object') return undefined;
  return (workflowInput as Partial<IterationInput>).$aslIteration;
}

/** The current value of a scope: the latest producer's output, else its entry. */
export interface Current {
  value: unknown;
  vars: Record<string, unknown>;
  /** The step whose output it is (undefined: the execution's or iteration's input). */
  from?: string | undefined;
  out?: StateOutput | undefined;
}

/** The highest `seq` among all outputs. */
export function highestSeq(outputs: Readonly<Record<string, unknown>>): number {
  let max = 0;
  for (const v of Object.values(outputs)) if (isStateOutput(v) && v.seq > max) max = v.seq;
  return max;
}

/** The current value of `scope` given the instance's outputs and input. */
export function currentOf(
  scope: AslScope,
  outputs: Readonly<Record<string, unknown>>,
  workflowInput: unknown,
): Current {
  let best: Current | undefined;
  let bestSeq = -1;
  const consider = (id: string) => {
    const o = outputs[id];
    if (isStateOutput(o) && o.seq > bestSeq) {
      bestSeq = o.seq;
      best = { value: o.value, vars: o.vars, from: id, out: o };
    }
  };
  for (const id of scope.producers) consider(id);
  if (scope.entry !== undefined) consider(scope.entry);
  if (best) return best;
  const it = iterationOf(workflowInput);
  if (it) return { value: it.value, vars: it.vars };
  return { value: workflowInput, vars: {} };
}

// The rules that decide whether a step's state can move to the new version. The static check asks
// them for every state a step could be in; a plan asks them for what an instance actually holds,
// so the two give the same reasons (the dry run groups instances by them: no instance values).

import type { CompiledWorkflow } from '../definition/compile.js';
import { kindOf } from '../definition/kinds/index.js';
import type { StepDefinition } from '../definition/schema.js';
import { CHILD_HANDLER, type TimerState } from '../snapshot.js';
import { type Migration, versionName } from './define.js';

type Step = StepDefinition & { id: string };

/** The handler a step's task runs in a phase (`$child` for a child workflow), if the step runs one. */
export function handlerOf(step: Step, phase: 'run' | 'compensate'): string | undefined {
  if (phase === 'compensate') return kindOf(step).compensator?.(step);
  if (step.kind === 'task') return step.handler;
  if (step.kind === 'map') return step.handler ?? CHILD_HANDLER;
  if (step.kind === 'child') return CHILD_HANDLER;
  return undefined;
}

/** The old and new definitions of a step the migration maps (`to` undefined: removed). */
interface Move {
  id: string;
  from: Step;
  toId: string | null;
  to: Step | undefined;
  v: string;
}

function moveOf(m: Migration, id: string): Move {
  const toId = m.steps[id] ?? null;
  return {
    id,
    from: m.from.definition.steps[id]!,
    toId,
    to: toId === null ? undefined : m.to.definition.steps[toId],
    v: versionName(m.to),
  };
}

/** Its enclosing branches, named in the new version's ids (`?` for a parallel step the new version removed). */
function regionKey(wf: CompiledWorkflow, id: string, rename?: (id: string) => string | null): string {
  return (wf.regions.get(id) ?? [])
    .map((r) => `${rename ? (rename(r.parallel) ?? '?') : r.parallel}#${r.branch}`)
    .join('/');
}

/** Why an instance whose cursor is on step `id` (running, waiting, sleeping, parked) cannot move. */
export function activeReasons(m: Migration, id: string): string[] {
  const { from, to, toId, v } = moveOf(m, id);
  if (!to || toId === null) return [`step "${id}" (active) has no place in ${v}`];
  const out: string[] = [];
  if (to.kind !== from.kind) {
    out.push(`step "${id}" (active) is a ${from.kind} step, ${v}'s "${toId}" a ${to.kind} step`);
    return out;
  }
  if (regionKey(m.from, id, (p) => m.steps[p] ?? null) !== regionKey(m.to, toId))
    out.push(`step "${id}" (active) sits in another parallel branch in ${v}`);
  const listens = kindOf(from).listensFor?.(from);
  const listensTo = kindOf(to).listensFor?.(to);
  if (listens !== listensTo)
    out.push(`step "${id}" (waiting) listens for "${listens}", ${v}'s "${toId}" for "${listensTo}"`);
  if (from.kind === 'parallel' && to.kind === 'parallel' && from.branches.length !== to.branches.length)
    out.push(
      `parallel step "${id}" has ${from.branches.length} branches, ${v}'s "${toId}" ${to.branches.length}`,
    );
  if (from.kind === 'child' && to.kind === 'child' && from.workflow !== to.workflow)
    out.push(`child step "${id}" starts ${from.workflow}, ${v}'s "${toId}" ${to.workflow}`);
  if (from.kind === 'map' && to.kind === 'map') {
    if (from.items !== to.items)
      out.push(`map step "${id}" maps over ${from.items}, ${v}'s "${toId}" over ${to.items}`);
    if ((from.workflow ?? null) !== (to.workflow ?? null))
      out.push(`map step "${id}" runs its items differently in ${v}`);
  }
  return out;
}

/** Why an instance with a task of step `id` in flight (either phase, detached too) cannot move. */
export function taskReasons(
  m: Migration,
  id: string,
  phase: 'run' | 'compensate',
  handler: string,
): string[] {
  const { to, toId, v } = moveOf(m, id);
  const what = phase === 'run' ? 'task' : 'compensation';
  if (!to || toId === null) return [`${what} in flight in step "${id}", which ${v} removed`];
  // Its result comes back under the old id and key: nothing would match it after a rename.
  if (toId !== id) return [`${what} in flight in step "${id}"; migrate once it has reported`];
  const next = handlerOf(to, phase);
  if (next !== handler)
    return [`${what} in flight in step "${id}" runs ${handler}, ${v} runs ${next ?? 'nothing'} there`];
  return [];
}

/** Why an instance with a timer of step `id` cannot move. */
export function timerReasons(m: Migration, id: string, timer: Pick<TimerState, 'kind' | 'phase'>): string[] {
  const { to, toId, v } = moveOf(m, id);
  if (!to || toId === null) return [`${timer.kind} timer in step "${id}", which ${v} removed`];
  if (timer.kind === 'timeout' && !('timeoutMs' in to && to.timeoutMs !== undefined))
    return [`timeout timer in step "${id}", ${v}'s "${toId}" has no timeout`];
  if (
    (timer.kind === 'retry' || timer.kind === 'throttle') &&
    handlerOf(to, timer.phase ?? 'run') === undefined
  )
    return [`${timer.kind} timer in step "${id}", ${v}'s "${toId}" has nothing to retry`];
  if ((timer.kind === 'idle' || timer.kind === 'max-wait') && to.kind !== 'collect')
    return [`${timer.kind} timer in step "${id}", ${v}'s "${toId}" is no collect step`];
  if (timer.kind === 'sleep' && to.kind !== 'sleep')
    return [`sleep timer in step "${id}", ${v}'s "${toId}" is no sleep step`];
  return [];
}

/** Why an instance in which step `id` has completed (and could be rolled back) cannot move. */
export function completedReasons(m: Migration, id: string): string[] {
  const { from, to, v } = moveOf(m, id);
  if (to) return [];
  if (kindOf(from).compensator?.(from) !== undefined)
    return [`completed step "${id}" has a compensation; ${v} removed it, so a rollback would skip it`];
  if (from.kind === 'savepoint') return [`savepoint "${id}" was passed; ${v} removed it`];
  return [];
}

/** Why an instance rolling back with step `id` still to compensate cannot move. */
export function rollbackReasons(m: Migration, id: string): string[] {
  const { to, toId, v } = moveOf(m, id);
  if (!to || toId === null) return [`step "${id}" (to compensate) has no place in ${v}`];
  if (handlerOf(to, 'compensate') === undefined)
    return [`step "${id}" (to compensate) has no compensation in ${v}`];
  return [];
}

/** The timers a step of this kind may hold, as the static check enumerates them. */
export function possibleTimers(step: Step): Array<Pick<TimerState, 'kind' | 'phase'>> {
  const out: Array<Pick<TimerState, 'kind' | 'phase'>> = [];
  const run = handlerOf(step, 'run');
  if (run !== undefined && run !== CHILD_HANDLER) out.push({ kind: 'retry', phase: 'run' });
  if (handlerOf(step, 'compensate') !== undefined && handlerOf(step, 'compensate') !== CHILD_HANDLER)
    out.push({ kind: 'retry', phase: 'compensate' });
  if (step.kind === 'sleep') out.push({ kind: 'sleep' });
  if ((step.kind === 'wait' || step.kind === 'human') && step.timeoutMs !== undefined)
    out.push({ kind: 'timeout' });
  if (step.kind === 'collect') out.push({ kind: 'idle' }, { kind: 'max-wait' });
  return out;
}

/** Kinds whose cursor never outlasts the event that entered them: no instance sits in one. */
export const PASSING_KINDS: ReadonlySet<string> = new Set([
  'choice',
  'succeed',
  'fail',
  'savepoint',
  'continue-as-new',
]);

import { kindOf } from '../definition/kinds/index.js';
import type { SignalRecord } from '../snapshot.js';
import { failStep } from './compensation.js';
import { rulesOf } from './kinds/index.js';
import {
  type Cx,
  clearTimers,
  finish,
  log,
  spend,
  stepDef,
  stepState,
  terminate,
} from './transition-context.js';

// How cursors move, whatever the kind: entering a step, leaving it, ending a path, handing it a
// signal. What a step does at each point is its kind's rule (`kinds/<kind>.ts`).

/** Puts a cursor on a step, runs its kind's entry rule, and hands it any buffered signal it listens for. */
export function enter(cx: Cx, id: string): void {
  spend(cx);
  const def = stepDef(cx, id);
  const prev = cx.s.steps[id];
  cx.s.steps[id] = { status: 'active', iteration: (prev?.iteration ?? 0) + 1, attempt: 0, startedAt: cx.at };
  cx.s.active.push(id);
  log(cx, 'step.started', id);
  rulesOf(def).enter(cx, def);
  if (kindOf(def).listensFor) drainInbox(cx, id);
}

/** A step finished normally: follow `next`, or end the path it is on. */
export function advance(cx: Cx, id: string): void {
  const def = stepDef(cx, id);
  const next = 'next' in def ? def.next : undefined;
  if (next !== undefined) enter(cx, next);
  else endPath(cx, id, stepState(cx, id).output);
}

/** A step completes with `output` and the cursor moves on. */
export function complete(cx: Cx, id: string, output?: unknown): void {
  finish(cx, id, 'completed', output);
  advance(cx, id);
}

/** A path ran out of steps: the workflow completes, or the step that forked its branch hears of it. */
export function endPath(cx: Cx, id: string, output: unknown): void {
  const chain = cx.wf.regions.get(id) ?? [];
  const inner = chain[chain.length - 1];
  if (!inner) {
    cx.s.output = output;
    terminate(cx, 'completed');
    return;
  }
  const owner = stepDef(cx, inner.parallel);
  rulesOf(owner).branchEnded?.(cx, owner, inner.branch, output);
}

/** Hands buffered signals to a step that has just started listening. */
function drainInbox(cx: Cx, id: string): void {
  const def = stepDef(cx, id);
  const name = kindOf(def).listensFor?.(def);
  for (let i = 0; i < cx.s.inbox.length; ) {
    if (cx.s.steps[id]?.status !== 'active') return;
    const sig = cx.s.inbox[i]!;
    if (sig.name !== name) {
      i++;
      continue;
    }
    cx.s.inbox.splice(i, 1);
    deliverSignal(cx, id, sig);
  }
}

/** Delivers one signal to the active step listening for it. */
export function deliverSignal(cx: Cx, id: string, sig: SignalRecord): void {
  const def = stepDef(cx, id);
  log(cx, 'signal.received', id); // the name is the one the step listens for
  rulesOf(def).signal?.(cx, def, sig);
}

/** A waiting step's timeout fired: take `onTimeout`, or fail with `TIMEOUT`. */
export function timedOut(cx: Cx, id: string, onTimeout: string | undefined): void {
  log(cx, 'step.timed-out', id);
  if (onTimeout === undefined) {
    failStep(cx, id, { message: `timed out waiting at ${id}`, code: 'TIMEOUT', retryable: false });
    return;
  }
  finish(cx, id, 'completed', { timedOut: true });
  enter(cx, onTimeout);
}

/** A signal-driven step accepted `payload` and moves on. */
export function signalled(cx: Cx, id: string, payload: unknown): void {
  clearTimers(cx, id);
  complete(cx, id, payload ?? null);
}

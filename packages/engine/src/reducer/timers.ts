import { failStep } from './compensation.js';
import { advance, closeBatch, enter } from './flow.js';
import { attemptFailed } from './task-results.js';
import { type Cx, dispatchTask, finish, log, stepDef } from './transition-context.js';

// Timers and deadlines: what a `tick` fires, earliest first.

/** Something due: a timer (by index) or an in-flight task whose deadline passed. */
export type Due = { kind: 'timer'; index: number } | { kind: 'deadline'; key: string };

/** The earliest timer or task deadline (or only timers) due at the event time, or null. */
export function nextDue(cx: Cx, only?: 'timers'): Due | null {
  let best: Due | null = null;
  let bestAt = Number.POSITIVE_INFINITY;
  cx.s.timers.forEach((t, index) => {
    if (t.at <= cx.at && t.at < bestAt) {
      best = { kind: 'timer', index };
      bestAt = t.at;
    }
  });
  if (only === 'timers') return best;
  for (const [key, t] of Object.entries(cx.s.tasks)) {
    if (t.deadline <= cx.at && t.deadline < bestAt) {
      best = { kind: 'deadline', key };
      bestAt = t.deadline;
    }
  }
  return best;
}

/** Fires one due timer or deadline. */
export function fire(cx: Cx, due: Due): void {
  if (due.kind === 'deadline') {
    const task = cx.s.tasks[due.key]!;
    delete cx.s.tasks[due.key];
    attemptFailed(
      cx,
      task,
      { message: 'handler missed its deadline', code: 'TIMEOUT', retryable: true },
      true,
    );
    return;
  }
  const [timer] = cx.s.timers.splice(due.index, 1);
  const { step: id, kind } = timer!;
  log(cx, 'timer.fired', id, { detail: kind });
  const st = cx.s.steps[id]!;
  if (kind === 'retry') {
    const phase = timer!.phase ?? 'run';
    dispatchTask(cx, id, phase, (phase === 'run' ? st.attempt : (st.compensation?.attempt ?? 0)) + 1);
  } else if (kind === 'sleep') {
    finish(cx, id, 'completed');
    advance(cx, id);
  } else if (kind === 'idle' || kind === 'max-wait') {
    closeBatch(cx, id);
  } else timeout(cx, id);
}

/** A wait or human step timed out: take `onTimeout`, or fail. */
function timeout(cx: Cx, id: string): void {
  const def = stepDef(cx, id);
  const target = def.kind === 'wait' || def.kind === 'human' ? def.onTimeout : undefined;
  log(cx, 'step.timed-out', id);
  if (target === undefined) {
    failStep(cx, id, { message: `timed out waiting at ${id}`, code: 'TIMEOUT', retryable: false });
    return;
  }
  finish(cx, id, 'completed', { timedOut: true });
  enter(cx, target);
}

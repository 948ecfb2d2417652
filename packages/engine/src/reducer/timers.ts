import { rulesOf } from './kind-table.js';
import { taskDue } from './task-lease.js';
import { type Cx, log, stepDef, takeTask } from './transition-context.js';

// Timers and deadlines: what a `tick` fires, earliest first.

/** Something due: a timer (by index) or an in-flight task whose deadline passed or lease lapsed. */
export type Due = { kind: 'timer'; index: number } | { kind: 'deadline'; key: string };

/** The earliest timer or task deadline or lapsed lease (or only timers) due at the event time, or null. */
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
    // A writer that hands its tasks off cannot take a queued one either: it stays for a worker.
    if (t.queued && cx.handoff) continue;
    const due = taskDue(t);
    if (due <= cx.at && due < bestAt) {
      best = { kind: 'deadline', key };
      bestAt = due;
    }
  }
  return best;
}

/** Fires one due timer or deadline: the step's kind decides what it means. */
export function fire(cx: Cx, due: Due): void {
  if (due.kind === 'deadline') {
    const task = cx.s.tasks[due.key]!;
    if (task.queued) {
      takeTask(cx, due.key, task);
      return;
    }
    delete cx.s.tasks[due.key];
    const def = stepDef(cx, task.step);
    rulesOf(cx, def).lost?.(cx, def, task, cx.table.flow);
    return;
  }
  const [timer] = cx.s.timers.splice(due.index, 1);
  log(cx, 'timer.fired', timer!.step, { detail: timer!.kind });
  const def = stepDef(cx, timer!.step);
  // A throttle timer retries an attempt of flow limits (only their rules set one).
  (timer!.kind === 'throttle' ? cx.table.limits!.retry : rulesOf(cx, def).timer)?.(
    cx,
    def,
    timer!,
    cx.table.flow,
  );
}

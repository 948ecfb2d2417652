import { StepfoldError } from '../errors.js';
import { type EventOf, rejectEvent } from '../events.js';
import type { StepState, TaskState } from '../snapshot.js';
import type { Cx } from './kinds/step-rules.js';

// A handler's heartbeats. A task step with `heartbeatMs` hands its attempt's lease to its handler:
// each `ctx.heartbeat()` moves it on by `heartbeatMs` (the runner's own renewals stop once the
// handler runs), so a handler that hangs is lost within `heartbeatMs`, long before `timeoutMs`.
// Any handler may pass details (progress, a cursor); a task step keeps the latest in its state,
// and the next attempt of the same execution reads them as `ctx.heartbeatDetails`.

/** Largest heartbeat details, in bytes of UTF-8 JSON: they ride in every write of the snapshot. */
export const HEARTBEAT_DETAILS_MAX_BYTES = 2048;

/** What is wrong with `details` as heartbeat details (not JSON, or too large), else undefined. */
function detailsProblem(details: unknown): string | undefined {
  let text: string | undefined;
  try {
    text = JSON.stringify(details);
  } catch {}
  if (text === undefined) return 'heartbeat details must be JSON';
  const bytes = new TextEncoder().encode(text).length;
  return bytes > HEARTBEAT_DETAILS_MAX_BYTES
    ? `heartbeat details over ${HEARTBEAT_DETAILS_MAX_BYTES} bytes of JSON (${bytes})`
    : undefined;
}

/**
 * `details` as a heartbeat stores them: a JSON copy. Throws `HEARTBEAT_TOO_LARGE` over
 * {@link HEARTBEAT_DETAILS_MAX_BYTES} (keep a cursor there, not the data), and `INVALID_INPUT`
 * for what JSON cannot hold (a BigInt, a cycle), where the handler called `ctx.heartbeat`.
 */
export function heartbeatDetails(details: unknown): unknown {
  const problem = detailsProblem(details);
  if (problem)
    throw new StepfoldError(problem.includes('over') ? 'HEARTBEAT_TOO_LARGE' : 'INVALID_INPUT', problem);
  return JSON.parse(JSON.stringify(details));
}

/** Refuses (`INVALID_EVENT`, nothing written) a heartbeat whose details are not small JSON. */
export function checkDetails(ev: EventOf<'task.heartbeat'>): void {
  const problem = ev.details === undefined ? undefined : detailsProblem(ev.details);
  if (problem) rejectEvent(problem, 'details');
}

/**
 * Keeps a heartbeat's details with the state of the step `task` runs (a task step's run or
 * compensation; a map item's heartbeat only renews its lease: its items share one step state).
 */
export function keepDetails(cx: Cx, task: TaskState, details: unknown): void {
  const st = cx.s.steps[task.step];
  if (!st || task.item !== undefined || task.child !== undefined) return;
  if (task.phase === 'run') cx.s.steps[task.step] = { ...st, heartbeatDetails: details };
  else if (st.compensation)
    cx.s.steps[task.step] = { ...st, compensation: { ...st.compensation, heartbeatDetails: details } };
}

/** What the attempt `task` starts with: the details an earlier attempt of its execution last sent. */
export function detailsFor(
  steps: Readonly<Record<string, StepState>>,
  task: Pick<TaskState, 'step' | 'phase' | 'item'>,
): unknown {
  if (task.item !== undefined) return undefined;
  const st = steps[task.step];
  return task.phase === 'run' ? st?.heartbeatDetails : st?.compensation?.heartbeatDetails;
}

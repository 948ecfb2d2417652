import { failStep } from '../compensation.js';
import { addTimer, type Cx, clearTimers, finish, log } from '../transition-context.js';
import type { Flow } from './step-rules.js';

// What the kinds that wait for a signal with an optional timeout (wait, human) share.

/** A waiting step as these rules read it. */
interface Waiting {
  id: string;
  timeoutMs?: number | undefined;
  onTimeout?: string | undefined;
}

/** Entry: starts the step's timeout, if it has one. */
export function startTimeout(cx: Cx, def: Waiting): void {
  if (def.timeoutMs !== undefined) addTimer(cx, { kind: 'timeout', step: def.id, at: cx.at + def.timeoutMs });
}

/** Its only timer is the timeout: take `onTimeout`, or fail with `TIMEOUT`. */
export function timedOut(cx: Cx, def: Waiting, _timer: unknown, flow: Flow): void {
  log(cx, 'step.timed-out', def.id);
  if (def.onTimeout === undefined) {
    failStep(cx, def.id, { message: `timed out waiting at ${def.id}`, code: 'TIMEOUT', retryable: false });
    return;
  }
  finish(cx, def.id, 'completed', { timedOut: true });
  flow.enter(cx, def.onTimeout);
}

/** The step accepted `payload`: its timeout goes and it completes with the payload. */
export function signalled(cx: Cx, id: string, payload: unknown, flow: Flow): void {
  clearTimers(cx, id);
  flow.complete(cx, id, payload ?? null);
}

import type { WorkflowDefinition } from '../definition/schema.js';
import { ValidationError } from '../errors.js';
import type { Snapshot } from '../snapshot.js';

/** Options of `ctx.callback`. */
export interface CallbackOptions {
  /** The step to resume when several listen for the signal. */
  step?: string | undefined;
  /** How long the token is good for (default: the `callbackTokens` option's). */
  ttlMs?: number | undefined;
}

/** What a token says once checked, as the runner needs it to apply its signal. */
export interface CheckedCallback {
  instance: string;
  run: number;
  step: string;
  iteration: number;
  signal: string;
  nonce: string;
}

/**
 * The callback tokens a runner issues and checks (`callbackTokens(...)` from `@stepfold/engine`):
 * a port, so a runner without them carries none of their code.
 */
export interface CallbackPort {
  /** A token for the step of `definition` listening for `signal`, bound to `snapshot`'s instance. */
  issue(
    definition: WorkflowDefinition,
    snapshot: Snapshot,
    signal: string,
    options: CallbackOptions,
    now: number,
  ): Promise<string>;
  /** The claims of a token whose signature and expiry are good at `now`; throws otherwise. */
  verify(token: string, now: number): Promise<CheckedCallback>;
}

/** `INVALID_OPTIONS` for `what` (`ctx.callback`, `runner.callback`) asked of a runner without callback tokens; `hint` says where to get them. */
export function noCallbacks(
  what: string,
  hint = 'pass createRunner({ callbacks: callbackTokens({ keys }) })',
): ValidationError {
  return new ValidationError('INVALID_OPTIONS', `${what} needs callback tokens`, [
    { path: 'callbacks', message: hint },
  ]);
}

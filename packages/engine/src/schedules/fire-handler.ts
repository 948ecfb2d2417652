import { errorKind, isStepfoldError } from '../errors.js';
import type { Runner } from '../runner/types.js';
import { isTerminal } from '../snapshot.js';
import type { Store } from '../store/store.js';
import type { FireHandler } from './definition.js';
import { type FireIo, fire } from './fire.js';
import type { ScheduleSpec } from './spec.js';
import type { ScheduleCommand } from './state.js';

/**
 * The schedule's handler. `targets` is a hand-off runner (`execute: false`) over the target
 * workflows: a run it starts is written with its first tasks queued and announced, so whichever
 * worker takes them runs them, not necessarily the one that ran this fire.
 */
export function fireHandler(store: Store, targets: Runner, clock: () => number): FireHandler {
  return async (ctx) => {
    // The fire's time is when its step was entered (the tick that woke the timer, or the command's
    // write), read from the stored instance: a retry of this attempt decides with the same time
    // as the first, so a slot it started is never found too late and counted as skipped.
    const self = await store.load(ctx.instanceId);
    const now = self?.steps[ctx.step]?.startedAt ?? clock();
    const command = (ctx.outputs['command'] ?? ctx.outputs['idle']) as ScheduleCommand | undefined;
    return fire(ctx.instanceId, ctx.input, command, now, io(store, targets, ctx.input.spec, ctx.signal));
  };
}

function io(store: Store, targets: Runner, spec: ScheduleSpec, signal: AbortSignal): FireIo {
  return {
    async start(runId, schedule) {
      // Aborted (the schedule deleted, the deadline passed): start nothing more.
      signal.throwIfAborted();
      try {
        await targets.start(spec.workflow, runId, spec.input, {
          ...(spec.version === undefined ? {} : { version: spec.version }),
          wait: 'write',
          schedule,
        });
        return 'started';
      } catch (e) {
        if (isStepfoldError(e, 'ALREADY_EXISTS')) return 'existed';
        // The input no longer fits the target's schema: retrying cannot help, the slot is skipped.
        if (errorKind(e) === 'invalid') return { invalid: `${(e as Error).message}` };
        throw e;
      }
    },
    async running(runId) {
      const run = await store.load(runId);
      return run !== null && !isTerminal(run.status);
    },
  };
}

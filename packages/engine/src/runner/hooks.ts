import type { LogEntry, Snapshot } from '../snapshot.js';

/** Observers of what the runner writes. A hook that throws or rejects is reported, never fatal. */
export interface RunnerHooks {
  /** Every transition written, in order. */
  onTransition?(entry: LogEntry, snapshot: Snapshot): void | Promise<void>;
  onWorkflowStarted?(snapshot: Snapshot): void | Promise<void>;
  onWorkflowCompleted?(snapshot: Snapshot): void | Promise<void>;
  /** Failed, cancelled or aborted. */
  onWorkflowFailed?(snapshot: Snapshot): void | Promise<void>;
  onStepStarted?(step: string, snapshot: Snapshot): void | Promise<void>;
  onStepCompleted?(step: string, snapshot: Snapshot): void | Promise<void>;
  onStepFailed?(step: string, snapshot: Snapshot): void | Promise<void>;
  /** A compensation was dispatched, completed or parked in dlq. */
  onCompensation?(entry: LogEntry, snapshot: Snapshot): void | Promise<void>;
  /** A hook failed; defaults to ignoring it. */
  onHookError?(error: unknown, hook: string): void;
}

/** The hook each transition type calls, and whether it is told the step (else the snapshot only). */
const HOOK_OF: Readonly<Record<string, readonly [keyof RunnerHooks, boolean]>> = {
  'workflow.started': ['onWorkflowStarted', false],
  'workflow.completed': ['onWorkflowCompleted', false],
  'workflow.failed': ['onWorkflowFailed', false],
  'workflow.cancelled': ['onWorkflowFailed', false],
  'workflow.aborted': ['onWorkflowFailed', false],
  'step.started': ['onStepStarted', true],
  'step.completed': ['onStepCompleted', true],
  'step.failed': ['onStepFailed', true],
  'step.dlq': ['onStepFailed', true],
};

/** Calls hook `name` with `args`, if given; what it throws or rejects with goes to `onHookError`. */
function call(hooks: RunnerHooks, name: keyof RunnerHooks, ...args: unknown[]): void {
  const hook = hooks[name] as ((...a: unknown[]) => unknown) | undefined;
  if (!hook) return;
  const report = (e: unknown) => {
    try {
      hooks.onHookError?.(e, name);
    } catch {
      // An error reporter that throws has nowhere left to report to.
    }
  };
  try {
    const r = hook.apply(hooks, args) as Promise<void> | undefined;
    if (r && typeof r.then === 'function') r.catch(report);
  } catch (e) {
    report(e);
  }
}

/** Calls the hooks for `entries`, the transitions a write recorded. */
function notifyHooks(hooks: RunnerHooks, snapshot: Snapshot, entries: readonly LogEntry[]): void {
  for (const entry of entries) {
    call(hooks, 'onTransition', entry, snapshot);
    const hook = Object.hasOwn(HOOK_OF, entry.type) ? HOOK_OF[entry.type] : undefined;
    if (hook) {
      if (hook[1]) call(hooks, hook[0], entry.step ?? '', snapshot);
      else call(hooks, hook[0], snapshot);
    } else if (entry.type.startsWith('compensation.')) call(hooks, 'onCompensation', entry, snapshot);
  }
}

/** {@link RunnerHooks} a runner can take (`createRunner({ hooks })`): what {@link defineHooks} returns. */
export interface DefinedHooks extends RunnerHooks {
  /** Calls the hooks for the transitions one write recorded (the runner does, after each write). */
  readonly notify: (snapshot: Snapshot, entries: readonly LogEntry[]) => void;
}

/**
 * Makes a runner's `hooks` option of your {@link RunnerHooks}, with the code that calls them for
 * each transition written: a runner without hooks ships none of it.
 *
 * @example
 * const hooks = defineHooks({ onStepFailed: (step, s) => console.warn(s.id, step, s.steps[step]?.error) });
 * const runner = createRunner({ store, workflows: [order], handlers, hooks });
 */
export function defineHooks(hooks: RunnerHooks): DefinedHooks {
  return { ...hooks, notify: (snapshot, entries) => notifyHooks(hooks, snapshot, entries) };
}

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

function safe(hooks: RunnerHooks, name: string, call: () => void | Promise<void>): void {
  const report = (e: unknown) => {
    try {
      hooks.onHookError?.(e, name);
    } catch {
      // An error reporter that throws has nowhere left to report to.
    }
  };
  try {
    const r = call();
    if (r && typeof (r as Promise<void>).then === 'function') (r as Promise<void>).catch(report);
  } catch (e) {
    report(e);
  }
}

/** Calls the hooks for `entries`, the transitions a write recorded. */
export function notifyHooks(
  hooks: RunnerHooks | undefined,
  snapshot: Snapshot,
  entries: readonly LogEntry[],
): void {
  if (!hooks) return;
  for (const entry of entries) {
    if (hooks.onTransition) safe(hooks, 'onTransition', () => hooks.onTransition!(entry, snapshot));
    const step = entry.step ?? '';
    switch (entry.type) {
      case 'workflow.started':
        if (hooks.onWorkflowStarted)
          safe(hooks, 'onWorkflowStarted', () => hooks.onWorkflowStarted!(snapshot));
        break;
      case 'workflow.completed':
        if (hooks.onWorkflowCompleted)
          safe(hooks, 'onWorkflowCompleted', () => hooks.onWorkflowCompleted!(snapshot));
        break;
      case 'workflow.failed':
      case 'workflow.cancelled':
      case 'workflow.aborted':
        if (hooks.onWorkflowFailed) safe(hooks, 'onWorkflowFailed', () => hooks.onWorkflowFailed!(snapshot));
        break;
      case 'step.started':
        if (hooks.onStepStarted) safe(hooks, 'onStepStarted', () => hooks.onStepStarted!(step, snapshot));
        break;
      case 'step.completed':
        if (hooks.onStepCompleted)
          safe(hooks, 'onStepCompleted', () => hooks.onStepCompleted!(step, snapshot));
        break;
      case 'step.failed':
      case 'step.dlq':
        if (hooks.onStepFailed) safe(hooks, 'onStepFailed', () => hooks.onStepFailed!(step, snapshot));
        break;
      default:
        if (entry.type.startsWith('compensation.') && hooks.onCompensation) {
          safe(hooks, 'onCompensation', () => hooks.onCompensation!(entry, snapshot));
        }
    }
  }
}

import {
  cancelRefusal,
  declaredSignals,
  isTerminal,
  type Snapshot,
  type WorkflowDefinition,
} from '@stepfold/engine';

/** What `show` says an instance can take now, from the engine's answers (never re-derived here). */
export interface InstanceActions {
  /** Whether `cancel` would be accepted; if not, the engine's code and reason. */
  cancel: { possible: true } | { possible: false; code: string; message: string };
  /** Whether `abort` would change anything (it stops any unfinished instance). */
  abort: { possible: boolean };
  /** Signals a step waits for now (others are buffered in the inbox until one does). */
  signals: { name: string; steps: string[]; decision: boolean; schema: boolean }[];
}

/** The actions an instance takes now under its definition. */
export function instanceActions(def: WorkflowDefinition, s: Snapshot): InstanceActions {
  const refusal = cancelRefusal(def, s);
  const finished = isTerminal(s.status);
  const signals = finished
    ? []
    : declaredSignals(def).flatMap((sig) => {
        const steps = sig.steps.filter((step) => s.active.includes(step));
        return steps.length
          ? [{ name: sig.name, steps, decision: sig.decision, schema: sig.schema !== undefined }]
          : [];
      });
  return {
    cancel: refusal ? { possible: false, code: refusal.code, message: refusal.message } : { possible: true },
    abort: { possible: !finished },
    signals,
  };
}

/** The actions for people: one line for cancel, one for the signals waited for. */
export function renderActions(a: InstanceActions): string[] {
  const cancel = a.cancel.possible
    ? '  cancel: possible (completed steps are compensated, then it ends cancelled)'
    : `  cancel: not possible (${a.cancel.code}): ${a.cancel.message}`;
  const signals = a.signals.map((sig) => {
    const what = sig.decision ? 'decision: stepfold approve/reject' : `waited for by ${sig.steps.join(', ')}`;
    return `${sig.name} (${what}${sig.schema ? ', payload schema declared' : ''})`;
  });
  return [
    'actions:',
    cancel,
    `  abort: ${a.abort.possible ? 'possible (ends aborted at once, nothing compensated)' : 'not possible (finished)'}`,
    `  signals taken now: ${signals.join('; ') || 'none'}`,
  ];
}

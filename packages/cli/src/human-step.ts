import type { Snapshot, WorkflowDefinition } from '@stepfold/engine';
import { decisionSignal, type PendingDecision, pendingDecisions } from '@stepfold/engine';
import { UsageError } from './exit-codes.js';

/** The definition a command needs for an instance, or a usage error naming what is missing. */
export function requireDefinitionOf(
  definition: WorkflowDefinition | undefined,
  snapshot: Snapshot,
): WorkflowDefinition {
  if (definition) return definition;
  throw new UsageError(
    `no definition of ${snapshot.workflow.name} v${snapshot.workflow.version} among --definitions`,
  );
}

/**
 * The human decision `approve`/`reject` sends, as the engine answers it: the named `human` step's
 * signal (`decisionSignal`), else the one decision the instance waits for (`pendingDecisions`).
 * A usage error when there is none or several, listing the candidates.
 */
export function decisionFor(
  definition: WorkflowDefinition | undefined,
  snapshot: Snapshot,
  step: string | undefined,
): PendingDecision {
  const def = requireDefinitionOf(definition, snapshot);
  if (step !== undefined) {
    const signal = decisionSignal(def, step);
    if (signal !== undefined) return { step, signal };
    const humans = Object.keys(def.steps).filter((id) => decisionSignal(def, id) !== undefined);
    throw new UsageError(
      `${def.name} has no human step ${JSON.stringify(step)} (human steps: ${humans.join(', ') || 'none'})`,
    );
  }
  const pending = pendingDecisions(def, snapshot);
  if (pending.length === 1) return pending[0]!;
  if (!pending.length) {
    throw new UsageError(
      `${snapshot.id} is ${snapshot.status} and waits at no human step (active: ${snapshot.active.join(', ') || 'none'}); name one with --step`,
    );
  }
  throw new UsageError(
    `${snapshot.id} waits at several human steps (${pending.map((p) => p.step).join(', ')}); choose one with --step`,
  );
}

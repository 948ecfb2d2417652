import type { Snapshot, WorkflowDefinition } from '@stepfold/engine';
import { UsageError } from './exit-codes.js';

/**
 * The signal name a human decision for this instance goes to: the named `human` step's (its
 * `signal`, else its id), or the one human step that is active now. A usage error when there is
 * none or several, listing the candidates.
 */
export function decisionSignal(
  definition: WorkflowDefinition | undefined,
  snapshot: Snapshot,
  step: string | undefined,
): { step: string; signal: string } {
  if (!definition) {
    throw new UsageError(
      `no definition of ${snapshot.workflow.name} v${snapshot.workflow.version} among --definitions`,
    );
  }
  const humans = Object.values(definition.steps).filter((s) => s.kind === 'human');
  const signalOf = (s: (typeof humans)[number]) => ({
    step: s.id,
    signal: s.kind === 'human' && s.signal !== undefined ? s.signal : s.id,
  });
  if (step !== undefined) {
    const found = humans.find((s) => s.id === step);
    if (!found) {
      throw new UsageError(
        `${definition.name} has no human step ${JSON.stringify(step)} (human steps: ${humans.map((s) => s.id).join(', ') || 'none'})`,
      );
    }
    return signalOf(found);
  }
  const active = humans.filter((s) => snapshot.active.includes(s.id));
  if (active.length === 1) return signalOf(active[0]!);
  if (!active.length) {
    throw new UsageError(
      `${snapshot.id} is ${snapshot.status} and waits at no human step (active: ${snapshot.active.join(', ') || 'none'}); name one with --step`,
    );
  }
  throw new UsageError(
    `${snapshot.id} waits at several human steps (${active.map((s) => s.id).join(', ')}); choose one with --step`,
  );
}

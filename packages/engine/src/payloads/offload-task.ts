import type { WorkflowDefinition } from '../definition/schema.js';
import { failureOf, ValidationError } from '../errors.js';
import { isPayloadRef } from '../payload-ref.js';
import type { RunTask, TaskResult } from '../runner/execute-task.js';
import type { PayloadPort } from '../runner/payload-port.js';
import type { Snapshot, TaskState } from '../snapshot.js';

/**
 * A runner's handler attempts with offloading around them: the attempt runs on a copy of the
 * snapshot whose input and step outputs are resolved (so `input`, `workflowInput` and `outputs` are
 * values), and a completed attempt's output is offloaded (with the step's `offload.keep`) before it
 * is written. A payload missing or corrupt (`PAYLOAD_NOT_FOUND`, not retryable), an unreachable
 * payload store (retryable) or a body over its limit (`PAYLOAD_TOO_LARGE`) fails the attempt with
 * that error, and the step's retry and failure policies decide, as for a handler's own error.
 */
export function offloadTask(port: PayloadPort, run: RunTask): RunTask {
  return async (r) => {
    let data: Snapshot;
    try {
      data = await port.resolveData(r.snapshot);
    } catch (e) {
      return failed(r.task, e);
    }
    const result = await run(data === r.snapshot ? r : { ...r, snapshot: data });
    if (result.outcome !== 'completed') return result;
    // The event carries the output (round-tripped and schema-checked); its time is filled in later.
    const output = (result.event(0) as { output?: unknown }).output;
    try {
      const stored = await port.offload(r.snapshot.id, output, keepOf(r.definition, r.task.step));
      if (stored === output) return result;
      return { ...result, event: (at) => ({ ...result.event(at), output: stored }) };
    } catch (e) {
      return failed(r.task, e);
    }
  };
}

/** A failed attempt of `task`: its result event records `e` as the handler's own error would be. */
function failed(task: TaskState, e: unknown): TaskResult {
  const error = failureOf(e);
  const fields = {
    step: task.step,
    attempt: task.attempt,
    phase: task.phase,
    key: task.idempotencyKey,
    ...(task.item === undefined ? {} : { item: task.item }),
  };
  return {
    outcome: 'failed',
    error,
    cause: e,
    event: (at) => ({ type: 'task.failed', at, ...fields, error }),
  };
}

/** The top-level output fields a step keeps inline (`offload.keep`); false: the step is never offloaded. */
function keepOf(definition: WorkflowDefinition, step: string): readonly string[] | false | undefined {
  const o = (definition.steps[step] as { offload?: { keep?: string[] } | false } | undefined)?.offload;
  return o === false ? false : o?.keep;
}

/** A requeue's input patch with each value over the threshold offloaded under `id`. */
export async function offloadPatch(
  port: PayloadPort,
  id: string,
  patch: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const entries = await Promise.all(
    Object.entries(patch).map(async ([k, v]) => [k, await port.offload(id, v)] as const),
  );
  // fromEntries defines own properties: a `__proto__` key stays data.
  return Object.fromEntries(entries);
}

/**
 * Refuses to patch an offloaded input: the reducer would merge the patch into the reference, never
 * having the value. Requeue without a patch, or start the instance anew.
 */
export async function checkPatch(current: Snapshot): Promise<void> {
  if (isPayloadRef(current.input))
    throw new ValidationError(
      'INVALID_INPUT',
      `the input of ${current.id} is offloaded: it cannot be patched`,
      [{ path: 'inputPatch', message: 'the instance input is a payload reference' }],
    );
}

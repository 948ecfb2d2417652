import type { Issue } from '../errors.js';
import type { StepDefinition } from './schema.js';
import { DEFAULT_TIMEOUT_MS } from './step-fields.js';

/**
 * A task step's `heartbeatMs` must be below its timeout (its own, the workflow's default, else
 * {@link DEFAULT_TIMEOUT_MS}): a heartbeat timeout that cannot come first would never fire.
 */
export function heartbeatIssues(
  step: StepDefinition,
  at: string,
  defaultTimeoutMs: number | undefined,
): Issue[] {
  if (step.kind !== 'task' || step.heartbeatMs === undefined) return [];
  const timeout = step.timeoutMs ?? defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (step.heartbeatMs < timeout) return [];
  return [
    {
      path: `${at}.heartbeatMs`,
      message: `must be below the step's timeout (${timeout} ms), got ${step.heartbeatMs}`,
    },
  ];
}

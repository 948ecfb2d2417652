import { ValidationError } from '../errors.js';
import type { WorkflowRegistry } from './registry.js';

/** An event for {@link Runner.publish}. */
export interface PublishedEvent {
  /** Its name, matched against the workflows' `on` (1-200 characters of A-Z a-z 0-9 _ . : @ / + = -). */
  name: string;
  /** Its id, unique per event: each matching workflow starts one run per id, however often it is published. */
  id: string;
  /** Its data: the input of each run it starts, and what their filters read as `input`. */
  data?: unknown;
}

/** A run an event started (or had started), by workflow: its id is `<workflow>:<event id>`. */
export interface TriggeredRun {
  workflow: string;
  version: number;
  id: string;
}

/** What {@link Runner.publish} did, per matching workflow. */
export interface PublishResult {
  /** Runs this call started. */
  started: TriggeredRun[];
  /** Runs an earlier publish of the same event id started: nothing written. */
  existed: TriggeredRun[];
  /** Workflows whose start refused the event's data (`INVALID_INPUT`, say), with the error: nothing written for them. */
  refused: Array<TriggeredRun & { error: Error }>;
}

/**
 * What `runner.publish` asks of the `eventTriggers` value: start a run of each matching workflow
 * with `start` (the runner's, at that version, with the call's options).
 */
export type PublishPort = (
  registry: WorkflowRegistry,
  start: (workflow: string, id: string, input: unknown, version: number) => Promise<unknown>,
  event: PublishedEvent,
) => Promise<PublishResult>;

/** `runner.publish` of a runner without `eventTriggers`: INVALID_OPTIONS naming the option. */
export function noTriggers(): ValidationError {
  return new ValidationError('INVALID_OPTIONS', 'runner.publish needs event triggers', [
    { path: 'kinds', message: 'pass createRunner({ kinds: [eventTriggers] }) to publish events' },
  ]);
}

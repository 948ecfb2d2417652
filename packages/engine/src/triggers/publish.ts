import { errorKind, isStepfoldError, ValidationError } from '../errors.js';
import { assertValidId } from '../ids.js';
import type { PublishedEvent, PublishResult } from '../runner/publish-port.js';
import type { WorkflowRegistry } from '../runner/registry.js';
import { triggered } from './match.js';

// `runner.publish`: an event starts a run of each workflow whose newest version names it in `on`
// and whose filter its data passes. The run's id is the workflow's name and the event's id, so the
// create is the dedupe: an event published again (a retry, a redelivery) starts nothing twice.

/** Starts a run of a workflow at a version (the runner's `start`, with the call's options). */
export type Start = (workflow: string, id: string, input: unknown, version: number) => Promise<unknown>;

/** The id of the run an event starts of `workflow`: `<workflow>:<event id>`. */
export function triggeredRunId(workflow: string, eventId: string): string {
  return `${workflow}:${eventId}`;
}

/** Publishes `event` to the newest version of every registered workflow (see `Runner.publish`). */
export async function publishEvent(
  registry: WorkflowRegistry,
  start: Start,
  event: PublishedEvent,
): Promise<PublishResult> {
  checkEvent(event);
  const result: PublishResult = { started: [], existed: [], refused: [] };
  const matching = registry
    .names()
    .map((name) => registry.resolve(name))
    .filter((def) => triggered(def.on, event.name, event.data));
  await Promise.all(
    matching.map(async (def) => {
      const id = triggeredRunId(def.name, event.id);
      const run = { workflow: def.name, version: def.version, id };
      try {
        assertValidId(id, 'instance id');
        await start(def.name, id, event.data, def.version);
        result.started.push(run);
      } catch (e) {
        if (isStepfoldError(e, 'ALREADY_EXISTS')) result.existed.push(run);
        // Its input does not fit this workflow (or the id is too long): the others still start.
        else if (errorKind(e) === 'invalid') result.refused.push({ ...run, error: e as Error });
        else throw e;
      }
    }),
  );
  return result;
}

/** An event's name and id are ids (INVALID_ID otherwise, nothing started). */
function checkEvent(event: PublishedEvent): void {
  if (typeof event !== 'object' || event === null)
    throw new ValidationError('INVALID_INPUT', 'invalid event', [{ path: '', message: 'must be an object' }]);
  assertValidId(event.name, 'event name');
  assertValidId(event.id, 'event id');
}

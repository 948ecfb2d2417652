import type { WorkflowDefinition } from '../definition/schema.js';
import { type Issue, ValidationError } from '../errors.js';
import type { RunnerKindSet } from '../runner/child-port.js';
import type { PublishPort } from '../runner/publish-port.js';
import { triggerIssues } from './match.js';
import { publishEvent } from './publish.js';

// `@stepfold/engine`: event triggers as a value. A definition's `on` parses anywhere; checking its
// filters and `runner.publish`, which matches events to workflows, come with this value.

/** The kind set of event triggers, as {@link eventTriggers} is typed: no step kind, `runner.publish`. */
export interface EventTriggers extends RunnerKindSet {
  readonly name: 'eventTriggers';
  readonly publish: PublishPort;
}

/** Every registered definition's filters, checked together: INVALID_DEFINITION naming each. */
function checkTriggers(byName: ReadonlyMap<string, ReadonlyMap<number, WorkflowDefinition>>): void {
  const issues: Issue[] = [];
  for (const versions of byName.values())
    for (const def of versions.values())
      for (const i of triggerIssues(def.on))
        issues.push({ ...i, path: `workflows.${def.name}@${def.version}.${i.path}` });
  if (issues.length) throw new ValidationError('INVALID_DEFINITION', 'invalid workflow definition', issues);
}

/**
 * Event triggers (a workflow's `on`, `runner.publish`), for the `kinds` option of `createRunner`:
 * the runner checks the registered workflows' filters and can publish events to them.
 *
 * @example
 * import { createRunner, eventTriggers } from '@stepfold/engine';
 * const runner = createRunner({ store, workflows: [fulfil], handlers, kinds: [eventTriggers] });
 * await runner.publish({ name: 'order.placed', id: 'evt-81', data: { orderId: 'o-7', total: 120 } });
 */
export const eventTriggers: EventTriggers = Object.freeze({
  name: 'eventTriggers',
  rules: {},
  publish: publishEvent,
  checkRegistered: checkTriggers,
});

import {
  createRunner,
  type Handler,
  NotFoundError,
  type Runner,
  type Snapshot,
  type WorkflowDefinition,
} from '@stepfold/engine';
import { definitionFor, handlerNames, loadDefinitions } from './definitions.js';
import { type ActingOptions, requireDefinitions } from './options.js';
import type { Output } from './output.js';
import { headline } from './snapshot-view.js';
import { type OpenedStore, storeUrlOf, withStore } from './store-url.js';

/**
 * Stub handlers for every name the definitions use: the runner insists on one per name, and with
 * `execute: false` it never calls them (tasks are queued for the user's workers instead).
 */
function stubHandlers(names: readonly string[]): Record<string, Handler> {
  const stubs: Record<string, Handler> = {};
  for (const name of names) {
    stubs[name] = () => {
      throw new Error(`stepfold CLI: handler ${name} called, but the CLI's runner only hands tasks off`);
    };
  }
  return stubs;
}

/** What an acting command works with. */
export interface HandOff {
  /** A runner with `execute: false`: events are written with their tasks queued for workers. */
  runner: Runner;
  /** The instance as stored before the command. */
  before: Snapshot;
  /** Its definition among `--definitions`, if there (the runner refuses the event otherwise). */
  definition: WorkflowDefinition | undefined;
  opened: OpenedStore;
}

/**
 * Opens the store, builds a hand-off runner (`execute: false`) over the definitions, loads the
 * instance (NOT_FOUND if missing) and runs `body`; closes everything afterwards.
 */
export async function withHandOffRunner<T>(
  options: ActingOptions,
  command: string,
  id: string,
  body: (handOff: HandOff) => Promise<T>,
): Promise<T> {
  const defs = loadDefinitions(requireDefinitions(options, command));
  const url = storeUrlOf(options.store);
  return withStore(url, async (opened) => {
    const runner = createRunner({
      store: opened.store,
      workflows: defs,
      handlers: stubHandlers(handlerNames(defs)),
      execute: false,
    });
    const before = await opened.store.load(id);
    if (!before) throw new NotFoundError(id);
    return body({ runner, before, definition: definitionFor(defs, before.workflow), opened });
  });
}

/** Prints what an acting command changed: the versions, the new status, and tasks left for workers. */
export function reportChange(out: Output, action: string, before: Snapshot, after: Snapshot): void {
  const queued = Object.values(after.tasks).filter((t) => t.queued);
  const data = {
    action,
    id: after.id,
    previousVersion: before.version,
    version: after.version,
    changed: after.version !== before.version,
    status: after.status,
    queued: queued.map((t) => ({ step: t.step, phase: t.phase, handler: t.handler, attempt: t.attempt })),
    snapshot: after,
  };
  out.result(data, () => {
    const lines = [
      after.version === before.version
        ? `${action}: nothing changed (the event did not apply); ${headline(after)}`
        : `${action}: v${before.version} -> v${after.version}; ${headline(after)}`,
    ];
    for (const t of queued) {
      lines.push(`  queued for a worker: ${t.step} (${t.phase}) ${t.handler} attempt ${t.attempt}`);
    }
    return lines;
  });
}

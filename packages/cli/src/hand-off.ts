import {
  createRunner,
  isTerminal,
  maskEncoded,
  NotFoundError,
  type Runner,
  type Snapshot,
  type WorkflowDefinition,
} from '@stepfold/engine';
import { definitionFor, loadDefinitions } from './definitions.js';
import { changeExitCode, UsageError } from './exit-codes.js';
import { CLI_KINDS } from './kinds.js';
import { type ActingOptions, requireDefinitions } from './options.js';
import type { Output } from './output.js';
import { headline } from './snapshot-view.js';
import { type OpenedStore, storeUrlOf, withStore } from './store-url.js';

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
 * Opens the store, builds a hand-off runner (`execute: false`, so no handlers) over the
 * definitions, loads the instance (NOT_FOUND if missing) and runs `body`; closes everything afterwards.
 */
export async function withHandOffRunner<T>(
  options: ActingOptions,
  command: string,
  id: string,
  body: (handOff: HandOff) => Promise<T>,
): Promise<T> {
  const defs = await loadDefinitions(requireDefinitions(options, command));
  const url = storeUrlOf(options.store);
  return withStore(url, async (opened) => {
    // The definitions as loaded: a built one is the module's own object, whose declared schemas
    // the runner finds by identity and checks signal payloads against.
    const runner = createRunner({ store: opened.store, workflows: defs, execute: false, kinds: CLI_KINDS });
    const before = await opened.store.load(id);
    if (!before) throw new NotFoundError(id);
    // Without the keys the reducer would read envelopes where the data is: refused, nothing written.
    if (!opened.codec && maskEncoded(before) !== before)
      throw new UsageError(
        `${id} holds encrypted data: pass --key-file (or set STEPFOLD_KEY_FILE) to ${command} it`,
      );
    return body({ runner, before, definition: definitionFor(defs, before.workflow), opened });
  });
}

/**
 * Prints what an acting command changed: the versions, the new status, and tasks left for workers.
 * When the event did not apply, says why (`unchanged`, else a generic sentence) and sets the exit
 * code to {@link EXIT.unchanged}.
 */
export function reportChange(
  out: Output,
  action: string,
  before: Snapshot,
  after: Snapshot,
  unchanged?: string,
): void {
  const changed = after.version !== before.version;
  const why = unchanged ?? whyUnchanged(after);
  const queued = Object.values(after.tasks).filter((t) => t.queued);
  const data = {
    action,
    id: after.id,
    previousVersion: before.version,
    version: after.version,
    changed,
    ...(changed ? {} : { unchanged: why }),
    status: after.status,
    queued: queued.map((t) => ({ step: t.step, phase: t.phase, handler: t.handler, attempt: t.attempt })),
    snapshot: after,
  };
  process.exitCode = changeExitCode(changed);
  out.result(data, () => {
    const lines = [
      changed
        ? `${action}: v${before.version} -> v${after.version}; ${headline(after)}`
        : `${action}: nothing changed (${why}); ${headline(after)}`,
    ];
    for (const t of queued) {
      lines.push(`  queued for a worker: ${t.step} (${t.phase}) ${t.handler} attempt ${t.attempt}`);
    }
    return lines;
  });
}

/** Why an event left the instance as it was, when the command has no more precise answer. */
function whyUnchanged(s: Snapshot): string {
  return isTerminal(s.status) ? `${s.id} has finished (${s.status})` : 'the event did not apply';
}

// A typed client is one workflow version's view of the runner: it starts exactly the version of
// the definition it was given, and every snapshot it answers with is of that version, since only
// then is the type it carries true. A call that meets an instance of another workflow or version
// is refused (WORKFLOW_MISMATCH) before anything is written.

import type { WorkflowDefinition } from '../definition/schema.js';
import { WorkflowMismatchError } from '../errors.js';
import type { Snapshot } from '../snapshot.js';
import type { WorkflowRegistry } from './registry.js';
import type { Runner, RunnerMessage, WorkflowClient } from './types.js';

/** The workflow version a client's calls expect the instance to run. */
export interface ExpectedWorkflow {
  name: string;
  version: number;
}

/** A message of a typed client: refused, unapplied, unless the instance runs `expect`. */
export type ClientMessage = RunnerMessage & { expect?: ExpectedWorkflow | undefined };

/** What a write checks against the snapshot it would apply to (see `WriteRequest.check`). */
type WriteCheck = (current: Snapshot, definition: WorkflowDefinition) => Promise<void>;

/** Throws WORKFLOW_MISMATCH unless `s` runs the expected workflow and version. */
function assertRuns(s: Snapshot, expected: ExpectedWorkflow): void {
  if (s.workflow.name !== expected.name || s.workflow.version !== expected.version)
    throw new WorkflowMismatchError(s.id, expected, s.workflow);
}

/**
 * `check` with the message's expectation first, when it has one: the write loop runs it on the
 * snapshot it would apply the event to, so a mismatch writes nothing and costs no extra read.
 */
export function expectedCheck(m: RunnerMessage, check?: WriteCheck | undefined): WriteCheck | undefined {
  const expected = (m as ClientMessage).expect;
  if (!expected) return check;
  return async (current, definition) => {
    assertRuns(current, expected);
    await check?.(current, definition);
  };
}

/** What a client needs of its runner: the runner, its registry, and its message handler. */
export interface ClientHost {
  runner: Runner;
  registry: WorkflowRegistry;
  handle(m: ClientMessage): Promise<Snapshot>;
}

/** The client of `definition`'s own version (UNKNOWN_VERSION if the runner does not register it). */
export function workflowClient<D>(definition: D, host: ClientHost): WorkflowClient<D> {
  const given = definition as unknown as ExpectedWorkflow;
  const { name, version } = host.registry.resolve(given.name, given.version);
  const expect: ExpectedWorkflow = { name, version };
  const { handle, runner } = host;
  // Every call but a start is refused, unapplied, unless the instance runs `expect`.
  const call = (m: RunnerMessage) => handle({ ...m, expect });
  const client: WorkflowClient<unknown> = {
    start: (id, input, o) => handle({ ...o, type: 'start', id, workflow: name, input, version }),
    signal: (id, signal, payload, o = {}) =>
      call({
        type: 'signal',
        id,
        name: signal,
        payload,
        signalId: o.signalId,
        startIfMissing: o.startIfMissing && { workflow: name, version, ...o.startIfMissing },
      }),
    // Written without reading the instance: the instance's own version checks the signal.
    send: (id, signal, data, o) => runner.send(id, signal as string, data, o),
    async get(id, o) {
      const s = await runner.get(id, o);
      if (s) assertRuns(s, expect);
      return s;
    },
    cancel: (id, reason) => call({ type: 'cancel', id, reason }),
    abort: (id, reason) => call({ type: 'abort', id, reason }),
    requeue: (id, o) => call({ ...o, type: 'requeue', id }),
  };
  return client as WorkflowClient<D>;
}
